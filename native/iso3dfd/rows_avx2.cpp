// The AVX2 + FMA variant of the row kernel (this file is compiled with -mavx2 -mfma).
#include "iso3dfd/rows_avx2.hpp"

#include <iterator>

#include "iso3dfd/rows_kernel.hpp"

namespace bw::iso3dfd {

// The first shape is the one run() uses (2 planes x 2 vectors: 16 registers hold no larger
// block; in one pass: split in two it was level with one pass on Zen 4); the others are tested
// against the reference.
constexpr RowShape kAvx2Shapes[] = {
    row_shape<Avx2, RowDesc{2, 2, 0}>(),        row_shape<Avx2, RowDesc{4, 1, 0}>(),
    row_shape<Avx2, RowDesc{2, 3, 0}>(),        row_shape<Avx2, RowDesc{1, 1, 0}>(),
    row_shape<Avx2, RowDesc{2, 2, 0x77}>(),     row_shape<Avx2, RowDesc{3, 2, 0x3}>(),
    row_shape<Avx2, RowDesc{4, 2, 0}>(),        row_shape<Avx2, RowDesc{2, 2, 0, true}>(),
    row_shape<Avx2, RowDesc{3, 1, 0x3, true}>()};

extern const RowVariant kRowsAvx2;
constinit const RowVariant kRowsAvx2{"avx2",
                                     8,
                                     "8-float vectors aligned to the row; x pairs by vperm2f128 + vpalignr; P planes x "
                                     "V vectors and a z window in registers",
                                     kAvx2Shapes,
                                     static_cast<int>(std::size(kAvx2Shapes)),
                                     default_shapes(kAvx2Shapes, {{1, RowDesc{2, 2, 0}},
                                                                  {2, RowDesc{2, 2, 0}},
                                                                  {3, RowDesc{2, 2, 0}},
                                                                  {4, RowDesc{2, 2, 0}},
                                                                  {5, RowDesc{2, 2, 0}},
                                                                  {6, RowDesc{2, 2, 0}},
                                                                  {7, RowDesc{2, 2, 0}},
                                                                  {8, RowDesc{2, 2, 0}}})};

}  // namespace bw::iso3dfd
