// FMA-throughput kernel: independent accumulator chains, enough of them to cover the FMA latency
// times the FMA pipes, in the widest vectors of an instruction set. Measures peak GFlop/s per
// thread and over all threads, in double and single precision. The chains are built once per
// instruction set (AVX-512, AVX2 + FMA, and the build's baseline), each in its own file with its
// own target flags; the best this CPU runs is chosen at start-up, select_isa() forces another.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/dispatch.hpp"

namespace bw::peak {

enum class Precision { Double, Single };

// Independent chains a variant runs: enough to cover the FMA latency times the FMA pipes (4-5 cycles
// x 2 pipes: 8-10), and few enough that they all stay in registers beside the two constants. 16
// chains in 16 registers (AVX2, SSE) spill two to the stack, and their store-to-load round trip
// then bounds the loop (on AMD Zen 3, 1.78 GHz of a 3.2 GHz clock); AVX-512 has 32 registers.
constexpr int accumulators_for(int vector_registers) { return vector_registers >= 32 ? 16 : 12; }

// One instruction set's chains (initialised at compile time: no code of its file may run before
// the CPU is known to have its instructions).
struct Variant {
  const char* isa;  // avx512, avx2 or generic (common/isa.hpp's names)
  int vector_bits;
  bool fma;          // a fused multiply-add instruction; false: a multiply and an add (the same flops)
  int lanes_dp;      // doubles per vector (floats: twice as many)
  int accumulators;  // independent chains (accumulators_for the variant's vector registers)
  double (*chain_dp)(std::uint64_t iters);
  double (*chain_sp)(std::uint64_t iters);
};

// The variants built into this binary, best first (generic is always there).
const std::vector<const Variant*>& variants();

// The variant named isa ("auto": the best) if it is built in and this CPU runs it, else nullptr.
const Variant* find_variant(const std::string& isa);

// Makes the variant named isa ("auto" or a name) the one measured; UsageError (one line) when it
// is not built in or this CPU lacks it. Returns the name chosen.
std::string select_isa(const std::string& isa);

// config.isa_choice: the variant, how it was chosen and on what figures.
nlohmann::json isa_choice_json();

// The chosen variant.
const Variant& variant();

// Vector lanes of the precision in the chosen variant, and the flops of one chain iteration
// (2 per lane per accumulator of the variant: one multiply and one add per FMA).
int lanes(Precision p);
double flops_per_iteration(Precision p);

// Runs iters iterations on the calling thread; returns a checksum of the accumulators (their sum,
// which converges to their number: finite, so the work cannot be optimised away and a broken
// kernel is caught).
double run_chain(Precision p, std::uint64_t iters);

struct Measurement {
  double gflops;        // over all threads: total flops / slowest thread's time
  double seconds;       // slowest thread's time of the best repetition
  std::uint64_t iters;  // per thread
  bool checksum_ok;
  std::vector<double> rounds;  // GFlop/s of every repetition, in order (their spread)
};

// The iterations one chain runs in about target_s on the calling thread.
std::uint64_t calibrate(Precision p, double target_s);

// One repetition: nthreads threads (already bound) each run iters iterations after a barrier.
struct Repetition {
  double slowest_s;
  bool checksum_ok;
};
Repetition repetition(Precision p, int nthreads, std::uint64_t iters);

// Dispatch of the variants (common/dispatch.hpp), for the measuring driver's choice.
Dispatch<Variant>& dispatch();

// nthreads threads each run the chain (already bound by the caller); the iteration count is
// calibrated so one repetition takes about target_s; the best of reps is returned.
Measurement measure(Precision p, int nthreads, double target_s, int reps);

}  // namespace bw::peak
