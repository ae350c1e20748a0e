#include "sensitivity/pirate.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "common/errors.hpp"
#include "sensitivity/bandit.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace bw::sensitivity {

namespace {
constexpr double kAloneSeconds = 0.02;  // how long hold() times the lines alone
constexpr int kWarmPasses = 2;
constexpr std::uint64_t kSeed = 0x5eed;

// A line holds the address of its cycle's next line in its first word.
inline char* next(char* p) { return *reinterpret_cast<char**>(p); }

void flush(char* base, std::uint64_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  for (std::uint64_t off = 0; off < bytes; off += kLine) _mm_clflush(base + off);
  _mm_mfence();
#else
  (void)base;
  (void)bytes;
#endif
}
}  // namespace

std::vector<std::uint32_t> chain_order(std::uint32_t n, int chains, std::uint64_t seed) {
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
  std::vector<std::uint32_t> nxt(n);
  const std::uint32_t c = static_cast<std::uint32_t>(std::max(1, std::min<int>(chains, static_cast<int>(n))));
  // Cycle k holds perm[k], perm[k + c], perm[k + 2c], ...
  for (std::uint32_t k = 0; k < c; ++k) {
    std::uint32_t last = k;
    for (std::uint32_t i = k + c; i < n; i += c) last = i;
    for (std::uint32_t i = k; i < n; i += c) nxt[perm[i]] = perm[i == last ? k : i + c];
  }
  return nxt;
}

Pirate::Pirate(int cpu, std::uint64_t max_bytes) : worker_(cpu), max_(max_bytes / kLine * kLine) {
  if (max_ < kChains * kLine)
    throw UsageError("the pirate needs at least " + std::to_string(kChains * kLine) + " bytes");
  worker_.run([this] {
    void* p = mmap(nullptr, max_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw RunError("cannot allocate the pirate's " + std::to_string(max_ >> 20) + " MiB: " + std::strerror(errno));
    base_ = static_cast<char*>(p);
    madvise(p, max_, MADV_HUGEPAGE);  // fewer TLB misses in the random chase
    std::memset(base_, 0, max_);
  });
}

Pirate::~Pirate() {
  if (holding_) stop();
  if (base_) munmap(base_, max_);
}

void Pirate::build(std::uint64_t bytes, int chains) {
  const auto n = static_cast<std::uint32_t>(bytes / kLine);
  auto nxt = chain_order(n, chains, kSeed);
  for (std::uint32_t i = 0; i < n; ++i)
    *reinterpret_cast<char**>(base_ + std::uint64_t{i} * kLine) = base_ + std::uint64_t{nxt[i]} * kLine;
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(kSeed));
  for (int k = 0; k < kChains; ++k)
    starts_[k] = perm[static_cast<std::uint32_t>(k % std::max(1, std::min<int>(chains, static_cast<int>(n))))];
  bytes_ = std::uint64_t{n} * kLine;
}

PirateSample Pirate::chase(int chains, double min_seconds, bool until_stopped) {
  const std::uint64_t n = bytes_ / kLine;
  const std::uint64_t steps = std::max<std::uint64_t>(n / static_cast<std::uint64_t>(chains), 1);
  char* p[kChains];
  for (int k = 0; k < kChains; ++k) p[k] = base_ + std::uint64_t{starts_[k]} * kLine;
  PirateSample s;
  const double t0 = now_s();
  do {
    if (chains == 1) {
      for (std::uint64_t i = 0; i < steps; ++i) p[0] = next(p[0]);
    } else {
      for (std::uint64_t i = 0; i < steps; ++i) {
        p[0] = next(p[0]), p[1] = next(p[1]), p[2] = next(p[2]), p[3] = next(p[3]);
        p[4] = next(p[4]), p[5] = next(p[5]), p[6] = next(p[6]), p[7] = next(p[7]);
      }
    }
    s.accesses += steps * static_cast<std::uint64_t>(chains);
    s.seconds = now_s() - t0;
  } while (until_stopped ? go_.load(std::memory_order_relaxed) : s.seconds < min_seconds);
  std::uintptr_t keep = 0;
  for (auto* q : p) keep ^= reinterpret_cast<std::uintptr_t>(q);
  asm volatile("" : : "r"(keep));
  return s;
}

double Pirate::hold(std::uint64_t bytes) {
  if (holding_) stop();
  bytes = bytes / kLine * kLine;
  if (bytes < kChains * kLine || bytes > max_)
    throw UsageError("hold: the size must lie between " + std::to_string(kChains * kLine) + " and " +
                     std::to_string(max_) + " bytes");
  double alone = 0;
  worker_.run([&] {
    build(bytes, kChains);
    for (int i = 0; i < kWarmPasses; ++i) chase(kChains, 0, false);
    alone = chase(kChains, kAloneSeconds, false).ns_per_access();
  });
  go_.store(true);
  worker_.launch([this] { sample_ = chase(kChains, 0, true); });
  holding_ = true;
  return alone;
}

PirateSample Pirate::stop() {
  if (!holding_) throw UsageError("stop: the pirate holds nothing");
  go_.store(false);
  worker_.wait();
  holding_ = false;
  return sample_;
}

ProbeResult Pirate::probe(int cpu, std::uint64_t bytes) {
#if !(defined(__x86_64__) || defined(__i386__))
  throw UsageError("probe: flushing lines from the caches is done on x86 only");
#endif
  if (holding_) stop();
  bytes = std::min(bytes / kLine * kLine, max_);
  if (bytes < kChains * kLine) throw UsageError("probe: the size is too small");
  ProbeResult r;
  Worker other(cpu);
  worker_.run([&] {
    build(bytes, 1);
    for (int i = 0; i < kWarmPasses; ++i) chase(1, 0, false);
    auto s = chase(1, 0, false);
    r.own_ns = s.ns_per_access();
  });
  other.run([&] { r.shared_ns = chase(1, 0, false).ns_per_access(); });
  worker_.run([&] { flush(base_, bytes_); });
  other.run([&] { r.flushed_ns = chase(1, 0, false).ns_per_access(); });
  return r;
}

}  // namespace bw::sensitivity
