// What a register shape of the row kernel is (RowDesc) and what it issues per output vector
// (row_counts): the one description the kernel's code (iso3dfd/rows_kernel.hpp), its counts and its
// operation mix (iso3dfd/rows_mix.hpp) all follow. Included only by the variant files' headers.
#pragma once

#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

// What a register shape of the row kernel is: P planes along z x V vectors along x computed
// together, the x distances (bit K-1 for distance K) whose pairs come from unaligned loads rather
// than lane shifts, and whether the block runs in two passes (split). The kernel's code and its
// counts both follow it.
struct RowDesc {
  int planes = 1, vectors = 1;
  unsigned x_loads = 0;
  bool split = false;
  // ring: a split shape whose second pass marches along z vector column by vector column, the
  // 17 planes a point's z neighbours span held in registers as a ring (one load of prev a point,
  // the centre included, plus the 16 planes about the chunk); planes is then the chunk's planes.
  bool ring = false;
  // rows: the rows of one plane a split shape's first pass computes together, a window sliding
  // along y over their y neighbours as the z window does over planes ((2 Q + 2R - 2) / Q loads a
  // vector instead of 2R).
  int rows = 1;
  constexpr bool x_loaded(int k) const { return (x_loads >> (k - 1)) & 1u; }
};

// The operations per output vector the kernel issues for shape d, from the same description the
// code follows and Isa's costs (Isa::pair_shuffles(K): shuffles for the pair at distance K from
// the aligned vectors; Isa::needs_prepare(K): whether that pair uses the shuffle Isa::prepare
// makes of each pair of adjacent aligned vectors, V + 1 per V vectors;
// Isa::kCoefficientsInRegisters: no broadcast loads).
template <class Isa>
constexpr RowCounts row_counts(RowDesc d, int R) {
  const double P = d.planes, V = d.vectors;
  double shuffles = 0;
  int loaded = 0;
  bool prepared = false;
  for (int k = 1; k <= R; ++k)
    if (d.x_loaded(k)) {
      ++loaded;
    } else {
      shuffles += Isa::pair_shuffles(k);
      prepared = prepared || Isa::needs_prepare(k);
    }
  if (prepared) shuffles += (V + 1) / V;
  const double x = (V + 2) / V + 2.0 * loaded;  // aligned vectors of the row, unaligned pairs
  // 2R rows, or for a split shape's first pass a window over rows
  const double y = d.split ? (2.0 * d.rows + 2 * (R - 1)) / d.rows : 2.0 * R;
  // the z window: 2 P + 2R - 2 planes for P planes, or for a ring one plane a point and the 2R
  // about the chunk (which also gives the centre)
  const double z = d.ring ? (P + 2 * R) / P : (2 * P + 2 * (R - 1)) / P;
  // the centre again (not for a ring), next and vel; the partial sums
  const double update = (d.ring ? 2 : 3) + (d.split ? 1 : 0);
  // Broadcasts: per plane and distance in x (shared by the V vectors), per block and distance in
  // y, per vector column and distance in z.
  const double coefficients =
      Isa::kCoefficientsInRegisters ? 0.0 : (R + 1) / V + R / (P * V) + static_cast<double>(R) / P;
  // FMA pipes: the centre's multiply and R FMAs in x, R in y, R in z, 2 in the update. Adds: one
  // per neighbour pair.
  return RowCounts{x + y + z + update + coefficients, 1.0 + 3 * R + 2, 3.0 * R, shuffles};
}

}  // namespace bw::iso3dfd
