// The widest double-precision vector the translation unit is compiled for (AVX-512, AVX2+FMA, or
// SSE2), behind one small interface so each kernel is written once. stream() is the non-temporal
// store. Files built with different target flags (the kernels' instruction-set variants) see
// different vectors; each set lives in its own inline namespace, so that the linker never merges
// an AVX-512 function into code that must run without it.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#if defined(__AVX512F__)
#define BANDWALL_SIMD_NS avx512
#elif defined(__AVX2__) && defined(__FMA__)
#define BANDWALL_SIMD_NS avx2
#else
#define BANDWALL_SIMD_NS sse2
#endif

namespace bw::simd {
inline namespace BANDWALL_SIMD_NS {

#if defined(__AVX512F__)
inline constexpr const char* kIsa = "avx512";
struct VecD {
  using T = __m512d;
  static constexpr std::size_t lanes = 8;
  static T load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, T v) { _mm512_store_pd(p, v); }
  static void stream(double* p, T v) { _mm512_stream_pd(p, v); }
  static T set1(double x) { return _mm512_set1_pd(x); }
  static T zero() { return _mm512_setzero_pd(); }
  static T add(T a, T b) { return _mm512_add_pd(a, b); }
  static T mul(T a, T b) { return _mm512_mul_pd(a, b); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_pd(a, b, c); }
  static double sum(T v) {
    alignas(64) double t[lanes];
    _mm512_store_pd(t, v);
    return ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  }
};
#elif defined(__AVX2__) && defined(__FMA__)
inline constexpr const char* kIsa = "avx2";
struct VecD {
  using T = __m256d;
  static constexpr std::size_t lanes = 4;
  static T load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, T v) { _mm256_store_pd(p, v); }
  static void stream(double* p, T v) { _mm256_stream_pd(p, v); }
  static T set1(double x) { return _mm256_set1_pd(x); }
  static T zero() { return _mm256_setzero_pd(); }
  static T add(T a, T b) { return _mm256_add_pd(a, b); }
  static T mul(T a, T b) { return _mm256_mul_pd(a, b); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_pd(a, b, c); }
  static double sum(T v) {
    __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
    lo = _mm_add_pd(lo, hi);
    return _mm_cvtsd_f64(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)));
  }
};
#else
inline constexpr const char* kIsa = "sse2";
struct VecD {
  using T = __m128d;
  static constexpr std::size_t lanes = 2;
  static T load(const double* p) { return _mm_loadu_pd(p); }
  static void store(double* p, T v) { _mm_store_pd(p, v); }
  static void stream(double* p, T v) { _mm_stream_pd(p, v); }
  static T set1(double x) { return _mm_set1_pd(x); }
  static T zero() { return _mm_setzero_pd(); }
  static T add(T a, T b) { return _mm_add_pd(a, b); }
  static T mul(T a, T b) { return _mm_mul_pd(a, b); }
  static T fma(T a, T b, T c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
  static double sum(T v) { return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v))); }
};
#endif

// Bytes a vector store must be aligned to (the non-temporal stores require it).
inline constexpr std::size_t kVecBytes = VecD::lanes * sizeof(double);

inline bool aligned(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) % kVecBytes) == 0; }

}  // namespace BANDWALL_SIMD_NS
}  // namespace bw::simd
