// The optimised ISO3DFD kernel against the plain reference on small odd grids, with blocks that do
// not divide the interior, 1 and 2 threads, static and dynamic schedules, both initialisations.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/isa.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/selfcheck.hpp"
#include "iso3dfd/rows.hpp"

#include "tests/iso3dfd_arrays.hpp"

using namespace bw::iso3dfd;

namespace {

using test_support::Arrays;

// The reference's latest wavefield after steps.
std::vector<float> reference(const Grid& g, int steps) {
  Arrays a(g);
  initialise(a.fields(), g, Blocks{g.n1, g.n2, g.n3}, true, 1);
  Fields f = a.fields();
  run_reference(f, g, steps, coefficients(g.radius));
  return std::vector<float>(f.prev, f.prev + g.points());
}

std::vector<float> optimised(const Grid& g, const Blocks& b, int threads, Schedule s, bool serial, int steps,
                             const Coefficients& c = coefficients()) {
  Arrays a(g);
  initialise(a.fields(), g, b, serial, threads);
  Fields f = a.fields();
  run(f, g, b, s, threads, steps, c);
  return std::vector<float>(f.prev, f.prev + g.points());
}

constexpr int kSteps = 9;
constexpr double kTolerance = 1e-5;

}  // namespace

using Case = std::tuple<Blocks, int, Schedule, bool>;
class Iso3dfdMatches : public ::testing::TestWithParam<Case> {};

TEST_P(Iso3dfdMatches, OptimisedEqualsReferenceAndNormIsInvariant) {
  const Grid g{37, 29, 41};
  auto [blocks, threads, schedule, serial] = GetParam();
  static const std::vector<float> ref = reference(g, kSteps);
  static const double ref_norm = l2_norm(ref.data(), ref.size());
  auto out = optimised(g, blocks, threads, schedule, serial, kSteps);
  Difference d = compare(out.data(), ref.data(), out.size());
  EXPECT_LT(d.max_rel, kTolerance);
  EXPECT_GT(ref_norm, 1.0);
  EXPECT_NEAR(l2_norm(out.data(), out.size()) / ref_norm, 1.0, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Grid37x29x41, Iso3dfdMatches,
                         ::testing::Combine(::testing::Values(Blocks{13, 7, 9}, Blocks{37, 29, 41}, Blocks{5, 3, 2},
                                                              Blocks{21, 1, 6}),
                                            ::testing::Values(1, 2),
                                            ::testing::Values(Schedule::Static, Schedule::Dynamic), ::testing::Bool()));

TEST(Iso3dfd, HaloStaysZero) {
  const Grid g{33, 19, 27};
  auto out = optimised(g, Blocks{7, 5, 4}, 2, Schedule::Static, false, 5);
  for (std::size_t z = 0; z < g.n3; ++z)
    for (std::size_t y = 0; y < g.n2; ++y)
      for (std::size_t x = 0; x < g.n1; ++x) {
        bool interior = x >= 8 && x < g.n1 - 8 && y >= 8 && y < g.n2 - 8 && z >= 8 && z < g.n3 - 8;
        if (!interior) {
          ASSERT_EQ(out[g.index(x, y, z)], 0.0f) << x << "," << y << "," << z;
        }
      }
}

TEST(Iso3dfd, ZeroStepsLeaveTheSource) {
  const Grid g{52, 56, 30};  // large enough that no cube is clipped by the halo
  auto out = optimised(g, Blocks{16, 8, 8}, 2, Schedule::Static, false, 0);
  std::vector<float> src(g.points(), 0.0f);
  add_source(src.data(), g);
  EXPECT_EQ(out, src);
  // Nested cubes of side 10, 8, 6, 4, 2 holding 1, 10, 100, 1e3, 1e4: each shell's points.
  double sum = 0;
  const double val[] = {1, 10, 100, 1e3, 1e4};
  const int side[] = {10, 8, 6, 4, 2};
  for (int i = 0; i < 5; ++i) {
    double inner = i < 4 ? std::pow(side[i + 1], 3) : 0;
    sum += (std::pow(side[i], 3) - inner) * val[i] * val[i];
  }
  EXPECT_NEAR(l2_norm(out.data(), out.size()), std::sqrt(sum), 1e-9 * std::sqrt(sum));
}

TEST(Iso3dfd, SmallestGridKeepsTheSourceInside) {
  const Grid g{17, 17, 17};
  auto out = optimised(g, Blocks{1, 1, 1}, 1, Schedule::Static, true, 3);
  auto ref = reference(g, 3);
  EXPECT_LT(compare(out.data(), ref.data(), out.size()).max_rel, kTolerance);
}

TEST(Iso3dfd, PerturbedKernelIsCaught) {
  const Grid g{37, 29, 41};
  Coefficients c = coefficients();
  c[1] *= 1.01f;
  auto out = optimised(g, Blocks{13, 7, 9}, 2, Schedule::Static, false, kSteps, c);
  auto ref = reference(g, kSteps);
  EXPECT_GT(compare(out.data(), ref.data(), out.size()).max_rel, 100 * kTolerance);
}

// The every-run self-check: a few hundred points of the last step against the scalar formula.
// It passes the kernel as it is, and fails a kernel with a perturbed coefficient, with blocks that
// do and do not divide the grid.
static std::size_t self_check(const Grid& g, const Blocks& b, int steps, const Coefficients& c, bool* passed) {
  std::vector<float> prev(g.points()), next(g.points()), vel(g.points());
  Fields f{prev.data(), next.data(), vel.data()};
  initialise(f, g, b, false, 2);
  SelfCheck check(g, b);
  run(f, g, b, Schedule::Static, 2, steps - 1, c);
  check.before_last_step(f);
  run(f, g, b, Schedule::Static, 2, 1, c);
  *passed = check.after_last_step(f, coefficients());
  EXPECT_TRUE(check.checked());
  EXPECT_EQ(check.to_json()["points"], check.points());
  return check.points();
}

TEST(Iso3dfdSelfCheck, PassesTheKernelAndCatchesAPerturbedOne) {
  for (auto [g, b] : {std::pair{Grid{37, 29, 41}, Blocks{13, 7, 9}}, std::pair{Grid{64, 48, 80}, Blocks{64, 24, 32}}})
    for (int steps : {1, 2, 5}) {
      bool ok = false;
      const std::size_t points = self_check(g, b, steps, coefficients(), &ok);
      EXPECT_TRUE(ok) << g.n1 << " steps " << steps;
      EXPECT_GE(points, 100u);
      EXPECT_LE(points, 600u);
      Coefficients c = coefficients();
      c[1] *= 1.01f;
      self_check(g, b, steps, c, &ok);
      EXPECT_FALSE(ok) << g.n1 << " steps " << steps;
    }
}

TEST(Iso3dfd, DecompositionCoversEachPointOnce) {
  const Grid g{37, 29, 41};
  for (bool edges : {false, true}) {
    std::vector<int> hits(g.points(), 0);
    for (const Box& b : decompose(g, Blocks{13, 7, 9}, edges))
      for (std::size_t z = b.z0; z < b.z1; ++z)
        for (std::size_t y = b.y0; y < b.y1; ++y)
          for (std::size_t x = b.x0; x < b.x1; ++x) ++hits[g.index(x, y, z)];
    std::size_t covered = 0;
    for (int h : hits) {
      ASSERT_LE(h, 1);
      covered += static_cast<std::size_t>(h);
    }
    EXPECT_EQ(covered, edges ? g.points() : g.interior());
  }
}

TEST(Iso3dfd, XBlocksAreCutAtMultiplesOfTheBlock) {
  const Grid g{272, 20, 20};
  std::vector<std::size_t> starts;
  for (const Box& b : decompose(g, Blocks{64, 4, 4}))
    if (b.y0 == kSeedRadius && b.z0 == kSeedRadius) starts.push_back(b.x0);
  EXPECT_EQ(starts, (std::vector<std::size_t>{8, 64, 128, 192}));  // [256, 264) joins [192, 256)
  starts.clear();
  for (const Box& b : decompose(g, Blocks{4, 4, 4}))  // a block smaller than the halo
    if (b.y0 == kSeedRadius && b.z0 == kSeedRadius && b.x0 < 20) starts.push_back(b.x0);
  EXPECT_EQ(starts, (std::vector<std::size_t>{8, 12, 16}));
}

TEST(Iso3dfd, CoefficientsAreScaled) {
  Coefficients c = coefficients();
  EXPECT_FLOAT_EQ(c[0], static_cast<float>(3 * -3.0548446 / 2500));
  EXPECT_FLOAT_EQ(c[8], static_cast<float>(-2.42812e-6 / 2500));
  EXPECT_FLOAT_EQ(kVelocity, 9.0f);
}

// Every register-block shape of every row-kernel variant against the reference, on rows whose
// vectors are not aligned to the array; variants this binary or CPU lacks are skipped, saying so.
class RowVariantMatches : public ::testing::TestWithParam<std::string> {};

TEST_P(RowVariantMatches, EveryRegisterBlockShape) {
  const std::string isa = GetParam();
  const RowVariant* v = find_row_variant(isa);
  if (!v) GTEST_SKIP() << row_variant_refusal(isa);
  for (const int radius : kKernelRadii) {
    const Grid g{37, 29, 41, radius};
    const Coefficients c = coefficients(radius);
    const auto ref = reference(g, kSteps);
    for (const RowShape& shape : v->shape_list())
      for (const Blocks& b : {Blocks{13, 7, 9}, Blocks{37, 29, 41}, Blocks{3, 2, 5}}) {
        Arrays a(g);
        initialise(a.fields(), g, b, true, 1);
        Fields f = a.fields();
        flush_denormals();
        const BoxFn box = shape.box(radius);
        ASSERT_NE(box, nullptr) << isa << " " << shape_name(shape) << " is not compiled for radius " << radius;
        for (int t = 0; t < kSteps; ++t) {
          for (const Box& bx : decompose(g, b)) box(c, f.prev, f.next, f.vel, g, bx);
          std::swap(f.prev, f.next);
        }
        EXPECT_LT(compare(f.prev, ref.data(), g.points()).max_rel, kTolerance)
            << isa << " at radius " << radius << ": " << shape_name(shape) << ", blocks " << b.b1 << "x" << b.b2 << "x"
            << b.b3;
      }
  }
}

// Every prefetch setting a shape can run: none, rows into L1 and into L2 (a block function holds the
// update once per cache and once without prefetches, rows_kernel.hpp's row_box), each against the
// reference at every radius.
TEST_P(RowVariantMatches, EveryPrefetchSetting) {
  const std::string isa = GetParam();
  const RowVariant* v = find_row_variant(isa);
  if (!v) GTEST_SKIP() << row_variant_refusal(isa);
  for (const char* setting : {"none", "2:L1", "1:L2"}) {
    select_prefetch(parse_prefetch(setting));
    for (const int radius : kKernelRadii) {
      const Grid g{37, 29, 41, radius};
      const Coefficients c = coefficients(radius);
      const auto ref = reference(g, kSteps);
      for (const RowShape& shape : v->shape_list()) {
        const Blocks b{13, 7, 9};
        Arrays a(g);
        initialise(a.fields(), g, b, true, 1);
        Fields f = a.fields();
        flush_denormals();
        const BoxFn box = shape.box(radius);
        for (int t = 0; t < kSteps; ++t) {
          for (const Box& bx : decompose(g, b)) box(c, f.prev, f.next, f.vel, g, bx);
          std::swap(f.prev, f.next);
        }
        EXPECT_LT(compare(f.prev, ref.data(), g.points()).max_rel, kTolerance)
            << isa << " at radius " << radius << ": " << shape_name(shape) << ", prefetch " << setting;
      }
    }
  }
  select_prefetch(std::nullopt);
}

// --prefetch's written form: none or a number of rows 0-8, optionally :L1 or :L2 (either case);
// anything else names no setting.
TEST(Iso3dfd, PrefetchSettingsReadAndWrite) {
  struct Case {
    const char* text;
    int rows;  // -1: not a setting
    PrefetchCache cache;
    const char* name;
  };
  const Case cases[] = {
      {"none", 0, kDefaultPrefetchCache, "0"},
      {"0", 0, kDefaultPrefetchCache, "0"},
      {"1", 1, PrefetchCache::L2, "1:L2"},
      {"2:L1", 2, PrefetchCache::L1, "2:L1"},
      {"8:l1", 8, PrefetchCache::L1, "8:L1"},
      {"3:l2", 3, PrefetchCache::L2, "3:L2"},
      {"9", -1, {}, ""},
      {"9:L1", -1, {}, ""},
      {"-1", -1, {}, ""},
      {"1:", -1, {}, ""},
      {":L1", -1, {}, ""},
      {"1:L3", -1, {}, ""},
      {"1:L1x", -1, {}, ""},
      {"1 ", -1, {}, ""},
      {"", -1, {}, ""},
      {"far", -1, {}, ""},
  };
  for (const Case& k : cases) {
    const std::optional<Prefetch> p = parse_prefetch(k.text);
    if (k.rows < 0) {
      EXPECT_FALSE(p.has_value()) << k.text;
      continue;
    }
    ASSERT_TRUE(p.has_value()) << k.text;
    EXPECT_EQ(p->rows, k.rows) << k.text;
    if (k.rows > 0) {
      EXPECT_EQ(p->cache, k.cache) << k.text;
    }
    EXPECT_EQ(prefetch_name(*p), k.name) << k.text;
    EXPECT_EQ(parse_prefetch(prefetch_name(*p)), p) << k.text;  // the name reads back as the setting
  }
  EXPECT_EQ(prefetch_name(default_prefetch(1)), "0");
  EXPECT_EQ(prefetch_name(default_prefetch(3)), "1:L2");
}

// The counts the in-core model uses come from each shape's description: the same arithmetic for
// every shape, loads in place of shuffles for the x pairs a shape loads, fewer z loads per vector
// for more planes, and the variant's counts are those of the shape run() uses.
TEST_P(RowVariantMatches, CountsFollowEachShapesDescription) {
  const RowVariant* v = find_row_variant(GetParam());
  if (!v) GTEST_SKIP() << row_variant_refusal(GetParam());
  if (v->shapes[0].any_radius) GTEST_SKIP() << v->isa << " is left to the compiler and not counted";
  for (const int R : kKernelRadii)
    for (const RowShape& s : v->shape_list()) {
      SCOPED_TRACE(shape_name(s) + " at radius " + std::to_string(R));
      const RowCounts c = s.counts_at(R);
      EXPECT_EQ(c.fmas, 3 * R + 3);  // the centre's multiply, R FMAs in each of x, y and z, 2 in the update
      EXPECT_EQ(c.adds, 3 * R);      // one per neighbour pair
      unsigned mask = s.x_loads & ((1u << R) - 1u);  // distances beyond the radius are not there to load
      const int loaded = std::popcount(mask);
      // y rows, next, vel and the centre again, the x pairs loaded, the aligned vectors, the z window
      // and the partial sums read back (split shapes)
      // (a ring: one plane an output and the 2R about the chunk, the centre among them; a split's
      // first pass: a y window over its rows, 2R a vector for one row)
      const double z = s.ring ? (s.planes + 2.0 * R) / s.planes - 1 : (2.0 * s.planes + 2 * R - 2) / s.planes;
      const double y = s.split ? (2.0 * s.rows + 2 * R - 2) / s.rows : 2.0 * R;
      EXPECT_TRUE(s.split || s.rows == 1) << "only a split's first pass has rows";
      const double least = y + 3 + 2.0 * loaded + (s.vectors + 2.0) / s.vectors + z + (s.split ? 1 : 0);
      EXPECT_GE(c.loads, least);
      EXPECT_LE(c.loads, least + 3 * R + 1);  // and at most a broadcast per coefficient and part more
      if (loaded == R) {
        EXPECT_EQ(c.shuffles, 0);
      }
      for (const RowShape& t : v->shape_list()) {
        if (t.split != s.split || t.ring != s.ring) continue;
        if (t.planes == s.planes && t.vectors == s.vectors && t.x_loads == s.x_loads && t.rows > s.rows && R > 1) {
          EXPECT_LT(t.counts_at(R).loads, c.loads);  // the y window shares rows among more outputs
        }
        if (t.rows != s.rows) continue;
        if (t.vectors == s.vectors && t.x_loads == s.x_loads && t.planes > s.planes) {
          // (at radius 1 the z window is two planes an output however many planes share it)
          if (R > 1) {
            EXPECT_LT(t.counts_at(R).loads, c.loads);
          }
          EXPECT_LE(t.counts_at(R).loads, c.loads);
        }
        if (t.planes == s.planes && t.vectors == s.vectors && std::popcount(t.x_loads & ((1u << R) - 1u)) > loaded) {
          EXPECT_GT(t.counts_at(R).loads, c.loads);
          EXPECT_LT(t.counts_at(R).shuffles, c.shuffles);
        }
      }
    }
}

// run() on 2 threads with each variant selected, and select_isa's refusals.
TEST_P(RowVariantMatches, RunWithTheVariantSelected) {
  const std::string isa = GetParam();
  if (!find_row_variant(isa)) {
    EXPECT_THROW(select_isa(isa), std::invalid_argument);
    GTEST_SKIP() << row_variant_refusal(isa);
  }
  const Grid g{37, 29, 41};
  EXPECT_EQ(select_isa(isa), isa);
  auto out = optimised(g, Blocks{13, 7, 9}, 2, Schedule::Dynamic, false, kSteps);
  select_isa("auto");
  EXPECT_LT(compare(out.data(), reference(g, kSteps).data(), out.size()).max_rel, kTolerance) << isa;
}

INSTANTIATE_TEST_SUITE_P(Isa, RowVariantMatches, ::testing::ValuesIn(bw::isa_names()));

TEST(Iso3dfd, AutoPicksTheBestVariantThisCpuRuns) {
  const RowVariant* best = find_row_variant("auto");
  ASSERT_NE(best, nullptr);
  EXPECT_TRUE(bw::cpu_has_isa(best->isa));
  // No variant built before it in the list (best first) runs on this CPU.
  for (const RowVariant* v : row_variants()) {
    if (v == best) break;
    EXPECT_FALSE(bw::cpu_has_isa(v->isa)) << v->isa << " runs here but auto chose " << best->isa;
  }
  EXPECT_THROW(select_isa("sse9"), std::invalid_argument);
}

TEST(Iso3dfd, SlabsSplitTheInteriorEvenly) {
  const Grid g{37, 29, 41};
  for (int t : {1, 2, 3, 7, 25, 40}) {
    const auto s = slabs(g, t);
    ASSERT_EQ(s.size(), static_cast<std::size_t>(t) + 1);
    EXPECT_EQ(s.front(), static_cast<std::size_t>(kSeedRadius));
    EXPECT_EQ(s.back(), g.n3 - kSeedRadius);
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      EXPECT_LE(s[i], s[i + 1]);
      EXPECT_LE(s[i + 1] - s[i],
                (g.n3 - 2 * kSeedRadius + static_cast<std::size_t>(t) - 1) / static_cast<std::size_t>(t));
    }
  }
}
