// The AVX-512 operations of the row kernel (iso3dfd/rows_kernel.hpp): 16 floats per vector, the x
// pairs cut out of the aligned vectors with valignd, the coefficients held in registers (32 of
// them). Included only by rows_avx512.cpp, which is compiled with the AVX-512 flags.
#pragma once
#include <cstdint>

#if !defined(__AVX512F__)
#error "rows_avx512.hpp needs the AVX-512 target flags (rows_avx512.cpp is built with them)"
#endif
#include <immintrin.h>
// GCC 12 reports the _mm512_undefined_epi32() inside _mm512_alignr_epi32 as (maybe) uninitialised
// wherever the kernel is instantiated.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace bw::iso3dfd {

struct Avx512 {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr bool kCoefficientsInRegisters = true;
  // the segment hides its base from radius 3 on (rows_kernel.hpp)
  static constexpr bool kHideSegmentBase = true;
  // a one-pass block prefetches prev's halo rows too: radius 3 1.07x on Zen 4 (rows_kernel.hpp)
  static constexpr bool kPrefetchHaloRows = true;
  // An aligned vector of a row; valignd needs nothing prepared.
  struct Row {
    Vec m;
  };

  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec maskload(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void maskstore(float* p, Mask m, Vec v) { _mm512_mask_storeu_ps(p, m, v); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec broadcast(const float* x) { return _mm512_set1_ps(*x); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec fmsub(Vec a, Vec b, Vec c) { return _mm512_fmsub_ps(a, b, c); }
  // Lanes of the vector starting at x that lie in [lo, hi).
  static Mask mask(long x, long lo, long hi) {
    const long a = lo > x ? lo - x : 0, e = hi - x < 16 ? hi - x : 16;
    return static_cast<Mask>(((1u << e) - 1u) & ~((1u << a) - 1u));
  }

  // The lane shift the x pairs are made of (valignd), for the operation mix (rows_mix.hpp).
  static Vec shuffle(Vec a, Vec b) {
    return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b), 3));
  }

  static void prepare(Row&, const Row&) {}
  static constexpr bool needs_prepare(int) { return false; }
  static constexpr double pair_shuffles(int) { return 2; }
  // m[x - K] + m[x + K] from the aligned vectors l, m, r: two valignd.
  template <int K>
  static Vec pair(const Row& l, const Row& m, const Row& r) {
    const __m512i li = _mm512_castps_si512(l.m), mi = _mm512_castps_si512(m.m), ri = _mm512_castps_si512(r.m);
    return add(_mm512_castsi512_ps(_mm512_alignr_epi32(ri, mi, K)),
               _mm512_castsi512_ps(_mm512_alignr_epi32(mi, li, 16 - K)));
  }
};

}  // namespace bw::iso3dfd
