#include "sensitivity/bandit.hpp"

#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <string>

#include "common/args.hpp"
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

// One line written with non-temporal stores: to memory without taking a place in any cache.
inline void write_line(char* p) {
#if defined(__x86_64__)
  const __m128i v = _mm_set1_epi64x(0x0101010101010101);
  for (int k = 0; k < 4; ++k) _mm_stream_si128(reinterpret_cast<__m128i*>(p) + k, v);
#else
  std::memset(p, 1, kLine);
#endif
}

void sleep_until(double t) {
  timespec ts{static_cast<time_t>(t), static_cast<long>((t - static_cast<double>(static_cast<time_t>(t))) * 1e9)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}
}  // namespace

// What one thread does in a burst, by pattern, and where it is in its buffer.
class Stream {
 public:
  Stream(Pattern p, char* base, std::uint64_t bytes) : p_(p), base_(base) {
    const std::uint64_t part = p == Pattern::triad ? bytes / 3 : p == Pattern::mixed ? bytes / 2 : bytes;
    steps_ = std::max<std::uint64_t>(part / stride_bytes(p), 1);
    writes_ = base ? base + part : nullptr;  // mixed: the second half is written, line after line
    write_lines_ = std::max<std::uint64_t>(part / kLine, 1);
  }

  // kBurst steps; the bytes they moved to or from memory.
  std::uint64_t burst() {
    switch (p_) {
      case Pattern::compute:  // eight chains of multiply-adds in registers: no memory
        for (int k = 0; k < kBurst; ++k)
          for (double& x : acc_) x = x * 0.999999 + 1e-7;
        return 0;
      case Pattern::write:  // whole lines stored past the caches, in order
        for (int k = 0; k < kBurst; ++k) write_line(base_ + next() * kLine);
        return kBurst * kLine;
      case Pattern::triad: {  // a = b + 3 c over the buffer's three thirds, line by line
        auto* a = reinterpret_cast<double*>(base_);
        const std::uint64_t n = steps_ * kLine / sizeof(double);
        for (int k = 0; k < kBurst; ++k) triad_line(a, a + n, a + 2 * n, next() * kLine / sizeof(double));
        return 3 * kBurst * kLine;
      }
      case Pattern::mixed:  // a line of a page read, and a whole line written past the caches
        for (int k = 0; k < kBurst; ++k) {
          const std::uint64_t j = next();
          sum_ += *reinterpret_cast<const volatile std::uint64_t*>(base_ + j * kPage);
          write_line(writes_ + w_ * kLine);
          w_ = w_ + 1 == write_lines_ ? 0 : w_ + 1;
        }
        return 2 * kBurst * kLine;
      case Pattern::strided: break;
    }
    for (int k = 0; k < kBurst; ++k) sum_ += *reinterpret_cast<const volatile std::uint64_t*>(base_ + next() * kPage);
    return kBurst * kLine;
  }

  // Fences the non-temporal stores; a value of what was read, so that no load is left out.
  std::uint64_t finish() {
#if defined(__x86_64__)
    _mm_sfence();
#endif
    for (double x : acc_) sum_ += static_cast<std::uint64_t>(x);
    return sum_;
  }

 private:
  std::uint64_t next() {
    const std::uint64_t j = i_;
    i_ = i_ + 1 == steps_ ? 0 : i_ + 1;
    return j;
  }
  Pattern p_;
  char* base_;
  char* writes_;
  std::uint64_t steps_ = 1, i_ = 0, sum_ = 0, write_lines_ = 1, w_ = 0;
  double acc_[8] = {1, 2, 3, 4, 5, 6, 7, 8};
};

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

std::uint64_t stride_bytes(Pattern p) { return p == Pattern::strided || p == Pattern::mixed ? kPage : kLine; }

std::vector<std::uint64_t> bandit_lines(std::uint64_t buffer_bytes) {
  std::vector<std::uint64_t> out;
  const std::uint64_t step = stride_bytes(Pattern::strided);
  for (std::uint64_t i = 0; i < buffer_bytes / step; ++i) out.push_back(i * step);  // as the loop reads
  return out;
}

const std::vector<PatternRow>& patterns() {
  static const std::vector<PatternRow> rows = {
      {"mixed", Pattern::mixed, true,
       "one line a page read and whole lines written past the caches, as programs do both"},
      {"strided", Pattern::strided, true, "one line a page, few cache sets"},
      {"write", Pattern::write, true, "whole lines written past the caches"},
      {"triad", Pattern::triad, false, "STREAM's triad, a co-runner of known bandwidth"},
      {"compute", Pattern::compute, false, "multiply-adds in registers, a co-runner that takes no memory"},
  };
  return rows;
}

Pattern parse_pattern(const std::string& text) { return find_word(patterns(), text, "pattern").pattern; }

const char* pattern_name(Pattern p) {
  for (const PatternRow& r : patterns())
    if (r.pattern == p) return r.name;
  return patterns().front().name;
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
  std::exception_ptr failed;  // every worker has ended before a failure is passed on
  for (auto& w : workers_) {
    try {
      w->wait();
    } catch (...) {
      failed = std::current_exception();
    }
  }
  if (failed) {
    for (auto& s : slots_)
      if (s->base) munmap(s->base, s->bytes);
    std::rethrow_exception(failed);
  }
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
      Stream st(pattern_, s->base, s->bytes);
      const bool always = duty >= 1;
      const double busy = busy_seconds(duty);
      double period = now_s();
      std::uint64_t bytes = 0;
      do {  // a burst at least, however soon the run is stopped
        if (!always && now_s() - period >= busy) {
          period += kPeriodSeconds;
          sleep_until(period);
          double t = now_s();
          if (t - period > kPeriodSeconds) period = t;  // a late wake-up starts a new period
          continue;
        }
        bytes += st.burst();
      } while (go_.load(std::memory_order_relaxed));
      s->sink = st.finish();
      s->done = bytes;
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
