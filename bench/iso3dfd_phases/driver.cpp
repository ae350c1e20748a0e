// Times the AVX-512 (or, built with -DBW_AVX2, the AVX2) row kernel of bandwall's ISO3DFD engine
// (native/iso3dfd/rows_kernel.hpp) on one thread, in cycles per output vector of 16 points, with the clock measured
// beside every repetition by a chain of dependent integer adds (one per cycle). bench/iso3dfd_phases.py builds it once
// per variant of the kernel (a part left out, or the y or z neighbours read from rows that stay in L1) to show what
// each part costs. The numbers it computes are not checked: it measures time only.
//
// BW_SHAPE is the register shape (RowDesc: planes, vectors, x_loads[, split]).
//
//   driver N1 N2 N3 B1 B2 B3 STEPS REPS
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef BW_AVX2
#include "iso3dfd/rows_avx2.hpp"
using Isa = bw::iso3dfd::Avx2;
#else
#include "iso3dfd/rows_avx512.hpp"
using Isa = bw::iso3dfd::Avx512;
#endif
#include "iso3dfd/rows_kernel.hpp"

using namespace bw::iso3dfd;

namespace {

double clock_ghz() {
  const long n = 100000000L;
  long x = 0;
  const auto a = std::chrono::steady_clock::now();
  for (long i = 0; i < n; i += 8)
    asm volatile("add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n"
                 : "+r"(x));
  return n / std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() / 1e9;
}

float* field(std::size_t points) {
  const std::size_t huge = std::size_t{2} << 20, bytes = (points * sizeof(float) + huge - 1) / huge * huge;
  auto* p = static_cast<float*>(std::aligned_alloc(huge, bytes));
  if (!p) std::exit(1);
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: driver N1 N2 N3 B1 B2 B3 STEPS REPS\n");
    return 2;
  }
  const Grid g{std::strtoul(argv[1], nullptr, 10), std::strtoul(argv[2], nullptr, 10),
               std::strtoul(argv[3], nullptr, 10)};
  const std::size_t b1 = std::strtoul(argv[4], nullptr, 10), b2 = std::strtoul(argv[5], nullptr, 10),
                    b3 = std::strtoul(argv[6], nullptr, 10);
  const int steps = std::atoi(argv[7]), reps = std::atoi(argv[8]);
  float *prev = field(g.points()), *next = field(g.points()), *vel = field(g.points());
  for (std::size_t i = 0; i < g.points(); ++i) {
    prev[i] = static_cast<float>(i % 1000) * 1e-3f;
    next[i] = 0;
    vel[i] = 0.01f;
  }
  Coefficients c{};
  for (int k = 0; k <= kSeedRadius; ++k) c[k] = ((k & 1) ? -1e-3f : 1e-3f) / static_cast<float>(k + 1);
  _mm_setcsr(_mm_getcsr() | 0x8040);
  // Blocks as the engine cuts them: x at multiples of b1 from the row's start (a last piece under
  // half a block joins the one before), then y, then z.
  std::vector<Box> boxes;
  const std::size_t e1 = g.n1 - kSeedRadius, e2 = g.n2 - kSeedRadius, e3 = g.n3 - kSeedRadius;
  for (std::size_t z = kSeedRadius; z < e3; z += b3)
    for (std::size_t y = kSeedRadius; y < e2; y += b2)
      for (std::size_t x = kSeedRadius; x < e1;) {
        std::size_t end = (x / b1 + 1) * b1;
        if (end + b1 / 2 >= e1) end = e1;
        boxes.push_back(Box{x, end, y, std::min(y + b2, e2), z, std::min(z + b3, e3)});
        x = end;
      }
  constexpr RowDesc kShape{BW_SHAPE};
  const double vectors = static_cast<double>(g.interior()) * steps / 16;  // of 16 points, whatever the ISA
  for (int r = 0; r < reps; ++r) {
    const double before = clock_ghz();
    const auto a = std::chrono::steady_clock::now();
    for (int t = 0; t < steps; ++t) {
      for (const Box& bx : boxes) row_box<Isa, kShape, kSeedRadius>(c, prev, next, vel, g, bx);
      std::swap(prev, next);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    const double ghz = (before + clock_ghz()) / 2;
    std::printf("%.2f\n", s * ghz * 1e9 / vectors);
  }
  return 0;
}
