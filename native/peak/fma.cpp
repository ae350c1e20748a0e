#include "peak/fma.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace bw::peak {
namespace {

#if defined(__AVX512F__)
constexpr const char* kIsa = "avx512";
struct VD {
  using T = __m512d;
  using E = double;
  static constexpr int n = 8;
  static T set1(E x) { return _mm512_set1_pd(x); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_pd(a, b, c); }
  static E first(T v) { return _mm512_cvtsd_f64(v); }
};
struct VS {
  using T = __m512;
  using E = float;
  static constexpr int n = 16;
  static T set1(E x) { return _mm512_set1_ps(x); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static E first(T v) { return _mm512_cvtss_f32(v); }
};
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kIsa = "avx2";
struct VD {
  using T = __m256d;
  using E = double;
  static constexpr int n = 4;
  static T set1(E x) { return _mm256_set1_pd(x); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_pd(a, b, c); }
  static E first(T v) { return _mm256_cvtsd_f64(v); }
};
struct VS {
  using T = __m256;
  using E = float;
  static constexpr int n = 8;
  static T set1(E x) { return _mm256_set1_ps(x); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static E first(T v) { return _mm256_cvtss_f32(v); }
};
#else
constexpr const char* kIsa = "sse2 (no FMA: multiply + add)";
struct VD {
  using T = __m128d;
  using E = double;
  static constexpr int n = 2;
  static T set1(E x) { return _mm_set1_pd(x); }
  static T fma(T a, T b, T c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
  static E first(T v) { return _mm_cvtsd_f64(v); }
};
struct VS {
  using T = __m128;
  using E = float;
  static constexpr int n = 4;
  static T set1(E x) { return _mm_set1_ps(x); }
  static T fma(T a, T b, T c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static E first(T v) { return _mm_cvtss_f32(v); }
};
#endif

// acc = acc * m + c converges to c / (1 - m) = 1, so values stay finite however long it runs.
template <class V>
double chain(std::uint64_t iters) {
  typename V::T acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = V::set1(static_cast<typename V::E>(j) * typename V::E(0.01));
  const typename V::T m = V::set1(typename V::E(0.5)), c = V::set1(typename V::E(0.5));
  for (std::uint64_t i = 0; i < iters; ++i) {
    // Floating-point FMA chains cannot be reassociated, so the compiler keeps every one.
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = V::fma(acc[j], m, c);
  }
  double sum = 0;
  for (int j = 0; j < kAccumulators; ++j) sum += static_cast<double>(V::first(acc[j]));
  return sum;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int lanes(Precision p) { return p == Precision::Double ? VD::n : VS::n; }
double flops_per_iteration(Precision p) { return 2.0 * lanes(p) * kAccumulators; }
const char* isa() { return kIsa; }

double run_chain(Precision p, std::uint64_t iters) {
  return p == Precision::Double ? chain<VD>(iters) : chain<VS>(iters);
}

Measurement measure(Precision p, int nthreads, double target_s, int reps) {
  // Calibrate on the calling thread: grow the count until one run takes a tenth of the target.
  std::uint64_t iters = 1 << 12;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    volatile double sink = run_chain(p, iters);  // the result is used, so the call stays
    (void)sink;
    double s = seconds_since(t0);
    if (s > target_s / 10 || iters > (1ull << 40)) {
      iters = static_cast<std::uint64_t>(static_cast<double>(iters) * target_s / std::max(s, 1e-9));
      break;
    }
    iters *= 4;
  }
  iters = std::max<std::uint64_t>(iters, 1);
  Measurement best{0, 0, iters, true};
  for (int r = 0; r < reps; ++r) {
    std::vector<double> secs(static_cast<std::size_t>(nthreads));
    bool ok = true;
#pragma omp parallel num_threads(nthreads) reduction(&& : ok)
    {
#pragma omp barrier
      auto t0 = std::chrono::steady_clock::now();
      double sum = run_chain(p, iters);
      secs[static_cast<std::size_t>(omp_get_thread_num())] = seconds_since(t0);
      ok = std::isfinite(sum) && std::fabs(sum - kAccumulators) < 1e-3 * kAccumulators;
    }
    double slowest = *std::max_element(secs.begin(), secs.end());
    double gflops = flops_per_iteration(p) * static_cast<double>(iters) * nthreads / slowest / 1e9;
    best.checksum_ok = best.checksum_ok && ok;
    if (gflops > best.gflops) {
      best.gflops = gflops;
      best.seconds = slowest;
    }
  }
  return best;
}

}  // namespace bw::peak
