// The AVX-512 row kernel: one cache block, row segment by row segment along x, 16 floats per
// vector. Included only by rows_avx512.cpp, which is compiled with the AVX-512 flags.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "iso3dfd/rows.hpp"

#if !defined(__AVX512F__)
#error "rows_avx512.hpp needs the AVX-512 target flags (rows_avx512.cpp is built with them)"
#endif
#include <immintrin.h>
// GCC 12 reports the _mm512_undefined_epi32() inside _mm512_alignr_epi32 as (maybe) uninitialised
// wherever the kernel is instantiated.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace bw::iso3dfd {

namespace avx512 {

// Register block: V vectors of 16 floats along x in each of P planes along z. All P * V outputs
// stay in registers while the neighbour rows stream past them one at a time: each neighbour row
// is one walking pointer and its V vectors are constant displacements from it, so the loop needs
// a handful of general registers whatever the strides (a pointer per neighbour row does not fit
// and spills). Loads per output vector, which bound the kernel from L1 (measured on Zen 5: about
// 1.3 aligned 512-bit loads per cycle, 1.0 for loads that split cache lines): the centre and its
// aligned neighbours ((V + 2) / V, the 16 x neighbours come from valignd), the 16 y neighbours,
// (2 * 8 + 2 * P) / P z neighbours (a window of planes slides through registers), next and vel.
class RowKernel {
 public:
  static constexpr int kPlanes = kRegisterPlanes;
  static constexpr int kVectors = 4;
  // Rows ahead at which next, vel and the leading z plane of prev are prefetched: the data that
  // comes from DRAM (measured: one row gains about 50% on one core; two or four rows less).
  static constexpr long kPrefetchRows = 1;

  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz)
      : sy_(static_cast<long>(sy)), sz_(static_cast<long>(sz)) {
    for (std::size_t k = 0; k <= kHalf; ++k) c_[k] = c[k];
  }

  // One cache block; P and V other than the defaults are there for the tests.
  template <int P = kPlanes, int V = kVectors>
  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    std::size_t z = b.z0;
    for (; z + P <= b.z1; z += P)
      for (std::size_t y = b.y0; y < b.y1; ++y) row<P, V>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
    for (; z < b.z1; ++z)
      for (std::size_t y = b.y0; y < b.y1; ++y) row<1, V>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
  }

 private:
  // Vectors start on 64-byte boundaries of prev's row: x = x0 - misalignment; the first and last
  // vectors are masked.
  template <int P, int V>
  void row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1) const {
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    const long first = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & 15);
    const long nvec = (hi - first + 15) / 16;
    auto mask = [&](long x) {
      const long a = std::max(0L, lo - x), e = std::min(16L, hi - x);
      return static_cast<__mmask16>(((1u << e) - 1u) & ~((1u << a) - 1u));
    };
    long v = 0;
    for (; v + V <= nvec; v += V) {
      const long x = first + 16 * v;
      __mmask16 m[V];
      for (int j = 0; j < V; ++j) m[j] = mask(x + 16 * j);
      segment<P, V>(prev, next, vel, base + static_cast<std::size_t>(x), m);
    }
    for (; v < nvec; ++v) {
      const long x = first + 16 * v;
      const __mmask16 m[1] = {mask(x)};
      segment<P, 1>(prev, next, vel, base + static_cast<std::size_t>(x), m);
    }
  }

  // P planes x V vectors of outputs from index i (plane z, the first vector) on.
  template <int P, int V>
  void segment(const float* prev, float* next, const float* vel, std::size_t i, const __mmask16* m) const {
    const long sy = sy_, sz = sz_;
    const float* p = prev + i;
    __m512 acc[P][V];
    // Centre and x neighbours, from the aligned vectors of the segment and one on either side.
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const float* q = p + o * sz;
      __m512 w[V + 2];
#pragma GCC unroll 16
      for (int v = 0; v < V + 2; ++v) w[v] = _mm512_loadu_ps(q + 16 * (v - 1));
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[o][v] = x_part(w[v], w[v + 1], w[v + 2]);
    }
    // y neighbours: distance k outermost so that all P * V sums advance together (their FMA
    // chains overlap); plane o's rows are plane 0's plus o * sz.
    {
      const float* ya = p - sy;
      const float* yb = p + sy;
#pragma GCC unroll 8
      for (int k = 1; k <= kHalf; ++k) {
        const __m512 ck = _mm512_set1_ps(c_[k]);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o)
#pragma GCC unroll 16
          for (int v = 0; v < V; ++v) {
            const long d = o * sz + 16 * v;
            acc[o][v] = _mm512_fmadd_ps(ck, _mm512_add_ps(_mm512_loadu_ps(ya + d), _mm512_loadu_ps(yb + d)), acc[o][v]);
          }
        ya -= sy;
        yb += sy;
        opaque(ya);
        opaque(yb);
      }
    }
    // z neighbours, vector by vector: output o pairs planes o - k and o + k. lo[j] holds plane
    // j - k and hi[j] plane j + k (j = 0 .. P-1); from k to k + 1 each window slides by one
    // plane, so every step loads two planes for all P outputs.
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      const float* q = p + 16 * v;
      __m512 lo[P], hi[P], az[P];
#pragma GCC unroll 8
      for (int j = 0; j < P; ++j) {
        lo[j] = _mm512_loadu_ps(q + (j - 1) * sz);
        hi[j] = _mm512_loadu_ps(q + (j + 1) * sz);
      }
      const float* za = q - 2 * sz;        // the plane lo[0] takes next
      const float* zb = q + (P + 1) * sz;  // the plane hi[P - 1] takes next
#pragma GCC unroll 8
      for (int k = 1; k <= kHalf; ++k) {
        const __m512 ck = _mm512_set1_ps(c_[k]);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o) {
          const __m512 s2 = _mm512_add_ps(lo[o], hi[o]);
          az[o] = k == 1 ? _mm512_mul_ps(ck, s2) : _mm512_fmadd_ps(ck, s2, az[o]);
        }
        if (k == kHalf) break;
#pragma GCC unroll 8
        for (int j = P - 1; j > 0; --j) lo[j] = lo[j - 1];
#pragma GCC unroll 8
        for (int j = 0; j + 1 < P; ++j) hi[j] = hi[j + 1];
        lo[0] = _mm512_loadu_ps(za);
        hi[P - 1] = _mm512_loadu_ps(zb);
        za -= sz;
        zb += sz;
        opaque(za);
        opaque(zb);
      }
#pragma GCC unroll 8
      for (int o = 0; o < P; ++o) acc[o][v] = _mm512_add_ps(acc[o][v], az[o]);
    }
    // next = 2 prev - next + vel * lap, and the prefetches for a later row.
    const __m512 two = _mm512_set1_ps(2.0f);
    const long ahead = kPrefetchRows * sy;
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const std::size_t io = i + static_cast<std::size_t>(o * sz);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) {
        const std::size_t iv = io + 16 * static_cast<std::size_t>(v);
        _mm_prefetch(reinterpret_cast<const char*>(next + iv + ahead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(vel + iv + ahead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(prev + iv + ahead + kHalf * sz), _MM_HINT_T0);
        const __m512 cur = _mm512_loadu_ps(prev + iv);
        const __m512 old = _mm512_maskz_loadu_ps(m[v], next + iv);
        const __m512 w = _mm512_maskz_loadu_ps(m[v], vel + iv);
        _mm512_mask_storeu_ps(next + iv, m[v], _mm512_fmadd_ps(w, acc[o][v], _mm512_fmsub_ps(two, cur, old)));
      }
    }
  }

  // The centre and the x neighbours of the aligned vector m (l and r: the aligned vectors left
  // and right of it); each pair q[x - K] + q[x + K] from two valignd.
  __m512 x_part(__m512 l, __m512 m, __m512 r) const {
    __m512 s = _mm512_mul_ps(_mm512_set1_ps(c_[0]), m);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[1]), pair<1>(l, m, r), s);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[2]), pair<2>(l, m, r), s);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[3]), pair<3>(l, m, r), s);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[4]), pair<4>(l, m, r), s);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[5]), pair<5>(l, m, r), s);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[6]), pair<6>(l, m, r), s);
    s = _mm512_fmadd_ps(_mm512_set1_ps(c_[7]), pair<7>(l, m, r), s);
    return _mm512_fmadd_ps(_mm512_set1_ps(c_[8]), pair<8>(l, m, r), s);
  }

  template <int K>
  static __m512 pair(__m512 l, __m512 m, __m512 r) {
    const __m512i li = _mm512_castps_si512(l), mi = _mm512_castps_si512(m), ri = _mm512_castps_si512(r);
    return _mm512_add_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(ri, mi, K)),
                         _mm512_castsi512_ps(_mm512_alignr_epi32(mi, li, 16 - K)));
  }

  float c_[kHalf + 1];
  long sy_, sz_;
};

}  // namespace avx512

}  // namespace bw::iso3dfd
