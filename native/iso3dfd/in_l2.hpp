// The row kernel itself with its data in L2: the shape a run uses, on a block of the run's rows
// small enough that L2 holds its three arrays, computed again and again on the calling thread's
// core and timed. Between the operation mix (rows_mix.hpp: the same operations, independent, from
// registers and L1) and the run (its data from L3 or memory), it is what the kernel reaches once
// nothing beyond L2 feeds it: its loads, L1 misses, address arithmetic and dependences included.
// On the Intel Emerald Rapids guest (one thread, AVX-512) it took 1.26x-1.68x the cycles of its mix
// at radius 1-8, and runs of 256^3 step by step reached 32%-46% of it at radius 1-2 (L3 feeds
// them) and 68%-91% at 3-8 (bench/results/2026-12-06-emr-kernel-in-l2.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

struct KernelInL2 {
  double seconds_per_point = 0;  // the best of the timings; 0: unavailable (it says why)
  std::string unavailable;
  std::size_t nx = 0, ny = 0, nz = 0;  // the block: points along x, rows along y, planes along z
  std::size_t bytes = 0;               // prev with its halos and the block's rows of next and vel
  double max_rel_difference = 0;       // against the generic variant's loops, one step on the block
};

// The block run's rows give (its interior along x, halved until the arrays fit), up to 16 rows and
// at least 8 planes (a multiple of the shape's), the bytes it touches within half of l2_bytes; the
// shape's block function on it, checked once against the generic variant's loops (a difference
// beyond 1e-5 of the norm throws std::runtime_error: the kernel is wrong), then timed.
KernelInL2 kernel_in_l2(const RowShape& shape, const Grid& run, std::uint64_t l2_bytes);

}  // namespace bw::iso3dfd
