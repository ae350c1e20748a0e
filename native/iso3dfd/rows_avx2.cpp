// The AVX2 + FMA variant of the row kernel (this file is compiled with -mavx2 -mfma).
#include "iso3dfd/rows_avx2.hpp"

#include <iterator>

namespace bw::iso3dfd {
namespace {

// flatten: everything the kernel calls is inlined here, so no AVX2 copy of a shared inline
// function can be picked by the linker for code that runs on other CPUs.
template <int P, int V>
[[gnu::flatten]] void box(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g,
                          const Box& b) {
  const avx2::RowKernel k(c, g.n1, g.n1 * g.n2);
  k.box<P, V>(prev, next, vel, g, b);
}

// Per output vector of a P x V block, counted from rows_avx2.hpp (the coefficients are broadcast
// from memory where they are used: 9 per vector in the x part, 8 per block in the y part, 8 per
// vector column in the z part).
template <int P, int V>
constexpr RowCounts counts() {
  const double x = (V + 2.0) / V + 9, y = 16 + 8.0 / (P * V), z = (2.0 * P + 14) / P + 8.0 / P, update = 3;
  return RowCounts{x + y + z + update, 9 + 8 + 8 + 2, 8 + 8 + 8 + 1, 16};
}

constexpr RowShape kShapes[] = {{2, 2, &box<2, 2>}, {1, 1, &box<1, 1>}, {1, 4, &box<1, 4>},
                                {2, 1, &box<2, 1>}, {2, 3, &box<2, 3>}, {2, 4, &box<2, 4>},
                                {3, 2, &box<3, 2>}, {4, 1, &box<4, 1>}, {4, 2, &box<4, 2>}};

}  // namespace

extern const RowVariant kRowsAvx2;
constinit const RowVariant kRowsAvx2{
    "avx2",
    8,
    "8-float vectors aligned to the row; x neighbours by vperm2f128 + vpalignr; 2 planes x 2 vectors in registers",
    kShapes,
    static_cast<int>(std::size(kShapes)),
    counts<2, 2>()};

}  // namespace bw::iso3dfd
