// Running one STREAM kernel: static decomposition over threads, first-touch (or serial)
// initialisation, timed repetitions and STREAM-style validation.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "stream/kernels.hpp"

namespace bw::stream {

// Initial values and the scalar (STREAM's own, with c non-zero so scale checks a product).
inline constexpr double kInitA = 1.0;
inline constexpr double kInitB = 2.0;
inline constexpr double kInitC = 0.5;
inline constexpr double kScalar = 3.0;
// Relative error above which a run fails (STREAM's epsilon for double).
inline constexpr double kEpsilon = 1e-13;
// Chunk boundaries fall on multiples of this many elements: 4 KiB, so each thread's chunk is
// vector aligned and owns whole pages for first touch.
inline constexpr std::size_t kChunkAlign = 512;

// Elements [first, second) of thread t out of nthreads (the same decomposition everywhere).
std::pair<std::size_t, std::size_t> chunk(std::size_t n, int t, int nthreads);

// Writes the initial values into the arrays the kernel uses: each thread its own chunk, or the
// calling thread everything when serial (the master-touches-all placement).
void initialise(const Kernel& k, const Arrays& x, std::size_t n, int nthreads, bool serial);

// One repetition over all threads; returns the dot sum (0 for other kernels), seconds in *secs.
double run_once(const Kernel& k, const Arrays& x, std::size_t n, int nthreads, bool nt, double* secs);

struct ArrayCheck {
  char name;
  double expected;
  double avg_rel_error;
  std::size_t wrong;  // elements whose relative error exceeds kEpsilon
};

struct Validation {
  bool passed = true;
  std::vector<ArrayCheck> arrays;
  double dot_expected = 0, dot_got = 0, dot_rel_error = 0;
  std::string message;  // why it failed, empty when passed
};

// STREAM's check: every used array against the value the kernel's reference reaches from the
// initial values after reps repetitions (replayed one by one, as BabelStream does, so a kernel
// that accumulates such as nstream validates), and dot's sum against n * a * b.
Validation validate(const Kernel& k, const Arrays& x, std::size_t n, int reps, int nthreads, double dot_sum);

// For tests of the failure path only: with BANDWALL_STREAM_INJECT_ERROR set, spoils one element of
// the array the kernel writes (or the dot sum), so that validate must refuse the run.
void inject_error_for_tests(const Kernel& k, const Arrays& x, std::size_t n, double& dot_sum);

}  // namespace bw::stream
