// The AVX-512 variant of the row kernel (this file is compiled with the AVX-512 target flags).
#include "iso3dfd/rows_avx512.hpp"

#include <iterator>

#include "iso3dfd/rows_kernel.hpp"

namespace bw::iso3dfd {

// The first shape is the one run() uses (4 planes x 2 vectors, every x pair by valignd: the
// fewest cycles per vector of the Zen 4 and Zen 5 models, whose FP pipes bind before the loads;
// split in two passes, which keeps the y rows in L1: 1.12-1.19x one pass on Zen 4, one thread,
// bench/results/2026-11-26-zen4.md); the others are tested against the reference and cover every
// path: P = 1 .. 8, V = 1 .. 4, x pairs loaded or shifted, one pass, split or ring (--row-shape
// runs any of them). The rings bring fewer bytes from L2 (43 a point against 56 at 272^3) and ran 1.06x
// the first shape on one core with the grid in L2, but 0.98-1.00x on a grid in memory (Intel Xeon with
// AMX, bench/results/2026-11-27-intel-amx.md): not the default at radius 8. Below it the 2R + 1 rows of
// a plane stay in L1 without a split, and the default is one pass of 2x4 at radius 1, 2 and 4: on Zen 4,
// one thread, a grid in L2 (258x34x34), 1.35x the split at radius 1 and level with the best at 2; 4x2
// at 2 and the 8x2 ring at 4 ran 1.05-1.2x faster there but 0.85x and 0.73x step by step on a grid in
// memory, and level swept (bench/results/2026-11-28-orders-zen4.md).
constexpr RowShape kAvx512Shapes[] = {row_shape<Avx512, RowDesc{4, 2, 0, true}>(),
                                      row_shape<Avx512, RowDesc{4, 2, 0, true, false, 4}>(),
                                      row_shape<Avx512, RowDesc{8, 2, 0, true, true, 4}>(),
                                      row_shape<Avx512, RowDesc{16, 2, 0, true, true, 4}>(),
                                      row_shape<Avx512, RowDesc{4, 2, 0}>(),
                                      row_shape<Avx512, RowDesc{8, 2, 0, true, true}>(),
                                      row_shape<Avx512, RowDesc{16, 2, 0, true, true}>(),
                                      row_shape<Avx512, RowDesc{5, 1, 0x81, true, true}>(),
                                      row_shape<Avx512, RowDesc{4, 2, 0x3}>(),
                                      row_shape<Avx512, RowDesc{2, 4, 0}>(),
                                      row_shape<Avx512, RowDesc{1, 4, 0}>(),
                                      row_shape<Avx512, RowDesc{1, 1, 0xff}>(),
                                      row_shape<Avx512, RowDesc{3, 2, 0x81}>(),
                                      row_shape<Avx512, RowDesc{8, 1, 0}>(),
                                      row_shape<Avx512, RowDesc{2, 2, 0x0f}>(),
                                      row_shape<Avx512, RowDesc{3, 1, 0x81, true}>()};

extern const RowVariant kRowsAvx512;
constinit const RowVariant kRowsAvx512{"avx512",
                                       16,
                                       "16-float vectors aligned to the row; x pairs by valignd; P planes x V vectors, "
                                       "a z window and the coefficients in registers",
                                       kAvx512Shapes,
                                       static_cast<int>(std::size(kAvx512Shapes)),
                                       default_shapes(kAvx512Shapes, {{1, RowDesc{2, 4, 0}},
                                                                      {2, RowDesc{2, 4, 0}},
                                                                      {3, RowDesc{2, 4, 0}},
                                                                      {4, RowDesc{2, 4, 0}},
                                                                      {5, RowDesc{4, 2, 0, true}},
                                                                      {6, RowDesc{4, 2, 0, true}},
                                                                      {7, RowDesc{4, 2, 0, true}},
                                                                      {8, RowDesc{4, 2, 0, true}}})};

}  // namespace bw::iso3dfd
