// FMA-throughput kernel: independent accumulator chains, enough of them to cover the FMA latency
// times the FMA pipes, in the widest vectors the build targets. Measures peak GFlop/s per thread
// and over all threads, in double and single precision.
#pragma once
#include <cstdint>

namespace bw::peak {

enum class Precision { Double, Single };

// Independent chains; 16 covers a 4-cycle latency on 2 pipes (8 needed) with room to spare.
inline constexpr int kAccumulators = 16;

// Vector lanes of the precision in the compiled ISA, and the flops of one chain iteration
// (2 per lane per accumulator: one multiply and one add per FMA).
int lanes(Precision p);
double flops_per_iteration(Precision p);
const char* isa();

// Runs iters iterations on the calling thread; returns a checksum of the accumulators (finite,
// so the work cannot be optimised away and a broken kernel is caught).
double run_chain(Precision p, std::uint64_t iters);

struct Measurement {
  double gflops;        // over all threads: total flops / slowest thread's time
  double seconds;       // slowest thread's time of the best repetition
  std::uint64_t iters;  // per thread
  bool checksum_ok;
};

// nthreads threads each run the chain (already bound by the caller); the iteration count is
// calibrated so one repetition takes about target_s; the best of reps is returned.
Measurement measure(Precision p, int nthreads, double target_s, int reps);

}  // namespace bw::peak
