// The row kernel's operation mix as this core runs it: the vector loads, FMAs, adds and shuffles a
// register shape issues per output vector (RowCounts, from the description its code follows), run
// from registers and a buffer L1 holds, timed against FMAs alone. The port model (rows.hpp's
// incore_bound) says how many cycles those operations need if every pipe took its share; the mix
// says how many this core spends on them. Neither has the kernel's own dependences, L1 misses or
// address arithmetic: the mix is the in-core roof a core reaches with these operations, and the
// kernel's distance from it is what those cost.
//
// Templates on the variant's operations (Isa), the shape and the radius, so that a round is one
// straight run of instructions: included only by the variant files (rows_avx512.cpp,
// rows_avx2.cpp), each compiled with its own target flags.
#pragma once
#include <chrono>
#include <cstddef>
#include <utility>

#include "iso3dfd/row_desc.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd::mix {

// A round: the operations of 4 output vectors (the counts to a quarter).
inline constexpr int kRoundVectors = 4;
// Independent FMA chains: an FMA adds into its own register (FMA latency 4 x 2 pipes needs 8 in
// flight); the adds, shuffles and loads write registers nothing reads.
template <class Isa>
inline constexpr int kChains = Isa::kLanes == 16 ? 12 : 10;
// The buffer the loads read: every load of a round its own vector (a round's most, 252 at radius 8
// under AVX2), so that no two load one address. With 64, the optimiser kept a vector loaded once
// for its second use 64 loads later and spilled it to the stack: from radius 6 on the mix timed
// those stores too (AVX2 at radius 8: 1.8x the port model's cycles). 16 KiB at 16 lanes: L1 holds it.
inline constexpr int kBufferVectors = 256;

constexpr int per_round(double per_vector) { return static_cast<int>(per_vector * kRoundVectors + 0.5); }

// An empty asm that "changes" v: before an operation so that no two are merged or hoisted out of
// the loop, after it so that none is dropped. It issues nothing.
template <class V>
[[gnu::always_inline]] inline void keep(V& v) {
  asm volatile("" : "+v"(v));
}

// Operation i of a round with A adds, F FMAs, S shuffles and L loads: the loads go to the adds
// first (as the kernel's pairs load one operand), then to the FMAs, then stand alone.
template <class Isa, int A, int F, int S, int L, int I>
[[gnu::always_inline]] inline void step(typename Isa::Vec* acc, typename Isa::Vec& b, typename Isa::Vec& c,
                                        const float* p) {
  using Vec = typename Isa::Vec;
  constexpr int kL = Isa::kLanes;
  auto at = [p](int k) { return Isa::load(p + kL * k); };
  if constexpr (I < A) {
    keep(b);
    Vec v = I < L ? Isa::add(b, at(I)) : Isa::add(b, c);
    keep(v);
  }
  if constexpr (I < F) {
    Vec& a = acc[I % kChains<Isa>];
    a = A + I < L ? Isa::fmadd(at(A + I), b, a) : Isa::fmadd(a, b, c);
  }
  if constexpr (I < S) {
    keep(b);
    Vec v = Isa::shuffle(b, c);
    keep(v);
  }
  if constexpr (A + F + I < L) {
    Vec v = at(A + F + I);
    keep(v);
  }
}

template <class Isa, int A, int F, int S, int L, std::size_t... I>
[[gnu::always_inline]] inline void round(typename Isa::Vec* acc, typename Isa::Vec& b, typename Isa::Vec& c,
                                         const float* p, std::index_sequence<I...>) {
  (step<Isa, A, F, S, L, static_cast<int>(I)>(acc, b, c, p), ...);
}

// Seconds per round of `rounds` rounds.
template <class Isa, int A, int F, int S, int L>
[[gnu::noinline, gnu::flatten]] double run(long rounds) {
  using Vec = typename Isa::Vec;
  alignas(64) static float buffer[kBufferVectors * Isa::kLanes];
  Vec acc[kChains<Isa>];
  for (Vec& a : acc) a = Isa::set1(1.0f);
  static_assert(L <= kBufferVectors, "a round's loads would reuse addresses (kBufferVectors)");
  Vec b = Isa::set1(0.999f), c = Isa::set1(1e-3f);
  constexpr int kMost =
      A > F ? (A > S ? (A > L ? A : L) : (S > L ? S : L)) : (F > S ? (F > L ? F : L) : (S > L ? S : L));
  const auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < rounds; ++r) {
    const float* p = buffer;
    asm volatile("" : "+r"(p));
    round<Isa, A, F, S, L>(acc, b, c, p, std::make_index_sequence<kMost>{});
  }
  const auto t1 = std::chrono::steady_clock::now();
  for (Vec& a : acc) keep(a);
  return std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(rounds);
}

// The best of reps timings of about `seconds` each, per round.
template <class Isa, int A, int F, int S, int L>
[[gnu::flatten]] double best(double seconds, int reps) {
  long rounds = 256;
  while (run<Isa, A, F, S, L>(rounds) * static_cast<double>(rounds) < seconds / 2 && rounds < (1L << 30)) rounds *= 2;
  double b = run<Isa, A, F, S, L>(rounds);
  for (int r = 1; r < reps; ++r) {
    const double t = run<Isa, A, F, S, L>(rounds);
    b = t < b ? t : b;
  }
  return b;
}

// The mix of shape D at radius R (MixFn): seconds per output vector, and per FMA of 64 FMAs alone.
template <class Isa, RowDesc D, int R>
[[gnu::flatten]] MixTiming time(double seconds, int reps) {
  constexpr RowCounts c = row_counts<Isa>(D, R);
  constexpr int kFmas = 64;
  MixTiming t;
  t.vector_s =
      best<Isa, per_round(c.adds), per_round(c.fmas), per_round(c.shuffles), per_round(c.loads)>(seconds, reps) /
      kRoundVectors;
  t.fma_s = best<Isa, 0, kFmas, 0, 0>(seconds, reps) / kFmas;
  return t;
}

}  // namespace bw::iso3dfd::mix
