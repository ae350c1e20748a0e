// The optimised kernel: OpenMP over cache blocks (static or dynamic), rows vectorised along x.
// With AVX-512 each row is covered by 16-float vectors aligned to the row's memory (the first and
// last masked), so the centre, y, z, vel and next accesses are aligned; the x neighbours come from
// valignd of aligned vectors or unaligned loads, and four planes are computed together so each z
// neighbour is loaded once for all of them (rows.hpp). Without AVX-512 the same loops are left to
// the compiler's vectoriser.
#include <omp.h>
#include <xmmintrin.h>

#include <utility>

#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

std::string kernel_isa() { return kRowIsa; }

void flush_denormals() { _mm_setcsr(_mm_getcsr() | 0x8040); }  // FTZ | DAZ

void run(Fields& f, const Grid& g, const Blocks& b, Schedule s, int threads, int steps, const Coefficients& c) {
  const auto boxes = decompose(g, b);
  const long nboxes = static_cast<long>(boxes.size());
  const RowKernel kernel(c, g.n1, g.n1 * g.n2);
  omp_set_schedule(s == Schedule::Static ? omp_sched_static : omp_sched_dynamic, s == Schedule::Static ? 0 : 1);
#pragma omp parallel num_threads(threads)
  {
    flush_denormals();
    const float* vel = f.vel;
    float* prev = f.prev;
    float* next = f.next;
    for (int t = 0; t < steps; ++t) {
#pragma omp for schedule(runtime)
      for (long i = 0; i < nboxes; ++i) kernel.box(prev, next, vel, g, boxes[static_cast<std::size_t>(i)]);
      std::swap(prev, next);
    }
  }
  if (steps % 2) std::swap(f.prev, f.next);
}

}  // namespace bw::iso3dfd
