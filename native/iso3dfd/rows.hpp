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
  // Register block: kPlanes planes of one 16-float vector each are computed together, so a z
  // neighbour loaded once feeds the kPlanes outputs of its row.
  static constexpr int kPlanes = 4;
  // Bit k set: the x pair at distance k comes from valignd, otherwise from unaligned loads. Every
  // mix measured the same from memory (the loop waits on data, not on port 5); odd k shifted.
  static constexpr unsigned kShifted = 0xAA;

  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz) : sy_(static_cast<long>(sy)), sz_(static_cast<long>(sz)) {
    for (std::size_t k = 0; k <= kHalf; ++k) c_[k] = c[k];
  }

  template <int P = kPlanes>
  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    std::size_t z = b.z0;
    for (; z + P <= b.z1; z += P) planes<P>(prev, next, vel, g, b, z);
    for (; z < b.z1; ++z) planes<1>(prev, next, vel, g, b, z);
  }

 private:
  // The coefficients live in registers for a whole row (a copy the stores cannot alias).
  struct Coeff {
    __m512 v[kHalf + 1];
  };

  template <int P>
  void planes(const float* prev, float* next, const float* vel, const Grid& g, const Box& b, std::size_t z) const {
    Coeff c;
    for (int k = 0; k <= kHalf; ++k) c.v[k] = _mm512_set1_ps(c_[k]);
    for (std::size_t y = b.y0; y < b.y1; ++y) row<P>(prev, next, vel, g.index(0, y, z), b.x0, b.x1, c);
  }

  // Vectors start on 64-byte boundaries of the row: x = x0 - misalignment, masked at both ends.
  template <int P>
  void row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1,
           const Coeff& c) const {
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    const long first = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & 15);
    for (long x = first; x < hi; x += 16) {
      const long a = std::max(0L, lo - x), e = std::min(16L, hi - x);
      const __mmask16 m = static_cast<__mmask16>(((1u << e) - 1u) & ~((1u << a) - 1u));
      block<P>(prev, next, vel, base + static_cast<std::size_t>(x), m, c);
    }
  }

  // P planes of one vector each, from index i (plane z) on. Every output sums three independent
  // chains (x even distances with the centre, x odd distances then y, z), each over symmetric pairs
  // c_k * (u[-k] + u[+k]), so the FMA latency chains stay short enough to overlap.
  template <int P>
  void block(const float* prev, float* next, const float* vel, std::size_t i, __mmask16 m, const Coeff& c) const {
    const long sy = sy_, sz = sz_;
    const float* p = prev + i;
    __m512 ax[P], ay[P], az[P];
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) x_part(p + o * sz, c, ax[o], ay[o]);
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const float* q = p + o * sz;
#pragma GCC unroll 8
      for (int k = 1; k <= kHalf; ++k)
        ay[o] = _mm512_fmadd_ps(c.v[k], _mm512_add_ps(_mm512_loadu_ps(q - k * sy), _mm512_loadu_ps(q + k * sy)), ay[o]);
    }
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      az[o] = _mm512_mul_ps(c.v[1], _mm512_add_ps(_mm512_loadu_ps(p + (o - 1) * sz), _mm512_loadu_ps(p + (o + 1) * sz)));
#pragma GCC unroll 8
      for (int k = 2; k <= kHalf; ++k)
        az[o] = _mm512_fmadd_ps(c.v[k], _mm512_add_ps(_mm512_loadu_ps(p + (o - k) * sz), _mm512_loadu_ps(p + (o + k) * sz)), az[o]);
    }
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const std::size_t io = i + static_cast<std::size_t>(o * sz);
      // The data this row brings in from beyond L2, one row ahead: next, vel and the farthest z
      // neighbour (the prefetchers stop at each 4 KiB page, which rows of 1 KiB cross often).
      _mm_prefetch(reinterpret_cast<const char*>(next + io + sy), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(vel + io + sy), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(p + (o + kHalf) * sz + sy), _MM_HINT_T0);
      const __m512 cur = _mm512_loadu_ps(prev + io), two = _mm512_set1_ps(2.0f);
      const __m512 old = _mm512_maskz_loadu_ps(m, next + io);
      const __m512 v = _mm512_maskz_loadu_ps(m, vel + io);
      const __m512 lap = _mm512_add_ps(_mm512_add_ps(ax[o], ay[o]), az[o]);
      _mm512_mask_storeu_ps(next + io, m, _mm512_fmadd_ps(v, lap, _mm512_fmsub_ps(two, cur, old)));
    }
  }

  // The centre and the x neighbours of the aligned vector at q: even distances (with the centre)
  // into xe, odd ones into xo; each pair from valignd of the aligned vectors around the centre
  // (port 5) or from unaligned loads (which split cache lines), as kShifted says.
  static void x_part(const float* q, const Coeff& c, __m512& xe, __m512& xo) {
    const __m512 l = _mm512_loadu_ps(q - 16), m = _mm512_loadu_ps(q), r = _mm512_loadu_ps(q + 16);
    xe = _mm512_mul_ps(c.v[0], m);
    xo = _mm512_mul_ps(c.v[1], pair<1>(q, l, m, r));
    xe = _mm512_fmadd_ps(c.v[2], pair<2>(q, l, m, r), xe);
    xo = _mm512_fmadd_ps(c.v[3], pair<3>(q, l, m, r), xo);
    xe = _mm512_fmadd_ps(c.v[4], pair<4>(q, l, m, r), xe);
    xo = _mm512_fmadd_ps(c.v[5], pair<5>(q, l, m, r), xo);
    xe = _mm512_fmadd_ps(c.v[6], pair<6>(q, l, m, r), xe);
    xo = _mm512_fmadd_ps(c.v[7], pair<7>(q, l, m, r), xo);
    xe = _mm512_fmadd_ps(c.v[8], pair<8>(q, l, m, r), xe);
  }

  template <int K>
  static __m512 pair(const float* q, __m512 l, __m512 m, __m512 r) {
    if constexpr ((kShifted >> K) & 1) return shifted<K>(l, m, r);
    else return unaligned<K>(q);
  }

  // q[x - K] + q[x + K] from the aligned vectors left of, at and right of q.
  template <int K>
  static __m512 shifted(__m512 l, __m512 m, __m512 r) {
    const __m512i li = _mm512_castps_si512(l), mi = _mm512_castps_si512(m), ri = _mm512_castps_si512(r);
    return _mm512_add_ps(_mm512_castsi512_ps(_mm512_alignr_epi32(ri, mi, K)),
                         _mm512_castsi512_ps(_mm512_alignr_epi32(mi, li, 16 - K)));
  }

  template <int K>
  static __m512 unaligned(const float* q) {
    return _mm512_add_ps(_mm512_loadu_ps(q + K), _mm512_loadu_ps(q - K));
  }

  float c_[kHalf + 1];
  long sy_, sz_;
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
