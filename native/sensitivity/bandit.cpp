#include "sensitivity/bandit.hpp"

#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <string>

#include "common/errors.hpp"

namespace bw::sensitivity {

namespace {
constexpr std::uint64_t kMinBuffer = 32ull << 20;
constexpr int kBurst = 64;  // lines read between two looks at the clock and the stop flag

void* map_buffer(std::uint64_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw RunError("cannot allocate the bandit's " + std::to_string(bytes >> 20) + " MiB: " + std::strerror(errno));
  madvise(p, bytes, MADV_HUGEPAGE);  // fewer TLB misses; the lines keep their place in the page
  return p;
}

// One line of STREAM's triad, a = b + 3 c, stored past the caches (non-temporal) where the CPU can:
// 24 bytes an element to or from memory, as STREAM counts them.
inline void triad_line(double* a, const double* b, const double* c, std::uint64_t j) {
#if defined(__x86_64__)
  for (int k = 0; k < 8; k += 2)
    _mm_stream_pd(a + j + k, _mm_add_pd(_mm_load_pd(b + j + k), _mm_mul_pd(_mm_set1_pd(3.0), _mm_load_pd(c + j + k))));
#else
  for (int k = 0; k < 8; ++k) a[j + k] = b[j + k] + 3.0 * c[j + k];
#endif
}

void sleep_until(double t) {
  timespec ts{static_cast<time_t>(t), static_cast<long>((t - static_cast<double>(static_cast<time_t>(t))) * 1e9)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}
}  // namespace

struct alignas(128) Bandit::Slot {
  char* base = nullptr;
  std::uint64_t bytes = 0;
  std::uint64_t done = 0;  // bytes read in the current run
  std::uint64_t sink = 0;
};

std::uint64_t bandit_buffer_bytes(std::uint64_t llc_bytes, int threads) {
  std::uint64_t per = threads > 0 ? 4 * llc_bytes / static_cast<std::uint64_t>(threads) : 4 * llc_bytes;
  per = std::max(per, kMinBuffer);
  return (per + kPage - 1) / kPage * kPage;
}

std::uint64_t stride_bytes(Pattern p) { return p == Pattern::triad ? kLine : kPage; }

std::vector<std::uint64_t> bandit_lines(std::uint64_t buffer_bytes) {
  std::vector<std::uint64_t> out;
  const std::uint64_t step = stride_bytes(Pattern::strided);
  for (std::uint64_t i = 0; i < buffer_bytes / step; ++i) out.push_back(i * step);  // as the loop reads
  return out;
}

Pattern parse_pattern(const std::string& text) {
  if (text == "strided") return Pattern::strided;
  if (text == "triad") return Pattern::triad;
  if (text == "compute") return Pattern::compute;
  throw UsageError("unknown pattern '" + text + "' (use strided, triad or compute)");
}

const char* pattern_name(Pattern p) {
  return p == Pattern::triad ? "triad" : p == Pattern::compute ? "compute" : "strided";
}

double busy_seconds(double duty) { return std::clamp(duty, 0.0, 1.0) * kPeriodSeconds; }

double BanditSample::gbps() const {
  std::uint64_t total = 0;
  for (auto b : bytes) total += b;
  return seconds > 0 ? static_cast<double>(total) / seconds / 1e9 : 0.0;
}

Bandit::Bandit(const std::vector<int>& cpus, std::uint64_t buffer_bytes_per_thread, Pattern pattern)
    : cpus_(cpus), bytes_(buffer_bytes_per_thread / kPage * kPage), pattern_(pattern) {
  if (cpus_.empty()) throw UsageError("the bandit needs at least one CPU");
  if (bytes_ < kPage) throw UsageError("the bandit's buffer must hold at least one page");
  for (int cpu : cpus_) {
    workers_.push_back(std::make_unique<Worker>(cpu));
    slots_.push_back(std::make_unique<Slot>());
  }
  for (std::size_t i = 0; i < cpus_.size() && pattern_ != Pattern::compute; ++i) {  // first touch on its CPU
    Slot* s = slots_[i].get();
    s->bytes = bytes_;
    workers_[i]->launch([s] {
      s->base = static_cast<char*>(map_buffer(s->bytes));
      std::memset(s->base, 1, s->bytes);
    });
  }
  for (auto& w : workers_) w->wait();
}

Bandit::~Bandit() {
  if (running_) stop();
  for (auto& s : slots_)
    if (s->base) munmap(s->base, s->bytes);
}

void Bandit::start(double duty) {
  if (running_) throw UsageError("run: the bandit is running already (stop it first)");
  if (!(duty > 0 && duty <= 1)) throw UsageError("run: the dose must lie in (0, 1], not " + std::to_string(duty));
  duty_ = duty;
  go_.store(true);
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    Slot* s = slots_[i].get();
    s->done = 0;
    workers_[i]->launch([this, s, duty] {
      const bool triad = pattern_ == Pattern::triad;
      // strided: line 0 of every page; triad: the lines of a, b and c in order (a third of the buffer each)
      const std::uint64_t step = stride_bytes(pattern_);
      const std::uint64_t steps = triad ? s->bytes / 3 / step : s->bytes / step;
      auto* a = reinterpret_cast<double*>(s->base);
      const double* b = a + steps * kLine / sizeof(double);
      const double* c = b + steps * kLine / sizeof(double);
      const bool always = duty >= 1;
      const double busy = busy_seconds(duty);
      double period = now_s();
      std::uint64_t i = 0, sum = 0, lines = 0;
      double acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      while (go_.load(std::memory_order_relaxed)) {
        if (!always && now_s() - period >= busy) {
          period += kPeriodSeconds;
          sleep_until(period);
          double t = now_s();
          if (t - period > kPeriodSeconds) period = t;  // a late wake-up starts a new period
          continue;
        }
        if (pattern_ == Pattern::compute) {  // eight chains of multiply-adds in registers: no memory
          for (int k = 0; k < kBurst; ++k)
            for (double& x : acc) x = x * 0.999999 + 1e-7;
          continue;
        }
        if (triad) {
          for (int k = 0; k < kBurst; ++k) {
            triad_line(a, b, c, i * kLine / sizeof(double));
            i = i + 1 == steps ? 0 : i + 1;
          }
          lines += 3 * kBurst;
          continue;
        }
        for (int k = 0; k < kBurst; ++k) {
          sum += *reinterpret_cast<const volatile std::uint64_t*>(s->base + i * step);
          i = i + 1 == steps ? 0 : i + 1;
        }
        lines += kBurst;
      }
#if defined(__x86_64__)
      if (triad) _mm_sfence();
#endif
      for (double x : acc) sum += static_cast<std::uint64_t>(x);
      s->sink = sum;
      s->done = lines * kLine;
    });
  }
  t0_ = now_s();
  running_ = true;
}

BanditSample Bandit::stop() {
  if (!running_) throw UsageError("stop: the bandit is not running");
  go_.store(false);
  BanditSample out;
  out.seconds = now_s() - t0_;
  out.duty = duty_;
  for (std::size_t i = 0; i < cpus_.size(); ++i) {
    workers_[i]->wait();
    out.bytes.push_back(slots_[i]->done);
  }
  running_ = false;
  return out;
}

}  // namespace bw::sensitivity
