// The pipelined STREAM kernels of seed 002: each thread cuts its chunk into blocks; an engine
// brings the next `depth` blocks of the inputs into the cache (copies into a per-thread ring, or
// fills the cache in place) while the thread computes the current block from the cache with the
// stream kernels' own chunk functions and non-temporal stores. Strategy all: the engine fetches
// every input; split: the thread streams the first input (src1) itself and the engine fetches the
// others (src2). Results are bit-identical to the CPU-only kernels: the same chunk functions on the
// same elements in the same order (dot carries its accumulators across blocks, see DotAcc).
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "engine/engine.hpp"
#include "stream/kernels.hpp"

namespace bw::pipeline {

enum class Strategy { All, Split };

struct Plan {
  const stream::Kernel* kernel = nullptr;
  std::size_t block_elems = 0;  // a multiple of 512 (4 KiB)
  int depth = 4;
  Strategy strategy = Strategy::All;
  bool nt = true;
  engine::Kind kind = engine::Kind::Copy;
};

// Inputs a kernel reads, in order (src1, src2): the arrays it uses except the one it writes.
std::vector<char> inputs(const stream::Kernel& k);

// Inputs the engine fetches: every input for all; for split all but src1 when there are two.
std::vector<char> engine_inputs(const stream::Kernel& k, Strategy s);

// What one computing thread owns: a queue and, for copies, a ring of depth blocks per engine input.
struct Lane {
  std::vector<std::unique_ptr<engine::Queue>> queues;
  std::vector<double*> rings;
  ~Lane();
};

// Opens the queues (queue index first_queue + i for engine input i) and allocates the rings,
// touched by the calling thread so they are its own.
void open_lane(Lane& lane, engine::Engine& e, const Plan& p, int first_queue);

// Time a thread spent computing versus waiting for the engine, for the record.
struct LaneTimes {
  std::size_t blocks = 0, direct_blocks = 0;
};

// Runs the kernel over elements [begin, end) of x on the calling thread; returns the dot partial
// (0 for other kernels), identical bit for bit to the kernel's chunk function on the same range.
double run_chunk(const Plan& p, const stream::Arrays& x, std::size_t begin, std::size_t end, Lane& lane,
                 LaneTimes* times = nullptr);

}  // namespace bw::pipeline
