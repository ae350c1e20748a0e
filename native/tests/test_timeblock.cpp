// Temporal blocking (iso3dfd/timeblock.hpp) against the step-by-step kernel: the same wavefield bit
// for bit, for every depth up to what the slabs allow (6 at most; with the team sweeping together,
// up to 6 whatever the slabs), step counts that are not multiples of the depth, 1, 2 and 3 threads
// (a slab shared on both faces), tiles along y or none, every variant this CPU runs; the refusal of
// a depth the slabs cannot hold. The model that plans the sweeps: test_timemodel.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "common/isa.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd/timeblock.hpp"
#include "iso3dfd/timemodel.hpp"

#include "tests/iso3dfd_arrays.hpp"

using namespace bw::iso3dfd;

namespace {

using test_support::Arrays;

// Interior 21 x 29 x 51: odd extents, 2 threads' slabs of 25 and 26 planes (depth 4 at most), 3
// threads' of 17 (depth 2 for the middle one).
const Grid kGrid{37, 45, 67};
const Blocks kBlocks{13, 7, 9};

std::vector<float> stepwise(int threads, int steps) {
  Arrays a(kGrid);
  initialise(a.fields(), kGrid, kBlocks, false, threads);
  Fields f = a.fields();
  run(f, kGrid, kBlocks, Schedule::Static, threads, steps, coefficients());
  return std::vector<float>(f.prev, f.prev + kGrid.points());
}

std::vector<float> blocked(int threads, int steps, const TimeTiles& t) {
  Arrays a(kGrid);
  initialise(a.fields(), kGrid, kBlocks, false, threads);
  Fields f = a.fields();
  run_time_blocked(f, kGrid, kBlocks, t, threads, steps, coefficients());
  return std::vector<float>(f.prev, f.prev + kGrid.points());
}

// isa, threads, tile rows, the team sweeping together
using Case = std::tuple<std::string, int, std::size_t, bool>;

}  // namespace

class TimeBlockMatches : public ::testing::TestWithParam<Case> {};

// Every depth the slabs allow (up to 6; shared, up to 6 whatever the slabs), each for 1 step, one
// sweep, two sweeps and one more step, and 7 steps; in wavefront steps of 8 planes, and of 3 (thinner
// than the radius and than some shapes' planes, and no divisor of the slabs).
TEST_P(TimeBlockMatches, SameWavefieldAsStepByStep) {
  const auto [isa, threads, rows, shared] = GetParam();
  if (!find_row_variant(isa)) GTEST_SKIP() << row_variant_refusal(isa);
  select_isa(isa);
  for (int depth = 1; depth <= std::min(6, max_depth(kGrid, threads, shared)); ++depth)
    for (int steps : {1, depth, 2 * depth + 1, 7})
      for (std::size_t chunk : {8, 3}) {
        const auto want = stepwise(threads, steps);
        const auto got = blocked(threads, steps, TimeTiles{depth, rows, chunk, shared});
        std::size_t differ = 0;
        for (std::size_t i = 0; i < want.size(); ++i) differ += want[i] != got[i];
        EXPECT_EQ(differ, 0u) << isa << " threads " << threads << " depth " << depth << " rows " << rows << " steps "
                              << steps << " shared " << shared << " chunk " << chunk;
        EXPECT_EQ(l2_norm(got.data(), got.size()), l2_norm(want.data(), want.size()));
        EXPECT_GT(l2_norm(got.data(), got.size()), 1.0);
      }
  select_isa("auto");
}

INSTANTIATE_TEST_SUITE_P(Depths, TimeBlockMatches,
                         ::testing::Combine(::testing::ValuesIn(bw::isa_names()), ::testing::Values(1, 2, 3),
                                            ::testing::Values(0u, 8u, 11u), ::testing::Bool()));

TEST(TimeBlock, DeepestSweepFollowsTheSlabs) {
  EXPECT_GT(max_depth(kGrid, 1), 1000);
  EXPECT_EQ(max_depth(kGrid, 2), 25 / 8 + 1);    // slabs of 25 and 26 planes, one shared face each
  EXPECT_EQ(max_depth(kGrid, 3), 17 / 16 + 1);   // the middle slab of 17 shares both faces
  EXPECT_EQ(max_depth(Grid{37, 45, 18}, 2), 1);  // one plane each
  EXPECT_GT(max_depth(kGrid, 3, true), 1000);    // the team sweeping together: any depth
  EXPECT_EQ(tile_rows_for(kGrid, 0, 4), 29u);    // the whole interior
  EXPECT_EQ(tile_rows_for(kGrid, 8, 4), 24u);    // at least 8 (depth - 1)
  EXPECT_EQ(tile_rows_for(kGrid, 100, 2), 29u);  // at most the interior
}

TEST(TimeBlock, RefusesADepthTheSlabsCannotHold) {
  Arrays a(kGrid);
  initialise(a.fields(), kGrid, kBlocks, false, 2);
  Fields f = a.fields();
  EXPECT_THROW(run_time_blocked(f, kGrid, kBlocks, TimeTiles{5, 0, 8}, 2, 5, coefficients()), std::invalid_argument);
  EXPECT_THROW(run_time_blocked(f, kGrid, kBlocks, TimeTiles{0, 0, 8}, 1, 5, coefficients()), std::invalid_argument);
}

// A sweep over a region (a rank's part with its deep halo, iso3dfd/timeblock.hpp): level d equals
// the step-by-step run's on the region's last level, bit for bit, with faces marked on one side, the
// other, both and neither, 1 to 3 threads, tiles along y or none, the team on slabs or together.
TEST(TimeBlock, RegionSweepMatchesOnItsLastLevel) {
  const Grid g{61, 69, 91};
  const Blocks b{13, 7, 9};
  // the box whose points level d must give (x from 24 up, y below 40, z 30 to 60), and the faces
  // marked (another rank's part beyond them)
  const std::array<std::size_t, 3> own_lo{24, 8, 30}, own_hi{53, 40, 60};
  SweepRegion base;
  base.shrinks = {{{true, false}, {false, true}, {true, true}}};
  for (int threads : {1, 2, 3})
    for (std::size_t rows : {0u, 11u})
      for (bool shared : {false, true})
        for (int depth = 1; depth <= 3; ++depth) {
          SweepRegion r = base;
          for (std::size_t d = 0; d < 3; ++d) {
            r.lo[d] = own_lo[d] - (r.shrinks[d][0] ? kSeedRadius * static_cast<std::size_t>(depth - 1) : 0);
            r.hi[d] = own_hi[d] + (r.shrinks[d][1] ? kSeedRadius * static_cast<std::size_t>(depth - 1) : 0);
          }
          if (depth > max_depth(r, threads, shared)) continue;
          Arrays want(g), got(g);
          initialise(want.fields(), g, b, false, 1);
          Fields w = want.fields();
          run(w, g, b, Schedule::Static, 1, 3, coefficients());  // spread the source first
          got = want;
          Fields f = got.fields();
          if (w.prev != want.prev.data()) std::swap(f.prev, f.next);
          run(w, g, b, Schedule::Static, 1, depth, coefficients());
          const Arrays before = got;
          sweep_region(f, g, b, TimeTiles{depth, rows, 8, shared}, r, threads, coefficients());
          std::size_t differ = 0, nonzero = 0, outside = 0;
          for (std::size_t z = 0; z < g.n3; ++z)
            for (std::size_t y = 0; y < g.n2; ++y)
              for (std::size_t x = 0; x < g.n1; ++x) {
                const std::size_t i = g.index(x, y, z);
                const bool in =
                    x >= r.lo[0] && x < r.hi[0] && y >= r.lo[1] && y < r.hi[1] && z >= r.lo[2] && z < r.hi[2];
                if (!in) outside += (got.prev[i] != before.prev[i]) + (got.next[i] != before.next[i]);
              }
          EXPECT_EQ(outside, 0u) << "a sweep wrote outside its region";
          for (std::size_t z = own_lo[2]; z < own_hi[2]; ++z)
            for (std::size_t y = own_lo[1]; y < own_hi[1]; ++y)
              for (std::size_t x = own_lo[0]; x < own_hi[0]; ++x) {
                differ += w.prev[g.index(x, y, z)] != f.prev[g.index(x, y, z)];
                nonzero += w.prev[g.index(x, y, z)] != 0.0f;
              }
          EXPECT_EQ(differ, 0u) << "threads " << threads << " rows " << rows << " shared " << shared << " depth "
                                << depth;
          EXPECT_GT(nonzero, 1000u);
        }
}

// The deepest sweep of a region counts the faces it shrinks at only on slabs that share a face with
// another thread.
TEST(TimeBlock, RegionDepthCountsItsFacesBesideSharedOnes) {
  SweepRegion r;
  r.lo = {8, 8, 8};
  r.hi = {40, 40, 72};  // 64 planes
  EXPECT_EQ(max_depth(r, 2), 32 / 8 + 1);
  r.shrinks[2] = {true, false};
  EXPECT_EQ(max_depth(r, 2), 32 / 16 + 1);  // the lower slab: its shared face and the region's
  EXPECT_GT(max_depth(r, 1), 1000);         // one slab shares no face: the region's alone bind nothing
  EXPECT_GT(max_depth(r, 2, true), 1000);
}

// A sweep runs the register shape --row-shape names: a ring's chunks of planes within the skewed
// boxes give the same wavefield as its own step-by-step run, bit for bit.
TEST(TimeBlock, RingShapeSameWavefieldAsStepByStep) {
  if (!find_row_variant("avx512")) GTEST_SKIP() << row_variant_refusal("avx512");
  select_isa("avx512");
  for (const char* shape : {"8x2-ring", "5x1-ring-x81"}) {
    select_shape(shape);
    EXPECT_TRUE(active_shape(kSeedRadius).ring) << shape;
    for (int depth : {2, 4})
      for (int threads : {1, 2})
        for (bool shared : {false, true}) {
          const auto want = stepwise(threads, 2 * depth + 1);
          const auto got = blocked(threads, 2 * depth + 1, TimeTiles{depth, 11, 8, shared});
          std::size_t differ = 0;
          for (std::size_t i = 0; i < want.size(); ++i) differ += want[i] != got[i];
          EXPECT_EQ(differ, 0u) << shape << " depth " << depth << " threads " << threads << " shared " << shared;
        }
  }
  select_shape("default");
  select_isa("auto");
}

// The sweeps run the shape select_swept_shape names and single steps the step shape: sweeps with a
// swept shape S give the wavefield of sweeps whose step shape is S, bit for bit, and single steps
// are untouched by it; "same" returns the sweeps to the step shape.
TEST(TimeBlock, SweptShapeRunsTheSweepsOnly) {
  for (const auto& [isa, shape] : {std::pair{"avx512", "8x2-ring"}, {"avx512", "4x2"}, {"avx2", "4x1"}}) {
    if (!find_row_variant(isa)) continue;
    select_isa(isa);
    select_shape(shape);
    const TimeTiles tiles{3, 11, 8, false};
    const auto want = blocked(2, 7, tiles);
    select_shape("default");
    const auto steps = stepwise(2, 3);
    select_swept_shape(shape);
    EXPECT_EQ(shape_name(swept_shape(kSeedRadius)), shape);
    EXPECT_NE(shape_name(active_shape(kSeedRadius)), shape);
    EXPECT_TRUE(blocked(2, 7, tiles) == want) << isa << " " << shape;
    EXPECT_TRUE(stepwise(2, 3) == steps) << isa << " " << shape;
    select_swept_shape("same");
    EXPECT_EQ(&swept_shape(kSeedRadius), &active_shape(kSeedRadius));
    EXPECT_THROW(select_swept_shape("9x9"), std::invalid_argument);
  }
  select_isa("auto");
}

TEST(TimeBlockGrammar, OneGrammarForOneProcessAndRanks) {
  EXPECT_TRUE(bw::iso3dfd::parse_time_block("auto").automatic());
  EXPECT_FALSE(bw::iso3dfd::parse_time_block("auto").measure);
  EXPECT_TRUE(bw::iso3dfd::parse_time_block("measure").measure);
  EXPECT_EQ(bw::iso3dfd::parse_time_block("7").depth, 7);
  EXPECT_EQ(bw::iso3dfd::parse_time_block("64").depth, bw::iso3dfd::kMaxTimeBlock);
  for (const char* bad : {"0", "65", "deep", "", "-1", "2.5", "Auto"}) {
    try {
      bw::iso3dfd::parse_time_block(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const bw::UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--time-block '") + bad + "' must be auto, measure or a whole number from 1 to 64");
    }
  }
  EXPECT_EQ(bw::iso3dfd::time_block_grammar()["max"], bw::iso3dfd::kMaxTimeBlock);
}
