// The AVX2 + FMA operations of the row kernel (iso3dfd/rows_kernel.hpp): 8 floats per vector, the
// x pairs cut out of the aligned vectors with vperm2f128 + vpalignr, the coefficients broadcast
// where they are used (16 registers hold no more). Included only by rows_avx2.cpp, which is
// compiled with -mavx2 -mfma.
#pragma once
#if !defined(__AVX2__) || !defined(__FMA__)
#error "rows_avx2.hpp needs -mavx2 -mfma (rows_avx2.cpp is built with them)"
#endif
#include <immintrin.h>

namespace bw::iso3dfd {

struct Avx2 {
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr bool kCoefficientsInRegisters = false;
  // the segment's base stays visible to the optimiser: hiding it measured 0.96x-1.02x (rows_kernel.hpp)
  static constexpr bool kHideSegmentBase = false;
  // a one-pass block prefetches prev's halo rows too: radius 4 1.06x on Zen 3 (rows_kernel.hpp)
  static constexpr bool kPrefetchHaloRows = true;
  // An aligned vector m of a row and t = [m_hi, next_lo], the middle of it and the next one.
  struct Row {
    Vec m, t;
  };

  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec maskload(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void maskstore(float* p, Mask m, Vec v) { _mm256_maskstore_ps(p, m, v); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec broadcast(const float* x) { return _mm256_broadcast_ss(x); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec fmsub(Vec a, Vec b, Vec c) { return _mm256_fmsub_ps(a, b, c); }
  // Lanes of the vector starting at x that lie in [lo, hi), as vmaskmovps wants them.
  static Mask mask(long x, long lo, long hi) {
    const __m256i lane =
        _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(x)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i ge = _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1));
    const __m256i lt = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane);
    return _mm256_and_si256(ge, lt);
  }

  // The lane shift most x pairs are made of (vpalignr), for the operation mix (rows_mix.hpp).
  static Vec shuffle(Vec a, Vec b) {
    return _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(a), _mm256_castps_si256(b), 4));
  }

  static void prepare(Row& a, const Row& b) { a.t = _mm256_permute2f128_ps(a.m, b.m, 0x21); }
  // Distances 4 and 8 are whole halves or whole vectors: no vpalignr; every distance but 8 uses t.
  static constexpr bool needs_prepare(int k) { return k != 8; }
  static constexpr double pair_shuffles(int k) { return k == 4 || k == 8 ? 0 : 2; }

  // m[x - K] + m[x + K] from the aligned vectors l, m, r (and their t).
  template <int K>
  static Vec pair(const Row& l, const Row& m, const Row& r) {
    return add(shift<K>(m.m, m.t, r.m), shift<8 - K>(l.m, l.t, m.m));
  }

 private:
  // Elements K .. K+7 of the 16 floats a:b (a first); t is [a_hi, b_lo].
  template <int K>
  static Vec shift(Vec a, Vec t, Vec b) {
    if constexpr (K == 0) return a;
    if constexpr (K == 8) return b;
    if constexpr (K == 4) return t;
    const __m256i ai = _mm256_castps_si256(a), ti = _mm256_castps_si256(t), bi = _mm256_castps_si256(b);
    if constexpr (K < 4) return _mm256_castsi256_ps(_mm256_alignr_epi8(ti, ai, 4 * K));
    return _mm256_castsi256_ps(_mm256_alignr_epi8(bi, ti, 4 * (K - 4)));
  }
};

}  // namespace bw::iso3dfd
