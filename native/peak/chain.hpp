// The FMA-throughput chains, written once for the widest vectors of the file that includes this
// header; each instruction-set variant (chain_avx512.cpp, chain_avx2.cpp, chain_generic.cpp)
// includes it once, compiled with its own target flags, and fills a Variant from it.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "peak/fma.hpp"

namespace bw::peak {
namespace {

#if defined(__AVX512F__)
constexpr bool kFma = true;
constexpr int kAccumulators = accumulators_for(32);
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
constexpr bool kFma = true;
constexpr int kAccumulators = accumulators_for(16);
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
constexpr bool kFma = false;  // SSE2: multiply + add, the same flops
constexpr int kAccumulators = accumulators_for(16);
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

double chain_dp(std::uint64_t iters) { return chain<VD>(iters); }
double chain_sp(std::uint64_t iters) { return chain<VS>(iters); }

// Compile-time constant: no code of a variant file may run before the CPU is known to have its
// instruction set.
constexpr int kVectorBits = 64 * VD::n;

}  // namespace
}  // namespace bw::peak
