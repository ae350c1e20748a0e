// The AVX2 + FMA row kernel: one cache block, row segment by row segment along x, 8 floats per
// vector. Included only by rows_avx2.cpp, which is compiled with -mavx2 -mfma.
//
// What bounds it in the core (per output vector of 8 points, P planes x V vectors in registers;
// Zen 2/3: two 256-bit loads and one store per cycle, two FMA and two FP-add pipes, shuffles on
// two of those four pipes):
//   loads: centre and x neighbours (V + 2) / V (the x pairs are shifted out of the aligned vectors
//          with vperm2f128 + vpalignr), y 16, z (2 * 8 + 2 * (P - 1)) / P (a window of planes
//          slides through registers), next and vel 2, plus the coefficient broadcasts;
//   FP ops: 24 FMAs (+ 1 multiply + 2 for the update) on the FMA pipes, 25 adds on the add pipes,
//          16 shuffles (2 vperm2f128 + 14 vpalignr) shared with them.
// incore_model() below turns these counts into the in-core bound the record reports.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "iso3dfd/rows.hpp"

#if !defined(__AVX2__) || !defined(__FMA__)
#error "rows_avx2.hpp needs -mavx2 -mfma (rows_avx2.cpp is built with them)"
#endif

namespace bw::iso3dfd::avx2 {

// Elements K .. K+7 of the 16 floats a:b (a first); t is vperm2f128(a, b, 0x21) = [a_hi, b_lo].
template <int K>
[[gnu::always_inline]] inline __m256 shift(__m256 a, __m256 t, __m256 b) {
  if constexpr (K == 0) return a;
  if constexpr (K == 8) return b;
  if constexpr (K == 4) return t;
  const __m256i ai = _mm256_castps_si256(a), ti = _mm256_castps_si256(t), bi = _mm256_castps_si256(b);
  if constexpr (K < 4) return _mm256_castsi256_ps(_mm256_alignr_epi8(ti, ai, 4 * K));
  return _mm256_castsi256_ps(_mm256_alignr_epi8(bi, ti, 4 * (K - 4)));
}

class RowKernel {
 public:
  // Rows ahead at which next, vel and the leading z plane of prev are prefetched.
  static constexpr long kPrefetchRows = 1;

  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz)
      : sy_(static_cast<long>(sy)), sz_(static_cast<long>(sz)) {
    for (std::size_t k = 0; k <= kHalf; ++k) c_[k] = c[k];
  }

  template <int P, int V>
  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    std::size_t z = b.z0;
    for (; z + P <= b.z1; z += P)
      for (std::size_t y = b.y0; y < b.y1; ++y) row<P, V>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
    for (; z < b.z1; ++z)
      for (std::size_t y = b.y0; y < b.y1; ++y) row<1, V>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
  }

 private:
  // Vectors start on 32-byte boundaries of prev's row: the first vector starts at or before x0,
  // the last ends at or after x1; those two are masked (vmaskmovps), the others are whole.
  template <int P, int V>
  void row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1) const {
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    long x = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & 7);
    if (x < lo) {
      segment<P, 1, true>(prev, next, vel, base + static_cast<std::size_t>(x), mask(x, lo, hi));
      x += 8;
    }
    for (; x + 8 * V <= hi; x += 8 * V)
      segment<P, V, false>(prev, next, vel, base + static_cast<std::size_t>(x), _mm256_setzero_si256());
    for (; x + 8 <= hi; x += 8)
      segment<P, 1, false>(prev, next, vel, base + static_cast<std::size_t>(x), _mm256_setzero_si256());
    if (x < hi) segment<P, 1, true>(prev, next, vel, base + static_cast<std::size_t>(x), mask(x, lo, hi));
  }

  static __m256i mask(long x, long lo, long hi) {
    const __m256i lane =
        _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(x)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i ge = _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1));
    const __m256i lt = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane);
    return _mm256_and_si256(ge, lt);
  }

  // P planes x V vectors of outputs from index i (plane z, the first vector) on; Masked: one
  // vector whose lanes outside the box are neither read from next/vel nor written.
  template <int P, int V, bool Masked>
  void segment(const float* prev, float* next, const float* vel, std::size_t i, __m256i m) const {
    const long sy = sy_, sz = sz_;
    const float* p = prev + i;
    __m256 acc[P][V];
    // Centre and x neighbours, from the aligned vectors of the segment and one on either side.
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const float* q = p + o * sz;
      __m256 w[V + 2];
#pragma GCC unroll 16
      for (int v = 0; v < V + 2; ++v) w[v] = _mm256_loadu_ps(q + 8 * (v - 1));
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[o][v] = x_part(w[v], w[v + 1], w[v + 2]);
    }
    // y neighbours: distance k outermost so that all P * V sums advance together.
    {
      const float* ya = p - sy;
      const float* yb = p + sy;
#pragma GCC unroll 8
      for (int k = 1; k <= kHalf; ++k) {
        const __m256 ck = _mm256_broadcast_ss(&c_[k]);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o)
#pragma GCC unroll 16
          for (int v = 0; v < V; ++v) {
            const long d = o * sz + 8 * v;
            acc[o][v] = _mm256_fmadd_ps(ck, _mm256_add_ps(_mm256_loadu_ps(ya + d), _mm256_loadu_ps(yb + d)), acc[o][v]);
          }
        ya -= sy;
        yb += sy;
        opaque(ya);
        opaque(yb);
      }
    }
    // z neighbours, vector by vector: lo[j] holds plane j - k and hi[j] plane j + k; from k to
    // k + 1 each window slides by one plane, so every step loads two planes for all P outputs.
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      const float* q = p + 8 * v;
      __m256 lo[P], hi[P], az[P];
#pragma GCC unroll 8
      for (int j = 0; j < P; ++j) {
        lo[j] = _mm256_loadu_ps(q + (j - 1) * sz);
        hi[j] = _mm256_loadu_ps(q + (j + 1) * sz);
      }
      const float* za = q - 2 * sz;        // the plane lo[0] takes next
      const float* zb = q + (P + 1) * sz;  // the plane hi[P - 1] takes next
#pragma GCC unroll 8
      for (int k = 1; k <= kHalf; ++k) {
        const __m256 ck = _mm256_broadcast_ss(&c_[k]);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o) {
          const __m256 s2 = _mm256_add_ps(lo[o], hi[o]);
          az[o] = k == 1 ? _mm256_mul_ps(ck, s2) : _mm256_fmadd_ps(ck, s2, az[o]);
        }
        if (k == kHalf) break;
#pragma GCC unroll 8
        for (int j = P - 1; j > 0; --j) lo[j] = lo[j - 1];
#pragma GCC unroll 8
        for (int j = 0; j + 1 < P; ++j) hi[j] = hi[j + 1];
        lo[0] = _mm256_loadu_ps(za);
        hi[P - 1] = _mm256_loadu_ps(zb);
        za -= sz;
        zb += sz;
        opaque(za);
        opaque(zb);
      }
#pragma GCC unroll 8
      for (int o = 0; o < P; ++o) acc[o][v] = _mm256_add_ps(acc[o][v], az[o]);
    }
    // next = 2 prev - next + vel * lap, and the prefetches for a later row.
    const __m256 two = _mm256_set1_ps(2.0f);
    const long ahead = kPrefetchRows * sy;
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const std::size_t io = i + static_cast<std::size_t>(o * sz);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) {
        const std::size_t iv = io + 8 * static_cast<std::size_t>(v);
        if (v % 2 == 0) {  // one prefetch per 64-byte line
          _mm_prefetch(reinterpret_cast<const char*>(next + iv + ahead), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(vel + iv + ahead), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(prev + iv + ahead + kHalf * sz), _MM_HINT_T0);
        }
        const __m256 cur = _mm256_loadu_ps(prev + iv);
        if constexpr (Masked) {
          const __m256 old = _mm256_maskload_ps(next + iv, m);
          const __m256 w = _mm256_maskload_ps(vel + iv, m);
          _mm256_maskstore_ps(next + iv, m, _mm256_fmadd_ps(w, acc[o][v], _mm256_fmsub_ps(two, cur, old)));
        } else {
          const __m256 old = _mm256_loadu_ps(next + iv);
          const __m256 w = _mm256_loadu_ps(vel + iv);
          _mm256_storeu_ps(next + iv, _mm256_fmadd_ps(w, acc[o][v], _mm256_fmsub_ps(two, cur, old)));
        }
      }
    }
  }

  // The centre and the x neighbours of the aligned vector m (l and r: the aligned vectors left
  // and right of it); each pair q[x - K] + q[x + K] from two shifts of the 24 floats l:m:r.
  __m256 x_part(__m256 l, __m256 m, __m256 r) const {
    const __m256 tl = _mm256_permute2f128_ps(l, m, 0x21), tr = _mm256_permute2f128_ps(m, r, 0x21);
    __m256 s = _mm256_mul_ps(_mm256_broadcast_ss(&c_[0]), m);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[1]), pair<1>(l, tl, m, tr, r), s);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[2]), pair<2>(l, tl, m, tr, r), s);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[3]), pair<3>(l, tl, m, tr, r), s);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[4]), pair<4>(l, tl, m, tr, r), s);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[5]), pair<5>(l, tl, m, tr, r), s);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[6]), pair<6>(l, tl, m, tr, r), s);
    s = _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[7]), pair<7>(l, tl, m, tr, r), s);
    return _mm256_fmadd_ps(_mm256_broadcast_ss(&c_[8]), pair<8>(l, tl, m, tr, r), s);
  }

  // m[x + K] + m[x - K]: elements K.. of m:r and 8 - K.. of l:m.
  template <int K>
  static __m256 pair(__m256 l, __m256 tl, __m256 m, __m256 tr, __m256 r) {
    return _mm256_add_ps(shift<K>(m, tr, r), shift<8 - K>(l, tl, m));
  }

  alignas(32) float c_[kHalf + 1];
  long sy_, sz_;
};

}  // namespace bw::iso3dfd::avx2
