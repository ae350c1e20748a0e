// The AVX-512 variant of the row kernel (this file is compiled with the AVX-512 target flags).
#include "iso3dfd/rows_avx512.hpp"

#include <iterator>

namespace bw::iso3dfd {
namespace {

// flatten: everything the kernel calls is inlined here, so no AVX-512 copy of a shared inline
// function can be picked by the linker for code that runs on other CPUs.
template <int P, int V>
[[gnu::flatten]] void box(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g,
                          const Box& b) {
  const avx512::RowKernel k(c, g.n1, g.n1 * g.n2);
  k.box<P, V>(prev, next, vel, g, b);
}

// Per output vector of a P x V block, counted from rows_avx512.hpp as for AVX2, with valignd
// for the x pairs (16 shuffles per vector).
template <int P, int V>
constexpr RowCounts counts() {
  const double x = (V + 2.0) / V + 9, y = 16 + 8.0 / (P * V), z = (2.0 * P + 14) / P + 8.0 / P, update = 3;
  return RowCounts{x + y + z + update, 9 + 8 + 8 + 2, 8 + 8 + 8 + 1, 16};
}

// The first shape is the one run() uses: 1 plane x 4 vectors, measured 1.12x the 2 x 4 block on Zen 5
// (bench/README.md, "AVX-512 register blocks"); the others are tested against the reference.
constexpr RowShape kShapes[] = {{1, 4, &box<1, 4>}, {1, 1, &box<1, 1>}, {2, 4, &box<2, 4>}, {2, 1, &box<2, 1>},
                                {2, 2, &box<2, 2>}, {3, 2, &box<3, 2>}, {4, 1, &box<4, 1>}, {4, 3, &box<4, 3>}};

}  // namespace

extern const RowVariant kRowsAvx512;
constinit const RowVariant kRowsAvx512{
    "avx512",
    16,
    "16-float vectors aligned to the row; x neighbours by valignd; 1 plane x 4 vectors in registers",
    kShapes,
    static_cast<int>(std::size(kShapes)),
    counts<1, 4>()};

}  // namespace bw::iso3dfd
