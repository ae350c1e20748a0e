// The inner loops of the optimised kernel: one cache block, row by row along x.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "iso3dfd/iso3dfd.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
// GCC 12 reports the _mm512_undefined_epi32() inside _mm512_alignr_epi32 as maybe uninitialised
// wherever the kernel is instantiated.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace bw::iso3dfd {

#if defined(__AVX512F__)
inline constexpr const char* kRowIsa = "avx512";

class RowKernel {
 public:
  // Register block: kPlanes planes x kRows rows of one 16-float vector each are computed together.
  // A z neighbour loaded once feeds the kPlanes outputs of its row, a y neighbour the kRows
  // outputs of its plane. Measured here (4 KiB pages, planes of 289 KiB): 4x4 blocks gain ~25% while
  // the grid sits in L2 but lose ~20% streaming from memory, where the extra rows in flight cost
  // TLB reach; 4 planes x 1 row is the default.
  static constexpr int kPlanes = 4;
  static constexpr int kRows = 1;

  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz) : sy_(sy), sz_(sz) {
    for (std::size_t k = 0; k <= kHalf; ++k) c_[k] = _mm512_set1_ps(c[k]);
  }

  template <int P = kPlanes, int Y = kRows>
  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    std::size_t z = b.z0;
    for (; z + P <= b.z1; z += P) planes<P, Y>(prev, next, vel, g, b, z);
    for (; z < b.z1; ++z) planes<1, Y>(prev, next, vel, g, b, z);
  }

 private:
  template <int P, int Y>
  void planes(const float* prev, float* next, const float* vel, const Grid& g, const Box& b, std::size_t z) const {
    std::size_t y = b.y0;
    for (; y + Y <= b.y1; y += Y) row<P, Y>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
    for (; y < b.y1; ++y) row<P, 1>(prev, next, vel, g.index(0, y, z), b.x0, b.x1);
  }

  // Vectors start on 64-byte boundaries of the row: x = x0 - misalignment, masked at both ends.
  template <int P, int Y>
  void row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1) const {
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    const long first = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & 15);
    for (long x = first; x < hi; x += 16) {
      const long a = std::max(0L, lo - x), e = std::min(16L, hi - x);
      const __mmask16 m = static_cast<__mmask16>(((1u << e) - 1u) & ~((1u << a) - 1u));
      block<P, Y>(prev, next, vel, base + static_cast<std::size_t>(x), m);
    }
  }

  // The centre and the x neighbours of the vector at q. x neighbours are the aligned vectors
  // around the centre shifted by valignd (port 5) for odd k and unaligned loads (which split cache
  // lines) for even k: the mix balances the shuffle port against the load ports.
  __m512 x_part(const float* q) const {
    const __m512 l = _mm512_loadu_ps(q - 16), c = _mm512_loadu_ps(q), r = _mm512_loadu_ps(q + 16);
    __m512 lap = _mm512_mul_ps(c_[0], c);
    lap = odd<1>(lap, l, c, r);
    lap = even<2>(lap, q);
    lap = odd<3>(lap, l, c, r);
    lap = even<4>(lap, q);
    lap = odd<5>(lap, l, c, r);
    lap = even<6>(lap, q);
    lap = odd<7>(lap, l, c, r);
    lap = even<8>(lap, q);
    return lap;
  }

  template <int K>
  __m512 odd(__m512 lap, __m512 l, __m512 c, __m512 r) const {
    const __m512i li = _mm512_castps_si512(l), ci = _mm512_castps_si512(c), ri = _mm512_castps_si512(r);
    const __m512 s = _mm512_add_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(ri, ci, K)),
                                   _mm512_castsi512_ps(_mm512_alignr_epi32(ci, li, 16 - K)));
    return _mm512_fmadd_ps(c_[K], s, lap);
  }

  template <int K>
  __m512 even(__m512 lap, const float* q) const {
    return _mm512_fmadd_ps(c_[K], _mm512_add_ps(_mm512_loadu_ps(q + K), _mm512_loadu_ps(q - K)), lap);
  }

  // P planes x Y rows of one vector each, from index i (plane z, row y) on.
  template <int P, int Y>
  void block(const float* prev, float* next, const float* vel, std::size_t i, __mmask16 m) const {
    const long sy = static_cast<long>(sy_), sz = static_cast<long>(sz_);
    const float* p = prev + i;
    __m512 acc[P][Y];
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o)
#pragma GCC unroll 8
      for (int r = 0; r < Y; ++r) acc[o][r] = x_part(p + o * sz + r * sy);
    // y neighbours: row j of plane o is distance |j - r| from output (o, r).
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o)
#pragma GCC unroll 32
      for (int j = -kHalf; j < Y + kHalf; ++j) {
        const __m512 v = _mm512_loadu_ps(p + o * sz + j * sy);
#pragma GCC unroll 8
        for (int r = 0; r < Y; ++r) {
          const int d = j > r ? j - r : r - j;
          if (d >= 1 && d <= kHalf) acc[o][r] = _mm512_fmadd_ps(c_[d], v, acc[o][r]);
        }
      }
    // z neighbours: plane j of row r is distance |j - o| from output (o, r).
#pragma GCC unroll 8
    for (int r = 0; r < Y; ++r)
#pragma GCC unroll 32
      for (int j = -kHalf; j < P + kHalf; ++j) {
        const __m512 v = _mm512_loadu_ps(p + j * sz + r * sy);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o) {
          const int d = j > o ? j - o : o - j;
          if (d >= 1 && d <= kHalf) acc[o][r] = _mm512_fmadd_ps(c_[d], v, acc[o][r]);
        }
      }
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o)
#pragma GCC unroll 8
      for (int r = 0; r < Y; ++r) {
        const std::size_t io = i + static_cast<std::size_t>(o * sz + r * sy);
        const __m512 cur = _mm512_loadu_ps(prev + io);
        const __m512 old = _mm512_maskz_loadu_ps(m, next + io);
        const __m512 v = _mm512_maskz_loadu_ps(m, vel + io);
        _mm512_mask_storeu_ps(next + io, m, _mm512_fmadd_ps(v, acc[o][r], _mm512_sub_ps(_mm512_add_ps(cur, cur), old)));
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
