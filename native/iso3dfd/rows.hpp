// The inner loops of the optimised kernel: one cache block, row by row along x.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "iso3dfd/iso3dfd.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace bw::iso3dfd {

#if defined(__AVX512F__)
inline constexpr const char* kRowIsa = "avx512";

class RowKernel {
 public:
  static constexpr int kPlanes = 4;

  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz) : sy_(sy), sz_(sz) {
    for (std::size_t k = 0; k <= kHalf; ++k) c_[k] = _mm512_set1_ps(c[k]);
  }

  // Planes are taken kPlanes at a time: the z neighbours of those planes are loaded once and feed
  // every output they touch (register blocking along z), which cuts the loads that miss L1.
  template <int P = kPlanes>
  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    std::size_t z = b.z0;
    for (; z + P <= b.z1; z += P) strip<P>(prev, next, vel, g, b, z);
    for (; z < b.z1; ++z) strip<1>(prev, next, vel, g, b, z);
  }

  // P planes from z, row by row (n1_block is the x extent of a row: narrower blocks keep the 17 rows
  // around y of the P planes in L1; full rows keep the hardware prefetchers streaming).
  template <int P>
  void strip(const float* prev, float* next, const float* vel, const Grid& g, const Box& b, std::size_t z) const {
    for (std::size_t y = b.y0; y < b.y1; ++y) row<P>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
  }

 private:

  // Adds c_k * (x+k, x-k, y+k, y-k neighbours) to lap. The x neighbours are the aligned vectors
  // around the centre shifted by valignd (port 5) for odd k and unaligned loads (which split
  // cache lines) for even k: the mix balances the shuffle port against the load ports.
  template <int K>
  __m512 x_pair(__m512 lap, const float* q, __m512 left, __m512 mid, __m512 right) const {
    const long sy = static_cast<long>(sy_);
    __m512 sx;
    if constexpr (K % 2 == 1) {
      const __m512i l = _mm512_castps_si512(left), c = _mm512_castps_si512(mid), r = _mm512_castps_si512(right);
      sx = _mm512_add_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(r, c, K)),
                         _mm512_castsi512_ps(_mm512_alignr_epi32(c, l, 16 - K)));
    } else {
      sx = _mm512_add_ps(_mm512_loadu_ps(q + K), _mm512_loadu_ps(q - K));
    }
    const __m512 s2 = _mm512_add_ps(_mm512_loadu_ps(q + K * sy), _mm512_loadu_ps(q - K * sy));
    return _mm512_fmadd_ps(c_[K], _mm512_add_ps(sx, s2), lap);
  }

  // Vectors start on 64-byte boundaries of the row: x = x0 - misalignment, masked at both ends.
  // R planes z .. z+R-1 of the same row are computed together.
  template <int R>
  void row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1) const {
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    const long first = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & 15);
    for (long x = first; x < hi; x += 16) {
      const long a = std::max(0L, lo - x), e = std::min(16L, hi - x);
      const __mmask16 m = static_cast<__mmask16>(((1u << e) - 1u) & ~((1u << a) - 1u));
      vec<R>(prev, next, vel, base + static_cast<std::size_t>(x), m);
    }
  }


 private:
  template <int R>
  void vec(const float* prev, float* next, const float* vel, std::size_t i, __mmask16 m) const {
    const long sz = static_cast<long>(sz_);
    {
      const float* p = prev + i;
      __m512 acc[R];
#pragma GCC unroll 8
      for (int o = 0; o < R; ++o) {
        const float* q = p + o * sz;
        const __m512 left = _mm512_loadu_ps(q - 16), mid = _mm512_loadu_ps(q), right = _mm512_loadu_ps(q + 16);
        __m512 lap = _mm512_mul_ps(c_[0], mid);
        lap = x_pair<1>(lap, q, left, mid, right);
        lap = x_pair<2>(lap, q, left, mid, right);
        lap = x_pair<3>(lap, q, left, mid, right);
        lap = x_pair<4>(lap, q, left, mid, right);
        lap = x_pair<5>(lap, q, left, mid, right);
        lap = x_pair<6>(lap, q, left, mid, right);
        lap = x_pair<7>(lap, q, left, mid, right);
        lap = x_pair<8>(lap, q, left, mid, right);
        acc[o] = lap;
      }
      // z neighbours: plane j is distance |j - o| from output o.
#pragma GCC unroll 32
      for (int j = -kHalf; j < R + kHalf; ++j) {
        const __m512 v = _mm512_loadu_ps(p + j * sz);
#pragma GCC unroll 8
        for (int o = 0; o < R; ++o) {
          const int d = j > o ? j - o : o - j;
          if (d >= 1 && d <= kHalf) acc[o] = _mm512_fmadd_ps(c_[d], v, acc[o]);
        }
      }
#pragma GCC unroll 8
      for (int o = 0; o < R; ++o) {
        const std::size_t io = i + static_cast<std::size_t>(o * sz);
        const __m512 cur = _mm512_loadu_ps(prev + io);
        const __m512 old = _mm512_maskz_loadu_ps(m, next + io);
        const __m512 v = _mm512_maskz_loadu_ps(m, vel + io);
        _mm512_mask_storeu_ps(next + io, m, _mm512_fmadd_ps(v, acc[o], _mm512_sub_ps(_mm512_add_ps(cur, cur), old)));
      }
    }
  }

  __m512 c_[kHalf + 1];
  std::size_t sy_, sz_;

};

#else
inline constexpr const char* kRowIsa = "generic";

class RowKernel {
 public:
  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz) : c_(c), sy_(sy), sz_(sz) {}

  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    for (std::size_t z = b.z0; z < b.z1; ++z)
      for (std::size_t y = b.y0; y < b.y1; ++y) {
        const std::size_t base = g.index(0, y, z);
        const float* __restrict p = prev + base;
        float* __restrict n = next + base;
        const float* __restrict v = vel + base;
#pragma omp simd
        for (std::size_t x = b.x0; x < b.x1; ++x) {
          float lap = c_[0] * p[x];
          for (std::size_t k = 1; k <= kHalf; ++k)
            lap += c_[k] * (p[x + k] + p[x - k] + p[x + k * sy_] + p[x - k * sy_] + p[x + k * sz_] + p[x - k * sz_]);
          n[x] = 2.0f * p[x] - n[x] + v[x] * lap;
        }
      }
  }

 private:
  Coefficients c_;
  std::size_t sy_, sz_;
};
#endif

}  // namespace bw::iso3dfd
