// The one row kernel of the optimised ISO3DFD engine, written once for every vector instruction
// set: rows_avx512.hpp and rows_avx2.hpp supply the operations (a traits struct Isa: the vector
// type, loads, stores, masks, lane shifts) and each variant's file instantiates it for the register
// shapes it lists. Included only by those files, each compiled with its own target flags, and
// everything here is a template on Isa, so no code built for one instruction set is shared.
//
// And on the radius R (kKernelRadii). The figures below are the seed's, R = 8; at radius R read 2R
// for 16 and 2R + 1 for 17.
//
// How it cuts loads (per output vector of lanes points, against the 25 neighbour vectors of the
// stencil plus the centre, next and vel; docs/guides/iso3dfd-kernel.md):
//  - x: the aligned vectors of a row are loaded once ((V + 2) / V per vector: the V vectors of the
//    segment and one on either side) and the x pairs q[x-K] + q[x+K] are cut out of them with lane
//    shifts; pairs whose distance the description lists in x_loads come from two unaligned loads
//    instead (a load-port slot for a shuffle slot, for CPUs whose FP pipes bind first);
//  - z: P planes are computed together and a window of 2 P planes slides through registers, so
//    the 16 z neighbours of P outputs cost 2 P + 14 loads ((2 P + 14) / P per vector);
//  - y: the 16 rows are loaded one by one, shared by nothing; they hit L1 only while the 17 rows of
//    every plane computed together stay there, which whole rows of 4 planes do not (68 rows);
//  - split shapes run two passes over a block's P planes instead of one: the centre, x and y of
//    one plane at a time (its 17 rows stay in L1) into a per-thread buffer of partial sums, then
//    z and the update for the P planes together, starting from those sums (one load per vector
//    instead of the 16 y rows from L2; iso3dfd/autoblocks.hpp's l1_fills counts both); the first
//    pass computes Q rows of the plane together where the description says rows = Q, a window
//    sliding along y over their neighbours as the z window does over planes ((2 Q + 14) / Q loads
//    a vector instead of 16, and 2 Q V sums in flight instead of V);
//  - ring shapes (AVX-512: 32 registers) make the second pass march along z one vector column at
//    a time, the 17 planes an output's z neighbours span in a ring of registers: one load of prev
//    per output (its centre included) and 16 per column of a chunk of P planes, instead of
//    (2 P + 14) / P; 43 bytes a point from L2 instead of 56 at 8 planes and 272^3 (the record's l1_fills);
//  - coefficients: held in registers where the register file allows it (AVX-512's 32), otherwise
//    broadcast once per distance for all the vectors that use it.
#pragma once
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "iso3dfd/row_desc.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd/rows_mix.hpp"

namespace bw::iso3dfd {

// What one call of the segment computes: everything (one pass), or the split shapes' first pass
// (centre, x and y of one plane, stored as partial sums) or second (z and the update, from them).
enum class Pass { All, PartialSums, FromPartialSums };

// R: the stencil's radius (a compile-time constant, so every loop over distances unrolls).
template <class Isa, int R>
class RowKernel {
  using Vec = typename Isa::Vec;
  using Mask = typename Isa::Mask;
  static constexpr long L = Isa::kLanes;

 public:
  // How far ahead of row y (of the P planes from z on) next, vel and the leading z plane of prev are
  // prefetched (0: not at all, and neither does a split shape's first pass for its second): the data
  // that comes from DRAM. rows_ahead_ rows on in the block's order: further rows of the same planes,
  // or past the block's last row the block's first rows of the next P planes (rows of the same planes
  // for the last P planes, whose successors are not in the box). Following the block's order measured
  // 2-6% more than plain rows ahead (bench/results/2026-11-26-zen4.md). How many: prefetch_rows.
  template <RowDesc D>
  long ahead(const Box& b, std::size_t y, std::size_t z) const {
    if (rows_ahead_ == 0) return 0;
    const long r = rows_ahead_;
    if (y + static_cast<std::size_t>(r) < b.y1 || z + 2 * D.planes > b.z1) return r * sy_;
    // the row r on, in the next P planes: (z + P, b.y0 + y + r - b.y1)
    return D.planes * sz_ + (static_cast<long>(b.y0) - static_cast<long>(b.y1) + r) * sy_;
  }

  // The halo row of prev's next P planes that row y of a one-pass block prefetches too: R rows above
  // the block for its first R rows, R below for its last R (0: none, or prefetching off, or not
  // Isa::kPrefetchHaloRows). No leading plane brings them (the split shapes' first pass does). Step by
  // step, alternated rounds: AVX2 on Zen 3 radius 4 1.06x (1.03-1.09, 50 rounds), 5-8 within noise;
  // AVX-512 2x4 on Zen 4 radius 3 1.07x (1.06-1.08, 31 rounds) (bench/results: zen3-triangles, zen4-halo).
  template <RowDesc D>
  long halo_ahead(const Box& b, std::size_t y) const {
    if (!Isa::kPrefetchHaloRows || rows_ahead_ == 0) return 0;
    if (y - b.y0 < static_cast<std::size_t>(R)) return D.planes * sz_ - R * sy_;
    if (b.y1 - 1 - y < static_cast<std::size_t>(R)) return D.planes * sz_ + R * sy_;
    return 0;
  }

  RowKernel(const Coefficients& c, std::size_t sy, std::size_t sz, int rows_ahead = default_prefetch_rows(R))
      : sy_(static_cast<long>(sy)), sz_(static_cast<long>(sz)), rows_ahead_(rows_ahead) {
    for (std::size_t k = 0; k <= R; ++k) c_[k] = c[k];
    if constexpr (Isa::kCoefficientsInRegisters)
      for (int k = 0; k <= R; ++k) cv_[k] = Isa::set1(c_[k]);
  }

  // One cache block: next = 2 prev - next + vel * lap(prev) on the box, P planes at a time (the
  // planes left over one at a time); split shapes in two passes per P planes. C: the cache the
  // update's prefetches fill (a ring's column prefetches go to L1 whatever it says).
  template <RowDesc D, PrefetchCache C = kDefaultPrefetchCache>
  void box(const float* prev, float* next, const float* vel, const Grid& g, const Box& b) const {
    constexpr RowDesc one{1, D.vectors, D.x_loads};
    std::size_t z = b.z0;
    if constexpr (D.ring) {
      static_assert(D.split, "a ring is the second pass of a split shape");
      const std::size_t ny = b.y1 - b.y0, tp = ny * g.pitch();
      float* t = scratch(D.planes * tp, prev);
      for (; z < b.z1; z += D.planes) {
        const int n = static_cast<int>(std::min<std::size_t>(D.planes, b.z1 - z));
        partial_sums<D>(prev, next, vel, g, b, z, n, t, tp);
        for (std::size_t y = b.y0; y < b.y1; ++y)
          ring_row(prev, next, vel, g.index(0, y, z), b.x0, b.x1, t + (y - b.y0) * g.pitch(), static_cast<long>(tp), n);
      }
      return;
    } else if constexpr (D.split) {
      const std::size_t ny = b.y1 - b.y0, tp = ny * g.pitch();
      float* t = scratch(D.planes * tp, prev);
      for (; z + D.planes <= b.z1; z += D.planes) {
        partial_sums<D>(prev, next, vel, g, b, z, D.planes, t, tp);
        for (std::size_t y = b.y0; y < b.y1; ++y)
          row<D, Pass::FromPartialSums, C>(prev, next, vel, g.index(0, y, z), b.x0, b.x1, ahead<D>(b, y, z),
                                           t + (y - b.y0) * g.pitch(), static_cast<long>(tp));
      }
    } else {
      for (; z + D.planes <= b.z1; z += D.planes)
        for (std::size_t y = b.y0; y < b.y1; ++y)
          row<D, Pass::All, C>(prev, next, vel, g.index(0, y, z), b.x0, b.x1, ahead<D>(b, y, z), nullptr, 0, nullptr,
                               halo_ahead<D>(b, y));
    }
    for (; z < b.z1; ++z)
      for (std::size_t y = b.y0; y < b.y1; ++y)
        row<one, Pass::All, C>(prev, next, vel, g.index(0, y, z), b.x0, b.x1, ahead<one>(b, y, z), nullptr, 0, nullptr,
                               halo_ahead<one>(b, y));
  }

  // A split shape's first pass: the centre, x and y sums of n planes from z on, plane by plane (its
  // 17 rows stay in L1), into t (plane stride tp, row stride n1).
  template <RowDesc D>
  void partial_sums(const float* prev, float* next, const float* vel, const Grid& g, const Box& b, std::size_t z, int n,
                    float* t, std::size_t tp) const {
    constexpr int Q = D.rows;
    constexpr RowDesc xy{Q, D.vectors, D.x_loads};
    constexpr RowDesc one{1, D.vectors, D.x_loads};
    const long ts = static_cast<long>(g.pitch());
    for (int o = 0; o < n; ++o) {
      float* to = t + o * tp;
      std::size_t y = b.y0;
      for (; y + Q <= b.y1; y += Q) {
        const RowsAhead a = rows_ahead<Q>(prev, next, vel, g, b, y, z + o);
        row<xy, Pass::PartialSums>(prev, next, vel, g.index(0, y, z + o), b.x0, b.x1, 0, to + (y - b.y0) * g.pitch(),
                                   ts, &a);
      }
      for (; y < b.y1; ++y) {
        const RowsAhead a = rows_ahead<1>(prev, next, vel, g, b, y, z + o);
        row<one, Pass::PartialSums>(prev, next, vel, g.index(0, y, z + o), b.x0, b.x1, 0, to + (y - b.y0) * g.pitch(),
                                    ts, &a);
      }
    }
  }

  // The rows a split shape's first pass brings in for later while it computes Q rows from y of
  // plane z. row() issues the lines of each under every segment it computes, so that the misses
  // spread along the row instead of leaving in a burst of 50-100 prefetches after it: step by step
  // 1.05x-1.13x at radius 4, 5, 7 and 8, 1.04x at 6 (within noise), 18 alternated rounds (AMD Zen 4,
  // 256^3, 2 threads; bench/results/2026-12-04-where-time-goes-zen4.md).
  //  - into L1 (l1): the leading rows of the next Q, R rows on;
  //  - into L2 (l2), the first's own reads first from beyond L2: the next plane's halo rows either
  //    side of the block (R above, R below, one per row of the block's first and last R). The rows
  //    below come from the next block's rows, which no pass has read yet, so from memory: brought a
  //    plane ahead, radius 8 step by step ran 1.12x (1.03 to 1.18 over 27 alternated rounds; 256^3,
  //    2 threads, the 4x2-split shape and 8-row blocks, where those rows are a third of what the pass
  //    reads), radius 4-7 within noise (AMD Zen 4, bench/results/2026-12-04-undecided-zen4.md);
  //  - into L2, what the second pass reads first from memory (unless prefetching is off): rows y of
  //    plane z of next and vel, and of prev's plane z + R (the z window's leading planes). The second
  //    pass reads them across P planes at once (a ring: column by column), too many streams at once
  //    for the prefetchers to follow; the first walks row by row, plane by plane. On Zen 4 from
  //    memory (256^3, two threads, step by step) these ran 1.28x at radius 8 with 4x2-split, 1.47x at
  //    6, 1.45x and 1.58x with the 8x2 ring at 8 and 4; on one thread with the grid in L3,
  //    0.89x-0.91x (bench/results/2026-12-03-first-pass-zen4.md).
  struct RowsAhead {
    static constexpr int kMax = 8 * 6;  // rows of a first pass at most x the rows each brings
    const float* row[kMax];
    int l2 = 0, l1 = 0;  // row[0, l2): into L2; row[l2, l2 + l1): into L1
  };

  template <int Q>
  RowsAhead rows_ahead(const float* prev, const float* next, const float* vel, const Grid& g, const Box& b,
                       std::size_t y, std::size_t z) const {
    static_assert(6 * Q <= RowsAhead::kMax);
    RowsAhead a;
    for (std::size_t yy = y; yy < y + Q; ++yy) {
      if (rows_ahead_ != 0) {
        a.row[a.l2++] = next + g.index(0, yy, z);
        a.row[a.l2++] = vel + g.index(0, yy, z);
        a.row[a.l2++] = prev + g.index(0, yy, z + R);
      }
      if (yy - b.y0 < R) a.row[a.l2++] = prev + g.index(0, yy - R, z + 1);
      if (yy + R >= b.y1) a.row[a.l2++] = prev + g.index(0, yy + R, z + 1);
    }
    for (std::size_t yy = y; yy < y + Q; ++yy)
      if (yy + Q < b.y1) a.row[a.l2 + a.l1++] = prev + g.index(0, yy + Q + R, z);
    return a;
  }

  // Prefetches the line of base[off] into cache C through one addressing mode, base + 4 off: the
  // distance stays one register for every stream, where _mm_prefetch(base + off) made the compiler
  // walk a pointer per stream, which spilled (a 2x4 segment at radius 3: 46 general-register stack
  // references to 39; bench/results/2026-12-04-ceilings-zen4.md). Which cache: PrefetchCache.
  template <PrefetchCache C>
  [[gnu::always_inline]] static inline void prefetch_at(const float* base, long off) {
    if constexpr (C == PrefetchCache::L1)
      asm volatile("prefetcht0 (%0,%1,4)" : : "r"(base), "r"(off));
    else
      asm volatile("prefetcht1 (%0,%1,4)" : : "r"(base), "r"(off));
  }

  // The 64-byte lines of a's rows under floats [x, x + n): one prefetch per line. As inline asm:
  // GCC deletes a loop whose only statements are _mm_prefetch calls (they have no effect it must
  // keep), and did so here: before 2026-12-03 these rows were never prefetched.
  static void bring(const RowsAhead* a, long x, long n) {
    if (!a) return;
    for (int k = 0; k < a->l2 + a->l1; ++k)
      for (long xx = x; xx < x + n; xx += 16) {
        const char& line = *reinterpret_cast<const char*>(a->row[k] + xx);
        if (k < a->l2)
          asm volatile("prefetcht1 %0" : : "m"(line));
        else
          asm volatile("prefetcht0 %0" : : "m"(line));
      }
  }

  // The split shapes' partial sums (centre, x and y) of a block's P planes, laid out as the block's
  // rows (row stride: the arrays' row pitch, plane stride rows x pitch), per thread; a vector of
  // slack on either side for the vectors that start before x0 (their lanes outside the box are
  // masked). The buffer starts where prev does within a 64-byte line, so that with a row pitch of
  // whole lines every vector of it lies on a line as prev's do (from a buffer that started 16 bytes
  // into a page, and rows n1 floats apart, each of its loads and stores straddled two lines).
  static float* scratch(std::size_t floats, const float* like) {
    thread_local std::vector<float> buf;
    if (buf.size() < floats + 3 * L) buf.resize(floats + 3 * L);
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(buf.data() + L);
    const std::uintptr_t up = (reinterpret_cast<std::uintptr_t>(like) - at) & 63;  // bytes to prev's place
    return reinterpret_cast<float*>(at + up);
  }

 private:
  // Vectors start on vector boundaries of prev's row: the first starts at or before x0, the last
  // ends at or after x1; those two are masked, the others whole.
  template <RowDesc D, Pass Part = Pass::All, PrefetchCache C = kDefaultPrefetchCache>
  void row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1, long pf,
           float* t = nullptr, long tp = 0, const RowsAhead* ra = nullptr, long halo = 0) const {
    constexpr RowDesc one{D.planes, 1, D.x_loads};
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    long x = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & (L - 1));
    auto at = [&](long xx) { return base + static_cast<std::size_t>(xx); };
    if (x < lo) {
      bring(ra, x, L);
      segment<one, true, Part, C>(prev, next, vel, at(x), Isa::mask(x, lo, hi), pf, t + x, tp, halo);
      x += L;
    }
    for (; x + L * D.vectors <= hi; x += L * D.vectors) {
      bring(ra, x, L * D.vectors);
      segment<D, false, Part, C>(prev, next, vel, at(x), Mask{}, pf, t + x, tp, halo);
    }
    for (; x + L <= hi; x += L) {
      bring(ra, x, L);
      segment<one, false, Part, C>(prev, next, vel, at(x), Mask{}, pf, t + x, tp, halo);
    }
    if (x < hi) {
      bring(ra, x, L);
      segment<one, true, Part, C>(prev, next, vel, at(x), Isa::mask(x, lo, hi), pf, t + x, tp, halo);
    }
  }

  // The ring pass of one row: z and the update for n planes from the row at base, vector column by
  // vector column (the first and last masked as in row()).
  void ring_row(const float* prev, float* next, const float* vel, std::size_t base, std::size_t x0, std::size_t x1,
                const float* t, long tp, int n) const {
    const long lo = static_cast<long>(x0), hi = static_cast<long>(x1);
    long x = lo - static_cast<long>((reinterpret_cast<std::uintptr_t>(prev + base + x0) / 4) & (L - 1));
    auto at = [&](long xx) { return base + static_cast<std::size_t>(xx); };
    if (x < lo) {
      column<true>(prev, next, vel, at(x), Isa::mask(x, lo, hi), t + x, tp, n);
      x += L;
    }
    for (; x + L <= hi; x += L) column<false>(prev, next, vel, at(x), Mask{}, t + x, tp, n);
    if (x < hi) column<true>(prev, next, vel, at(x), Isa::mask(x, lo, hi), t + x, tp, n);
  }

  static constexpr int kRing = 2 * R + 1;
  // How far ahead along x the ring prefetches next, vel and prev's leading plane: the same planes
  // of the column that many floats on. 4 vectors measured best of 4, 10, 17 (a row ahead) and 34 at
  // 272^3 on one core (Intel Xeon with AMX, bench/results/2026-11-27-intel-amx.md).
  static constexpr long kRingAhead = 4 * L;

  // One vector column of the ring pass: plane p of the column (p = -R .. n + R - 1) lives in
  // register w[(p + R) % (2R + 1)]; output j needs planes j - R .. j + R, so before it plane j + R
  // is loaded into the slot plane j - R - 1 held. The ring's slots are compile-time: the steps are
  // unrolled 2R + 1 times, once each, and a chunk of more planes goes round the ring again.
  template <bool Masked>
  [[gnu::always_inline]] inline void column(const float* prev, float* next, const float* vel, std::size_t i, Mask m,
                                            const float* t, long tp, int n) const {
    const long sz = sz_;
    Vec w[kRing];
    const float* q = prev + i - R * sz;
#pragma GCC unroll 16
    for (int p = 0; p < 2 * R; ++p) w[p] = Isa::load(q + p * sz);
    const float* lead = prev + i + R * sz;  // plane j + R
    float* nx = next + i;
    const float* vl = vel + i;
    int j = 0;
    while (j < n) march<Masked>(w, lead, nx, vl, t, m, sz, tp, j, n, std::make_integer_sequence<int, kRing>{});
  }

  template <bool Masked, int... S>
  [[gnu::always_inline]] inline void march(Vec* w, const float*& lead, float*& nx, const float*& vl, const float*& t,
                                           Mask m, long sz, long tp, int& j, int n,
                                           std::integer_sequence<int, S...>) const {
    (void)((j < n && (ring_step<Masked, S>(w, lead, nx, vl, t, m, sz, tp), ++j, true)) && ...);
  }

  template <bool Masked, int S>
  [[gnu::always_inline]] inline void ring_step(Vec* w, const float*& lead, float*& nx, const float*& vl,
                                               const float*& t, Mask m, long sz, long tp) const {
    w[(S + 2 * R) % kRing] = Isa::load(lead);
    Vec acc = Masked ? Isa::maskload(t, m) : Isa::load(t);
#pragma GCC unroll 8
    for (int k = 1; k <= R; ++k)
      acc = Isa::fmadd(coef(k), Isa::add(w[(S + R - k) % kRing], w[(S + R + k) % kRing]), acc);
    _mm_prefetch(reinterpret_cast<const char*>(nx + kRingAhead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(vl + kRingAhead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(lead + kRingAhead), _MM_HINT_T0);
    const Vec cur = w[(S + R) % kRing];
    const Vec two = Isa::set1(2.0f);
    if constexpr (Masked) {
      const Vec old = Isa::maskload(nx, m);
      const Vec v = Isa::maskload(vl, m);
      Isa::maskstore(nx, m, Isa::fmadd(v, acc, Isa::fmsub(two, cur, old)));
    } else {
      const Vec old = Isa::load(nx);
      const Vec v = Isa::load(vl);
      Isa::store(nx, Isa::fmadd(v, acc, Isa::fmsub(two, cur, old)));
    }
    lead += sz;
    nx += sz;
    vl += sz;
    t += tp;
  }

  Vec coef(int k) const {
    if constexpr (Isa::kCoefficientsInRegisters)
      return cv_[k];
    else
      return Isa::broadcast(&c_[k]);
  }

  // P planes x V vectors of outputs from index i (plane z, the first vector) on; Masked: one
  // vector whose lanes outside the box are neither read from next/vel nor written.
  template <RowDesc D, bool Masked, Pass Part = Pass::All, PrefetchCache C = kDefaultPrefetchCache>
  [[gnu::always_inline]] inline void segment(const float* prev, float* next, const float* vel, std::size_t i, Mask m,
                                             long pf, float* t = nullptr, long tp = 0, long halo = 0) const {
    constexpr int P = D.planes, V = D.vectors;
    const long sy = sy_, sz = sz_;
    // The P outputs and the window that slides over their neighbours lie along z, or along y for
    // the first pass of a split shape (P rows of one plane: its partial sums, row stride tp).
    constexpr bool kAlongY = Part == Pass::PartialSums;
    const long ws = kAlongY ? sy : sz;
    const float* p = prev + i;
    // From radius 3 on the segment's base is hidden from the optimiser too, so that every address
    // of the segment is computed from it (one register) instead of a walking pointer per row that
    // spills: the general registers' stack references of a 2x4 segment at radius 4 go from 45 to
    // 29. One core on a box in L2, 7 alternated rounds (Intel Emerald Rapids): AVX-512 2x4 1.07x
    // at radius 3, 1x4 1.10x and 1.06x at 4 and 5, 3x2-x81 1.04x-1.09x at 3-5, 4x2 at 2 0.95x;
    // AVX2 0.96x-1.02x at 3-8 (Isa::kHideSegmentBase).
    if constexpr (Isa::kHideSegmentBase && R >= 3) opaque(p);
    Vec acc[P][V];
    if constexpr (Part == Pass::FromPartialSums) {
      // the partial sums are loaded vector by vector in the z part, so that only P are live at once
    } else {
      // Centre and x neighbours, from the aligned vectors of the segment and one on either side.
#pragma GCC unroll 8
      for (int o = 0; o < P; ++o) {
        const float* q = p + o * ws;
        typename Isa::Row w[V + 2];
#pragma GCC unroll 16
        for (int v = 0; v < V + 2; ++v) w[v].m = Isa::load(q + L * (v - 1));
#pragma GCC unroll 16
        for (int j = 0; j <= V; ++j) Isa::prepare(w[j], w[j + 1]);
        const Vec c0 = coef(0);
#pragma GCC unroll 16
        for (int v = 0; v < V; ++v) acc[o][v] = Isa::mul(c0, w[v + 1].m);
        x_pairs<D, 1>(acc[o], w, q);
      }
    }
    // y neighbours: distance k outermost so that all P * V sums advance together (their FMA
    // chains overlap); plane o's rows are plane 0's plus o * sz.
    if constexpr (Part == Pass::All) {
      const float* ya = p - sy;
      const float* yb = p + sy;
#pragma GCC unroll 8
      for (int k = 1; k <= R; ++k) {
        const Vec ck = coef(k);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o)
#pragma GCC unroll 16
          for (int v = 0; v < V; ++v) {
            const long d = o * sz + L * v;
            acc[o][v] = Isa::fmadd(ck, Isa::add(Isa::load(ya + d), Isa::load(yb + d)), acc[o][v]);
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
      const float* q = p + L * v;
      // From radius 3 on the window's planes are loaded again rather than kept from the x part
      // (hidden from the optimiser, which otherwise keeps P (V + 2) vectors of the centre planes
      // live across the y part: at radius 4 the 2x4 segment spilled 24 vectors to the stack). One
      // core on a box in L2, 5 alternated rounds (Intel Emerald Rapids): at radius 3-8 the median
      // shape 1.02x (AVX-512) and 1.03x (AVX2), 0.89x-1.27x shape by shape (2x4 at radius 4 1.08x,
      // 4x2 at 3 1.12x); at radius 1 and 2 the loads cost more than the registers (8x1 at 1 0.79x,
      // 4x2 at 2 0.82x), so there the optimiser keeps them (bench/results/2026-12-06-emr-reload.md).
      if constexpr (R >= 3) opaque(q);
      if constexpr (Part == Pass::FromPartialSums) {
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o)
          acc[o][v] = Masked ? Isa::maskload(t + o * tp + L * v, m) : Isa::load(t + o * tp + L * v);
      }
      Vec lo[P], hi[P];
#pragma GCC unroll 8
      for (int j = 0; j < P; ++j) {
        lo[j] = Isa::load(q + (j - 1) * ws);
        hi[j] = Isa::load(q + (j + 1) * ws);
      }
      const float* za = q - 2 * ws;        // the plane lo[0] takes next
      const float* zb = q + (P + 1) * ws;  // the plane hi[P - 1] takes next
#pragma GCC unroll 8
      for (int k = 1; k <= R; ++k) {
        const Vec ck = coef(k);
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o) acc[o][v] = Isa::fmadd(ck, Isa::add(lo[o], hi[o]), acc[o][v]);
        if (k == R) break;
#pragma GCC unroll 8
        for (int j = P - 1; j > 0; --j) lo[j] = lo[j - 1];
#pragma GCC unroll 8
        for (int j = 0; j + 1 < P; ++j) hi[j] = hi[j + 1];
        lo[0] = Isa::load(za);
        hi[P - 1] = Isa::load(zb);
        za -= ws;
        zb += ws;
        opaque(za);
        opaque(zb);
      }
      if constexpr (kAlongY) {
#pragma GCC unroll 8
        for (int o = 0; o < P; ++o) {
          if constexpr (Masked)
            Isa::maskstore(t + o * tp + L * v, m, acc[o][v]);
          else
            Isa::store(t + o * tp + L * v, acc[o][v]);
        }
      }
    }
    if constexpr (kAlongY) return;
    // next = 2 prev - next + vel * lap, and the prefetches for a later row (one per 64-byte line).
    const Vec two = Isa::set1(2.0f);
    const long ahead = pf, ahead_z = pf + R * sz;
#pragma GCC unroll 8
    for (int o = 0; o < P; ++o) {
      const std::size_t io = i + static_cast<std::size_t>(o * sz);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) {
        const std::size_t iv = io + static_cast<std::size_t>(L * v);
        if constexpr (C != PrefetchCache::Off)
          if (ahead != 0 && (L * v) % 16 == 0) {
            prefetch_at<C>(next + iv, ahead);
            prefetch_at<C>(vel + iv, ahead);
            prefetch_at<C>(prev + iv, ahead_z);
            if (halo != 0) prefetch_at<C>(prev + iv, halo);
          }
        const Vec cur = Isa::load(prev + iv);
        if constexpr (Masked) {
          const Vec old = Isa::maskload(next + iv, m);
          const Vec w = Isa::maskload(vel + iv, m);
          Isa::maskstore(next + iv, m, Isa::fmadd(w, acc[o][v], Isa::fmsub(two, cur, old)));
        } else {
          const Vec old = Isa::load(next + iv);
          const Vec w = Isa::load(vel + iv);
          Isa::store(next + iv, Isa::fmadd(w, acc[o][v], Isa::fmsub(two, cur, old)));
        }
      }
    }
  }

  // acc[v] += c[K] (q[x-K] + q[x+K]) for K = K..8 and the segment's V vectors: from two unaligned
  // loads where D lists K, otherwise from lane shifts of the aligned vectors w (V + 2 of them).
  template <RowDesc D, int K>
  [[gnu::always_inline]] inline void x_pairs(Vec* acc, const typename Isa::Row* w, const float* q) const {
    if constexpr (K <= R) {
      const Vec ck = coef(K);
#pragma GCC unroll 16
      for (int v = 0; v < D.vectors; ++v) {
        Vec s;
        if constexpr (D.x_loaded(K))
          s = Isa::add(Isa::load(q + L * v - K), Isa::load(q + L * v + K));
        else
          s = Isa::template pair<K>(w[v], w[v + 1], w[v + 2]);
        acc[v] = Isa::fmadd(ck, s, acc[v]);
      }
      x_pairs<D, K + 1>(acc, w, q);
    }
  }

  alignas(64) float c_[R + 1];
  Vec cv_[Isa::kCoefficientsInRegisters ? R + 1 : 1];
  long sy_, sz_;
  int rows_ahead_;
};

// A register shape's block function: flatten inlines everything the kernel calls into it, so no
// copy of a shared inline function built with one instruction set's flags can be picked by the
// linker for code that runs on another CPU.
template <class Isa, RowDesc D, int R>
[[gnu::flatten]] void row_box(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g,
                              const Box& b) {
  const Prefetch p = prefetch_setting(R);
  const RowKernel<Isa, R> k(c, g.pitch(), g.plane(), p.rows);
  // The cache is a template argument (no branch per prefetch in the hot loop; a ring ignores it), Off
  // where nothing is prefetched: the segment then holds none of their offsets and GCC spills fewer
  // general registers (AVX2 2x2 at radius 1: 84 instructions a segment instead of 114, 3 loads from
  // the stack instead of 13; 256^3, 2 threads, the defaults 1.06x, 1.04 to 1.09 over 65 alternated
  // rounds, AMD Zen 3, bench/results/2026-12-07-zen3-leads.md).
  if constexpr (!D.ring) {
    constexpr PrefetchCache kOther = kDefaultPrefetchCache == PrefetchCache::L1 ? PrefetchCache::L2 : PrefetchCache::L1;
    if (p.rows == 0) return k.template box<D, PrefetchCache::Off>(prev, next, vel, g, b);
    if (p.cache != kDefaultPrefetchCache) return k.template box<D, kOther>(prev, next, vel, g, b);
  }
  k.template box<D>(prev, next, vel, g, b);
}

// A register shape of a variant: its block function, the counts of its description and their
// operation mix at every radius of kKernelRadii.
template <class Isa, RowDesc D, std::size_t... I>
constexpr RowShape row_shape_at(std::index_sequence<I...>) {
  return RowShape{D.planes,
                  D.vectors,
                  {&row_box<Isa, D, kKernelRadii[I]>...},
                  nullptr,
                  D.x_loads,
                  {row_counts<Isa>(D, kKernelRadii[I])...},
                  D.split,
                  D.ring,
                  D.rows,
                  {&mix::time<Isa, D, kKernelRadii[I]>...}};
}
template <class Isa, RowDesc D>
constexpr RowShape row_shape() {
  return row_shape_at<Isa, D>(std::make_index_sequence<kKernelRadii.size()>{});
}

// The register shape a vector variant runs by default at one radius of kKernelRadii.
struct RadiusDefault {
  int radius;
  RowDesc shape;
};

// RowVariant::default_at from one row per compiled radius: which of the variant's shapes runs there.
// Evaluated at compile time: a radius of kKernelRadii without a row, a row for a radius not compiled
// (or two for one), or a shape missing from the variant's list is a compile error (the throw below
// is reached), so adding a radius to kKernelRadii does not build until each vector variant says its
// default shape there.
template <std::size_t S, std::size_t N>
consteval std::array<int, kKernelRadii.size()> default_shapes(const RowShape (&shapes)[S],
                                                              const RadiusDefault (&rows)[N]) {
  std::array<int, kKernelRadii.size()> out{};
  std::array<bool, kKernelRadii.size()> given{};
  for (const RadiusDefault& r : rows) {
    const int i = kernel_radius_index(r.radius);
    if (i < 0) throw "a default shape for a radius the vector kernels are not compiled for (kKernelRadii)";
    if (given[static_cast<std::size_t>(i)]) throw "two default shapes for one radius";
    int found = -1;
    for (std::size_t k = 0; k < S && found < 0; ++k) {
      const RowShape& s = shapes[k];
      if (s.planes == r.shape.planes && s.vectors == r.shape.vectors && s.x_loads == r.shape.x_loads &&
          s.split == r.shape.split && s.ring == r.shape.ring && s.rows == r.shape.rows)
        found = static_cast<int>(k);
    }
    if (found < 0) throw "a default shape that is not in the variant's list of shapes";
    out[static_cast<std::size_t>(i)] = found;
    given[static_cast<std::size_t>(i)] = true;
  }
  for (bool g : given)
    if (!g) throw "a radius of kKernelRadii without a default shape: add its row";
  return out;
}

}  // namespace bw::iso3dfd
