// Every radius of the stencil against a reference written apart from the kernels: the weights by
// Fornberg's recursion (not the closed form fd_weights uses), a float32 stencil loop of its own, the
// seed's initial field. The optimised kernel, step by step and swept, on 1 and 2 threads, must give
// the reference's norm within 1e-4 (relative) at every radius; ctest runs this binary once under
// each dispatch ceiling the CPU allows, so every variant is held to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "common/placement.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd/timeblock.hpp"
#include "tests/iso3dfd_arrays.hpp"

using namespace bw::iso3dfd;
using bw::iso3dfd::test_support::Arrays;

namespace {

// Fornberg (1988, "Generation of finite difference formulas on arbitrarily spaced grids"): the
// weights of the m-th derivative at x0 from the points x, in the order given.
std::vector<double> fornberg(int m, double x0, const std::vector<double>& x) {
  const int n = static_cast<int>(x.size()) - 1;
  // d[k][i][j]: weight of x[j] for the k-th derivative from the points x[0..i]
  std::vector d(m + 1, std::vector(n + 1, std::vector<double>(n + 1, 0.0)));
  d[0][0][0] = 1;
  double c1 = 1, c4 = x[0] - x0;
  for (int i = 1; i <= n; ++i) {
    const int mn = std::min(i, m);
    double c2 = 1;
    const double c5 = c4;
    c4 = x[i] - x0;
    for (int j = 0; j < i; ++j) {
      const double c3 = x[i] - x[j];
      c2 *= c3;
      if (j == i - 1) {
        for (int k = mn; k >= 1; --k) d[k][i][i] = c1 * (k * d[k - 1][i - 1][i - 1] - c5 * d[k][i - 1][i - 1]) / c2;
        d[0][i][i] = -c1 * c5 * d[0][i - 1][i - 1] / c2;
      }
      for (int k = mn; k >= 1; --k) d[k][i][j] = (c4 * d[k][i - 1][j] - k * d[k - 1][i - 1][j]) / c3;
      d[0][i][j] = c4 * d[0][i - 1][j] / c3;
    }
    c1 = c2;
  }
  return d[m][n];
}

// The second derivative's weights on -R .. R: w[k] for distance k (w[0] the centre).
std::vector<double> exact_weights(int radius) {
  std::vector<double> x;
  for (int k = -radius; k <= radius; ++k) x.push_back(k);
  const std::vector<double> all = fornberg(2, 0.0, x);
  return std::vector<double>(all.begin() + radius, all.end());
}

// The reference: float32, point by point, one thread, with the exact weights (the seed's own at
// its radius, which the seed prints to 8 digits), scaled by 1/dxyz^2, the centre counted for the
// three dimensions.
double reference_norm(const Grid& g, int steps) {
  std::vector<double> w = exact_weights(g.radius);
  if (g.radius == kSeedRadius) {
    const Coefficients seed = coefficients(kSeedRadius);
    for (int k = 0; k <= kSeedRadius; ++k) w[static_cast<std::size_t>(k)] = seed[static_cast<std::size_t>(k)];
  } else {
    for (double& v : w) v /= static_cast<double>(kDxyz) * kDxyz;
    w[0] *= 3;
  }
  std::vector<float> c(w.begin(), w.end());
  Arrays a(g);
  initialise(a.fields(), g, Blocks{g.n1, g.n2, g.n3}, true, 1);
  std::vector<float> p = a.prev, q = a.next;
  const long r = g.radius, sy = static_cast<long>(g.n1), sz = static_cast<long>(g.n1 * g.n2);
  for (int t = 0; t < steps; ++t) {
    for (long z = r; z < static_cast<long>(g.n3) - r; ++z)
      for (long y = r; y < static_cast<long>(g.n2) - r; ++y)
        for (long x = r; x < static_cast<long>(g.n1) - r; ++x) {
          const long i = (z * static_cast<long>(g.n2) + y) * sy + x;
          float lap = c[0] * p[static_cast<std::size_t>(i)];
          for (long k = 1; k <= r; ++k) {
            const auto at = [&](long j) { return p[static_cast<std::size_t>(j)]; };
            lap += c[static_cast<std::size_t>(k)] *
                   (at(i - k) + at(i + k) + at(i - k * sy) + at(i + k * sy) + at(i - k * sz) + at(i + k * sz));
          }
          const std::size_t u = static_cast<std::size_t>(i);
          q[u] = 2.0f * p[u] - q[u] + a.vel[u] * lap;
        }
    std::swap(p, q);
  }
  return l2_norm(p.data(), p.size());
}

constexpr int kSteps = 12;
constexpr double kNormTolerance = 1e-4;

}  // namespace

TEST(Iso3dfdOrders, WeightsAreFornbergsAtEveryRadius) {
  for (int r = 1; r <= kMaxRadius; ++r) {
    const auto mine = fd_weights(r);
    const auto exact = exact_weights(r);
    for (int k = 0; k <= r; ++k)
      EXPECT_NEAR(mine[static_cast<std::size_t>(k)], exact[static_cast<std::size_t>(k)], 1e-12)
          << "radius " << r << " distance " << k;
    for (int k = r + 1; k <= kMaxRadius; ++k) EXPECT_EQ(coefficients(r)[static_cast<std::size_t>(k)], 0.0f);
  }
  // The seed's printed coefficients at its radius, its 4th (7.572087e-2) not the exact 7.542087e-2.
  EXPECT_FLOAT_EQ(coefficients(kSeedRadius)[3], static_cast<float>(7.572087e-2 / (kDxyz * kDxyz)));
  EXPECT_NEAR(fd_weights(kSeedRadius)[3], 7.542087542e-2, 1e-10);
  EXPECT_DOUBLE_EQ(fd_weights(1)[0], -2.0);
  EXPECT_DOUBLE_EQ(fd_weights(1)[1], 1.0);
}

TEST(Iso3dfdOrders, AccountingFollowsTheRadius) {
  EXPECT_EQ(flops_per_point(kSeedRadius), 61);  // the seed's count
  EXPECT_EQ(flops_per_point(1), 12);
  EXPECT_EQ(min_dim(1), 3u);
  EXPECT_EQ(Grid({9, 9, 9, 1}).interior(), 343u);
  EXPECT_EQ(kernel_radius_index(0), -1);
  EXPECT_EQ(kernel_radius_index(kMaxRadius + 1), -1);
  for (const int r : kKernelRadii) EXPECT_GE(kernel_radius_index(r), 0);
}

class RadiusMatches : public ::testing::TestWithParam<int> {};

// Step by step on 1 and 2 threads, and swept (depth 2 and 3, slabs and the team together). On an
// emulated CPU (BANDWALL_TESTS_EMULATED, the guests of tests/vm/isa_cases.py), step by step on one
// thread: what differs there is the variant the CPU runs; threads and sweeps run on the host.
TEST_P(RadiusMatches, NormWithinTheReferences) {
  const int radius = GetParam();
  const bool emulated = std::getenv("BANDWALL_TESTS_EMULATED") != nullptr;
  const Grid packed{45, 38 + 2 * static_cast<std::size_t>(radius), 40 + 6 * static_cast<std::size_t>(radius), radius};
  const double want = reference_norm(packed, kSteps);
  ASSERT_GT(want, 0);
  const Blocks b{16, 7, 9};
  const Coefficients c = coefficients(radius);
  // rows and planes packed, rows padded to 48 floats (three 64-byte lines), planes padded too, and
  // the arrays led to start the rows' interior on a line: the same norm
  for (const int layout : {0, 1, 2, 3}) {
    Grid g = packed;
    if (layout > 0) g.p1 = padded_pitch(packed.n1);
    if (layout > 1) g.p2 = padded_plane(g.pitch(), g.n2);
    if (layout > 2) g.lead = line_lead(g.pitch(), radius);
    auto norm_of = [&](auto&& advance) {
      Arrays a(g);
      Fields f = a.fields();
      initialise(f, g, b, true, 1);
      advance(f);
      return l2_norm(f.prev, g.points());
    };
    for (int threads : {1, 2}) {
      if (emulated && threads > 1) break;
      SCOPED_TRACE("radius " + std::to_string(radius) + ", " + std::to_string(threads) + " threads, " + kernel_isa() +
                   " (" + radius_path(g) + "), row pitch " + std::to_string(g.pitch()) + ", plane " +
                   std::to_string(g.plane()) + ", lead " + std::to_string(g.lead));
      const double steps = norm_of([&](Fields& f) { run(f, g, b, Schedule::Static, threads, kSteps, c); });
      EXPECT_LT(std::fabs(steps - want) / want, kNormTolerance) << "step by step";
      if (emulated) continue;
      for (int depth : {2, 3})
        for (bool shared : {false, true}) {
          if (!shared && depth > max_depth(g, threads)) continue;
          const TimeTiles tiles{depth, 8, 8, shared};
          const double swept = norm_of([&](Fields& f) { run_time_blocked(f, g, b, tiles, threads, kSteps, c); });
          EXPECT_LT(std::fabs(swept - want) / want, kNormTolerance)
              << "sweeps of " << depth << (shared ? " by the team" : " by slabs");
        }
    }
  }
}

// --row-pitch auto: the smallest odd count of 64-byte lines that holds a row; packed, or a count of
// floats from n1 up; anything else refused in one line.
TEST(Iso3dfdOrders, RowPitchIsAnOddCountOfLines) {
  EXPECT_EQ(padded_pitch(45), 48u);
  EXPECT_EQ(padded_pitch(48), 48u);
  EXPECT_EQ(padded_pitch(49), 80u);    // 64 floats are 4 lines: 5
  EXPECT_EQ(padded_pitch(258), 272u);  // 256 floats (1 KiB) are 16 lines: 17
  EXPECT_EQ(padded_pitch(514), 528u);
  EXPECT_EQ(parse_row_pitch("auto", 258), 272u);
  EXPECT_EQ(parse_row_pitch("packed", 258), 258u);
  EXPECT_EQ(parse_row_pitch("300", 258), 300u);
  for (const char* bad : {"257", "0", "-3", "wide", ""}) EXPECT_THROW(parse_row_pitch(bad, 258), bw::UsageError) << bad;
  Grid g{10, 4, 3, 1};
  EXPECT_EQ(g.points(), 120u);
  g.p1 = 16;
  EXPECT_EQ(g.points(), 192u);
  EXPECT_EQ(g.index(1, 2, 1), (1 * 4 + 2) * 16 + 1u);
  EXPECT_EQ(g.interior(), 8u * 2 * 1);
}

// The lead of a padded layout starts x = R on a 64-byte line where rows are whole lines; the blocks
// along x are then cut at multiples of the block from the interior's first point, on vector
// boundaries, as they are from x = 0 without a lead.
TEST(Iso3dfdOrders, TheLeadStartsTheInteriorOnALine) {
  EXPECT_EQ(line_lead(272, 8), 8u);
  EXPECT_EQ(line_lead(272, 4), 12u);
  EXPECT_EQ(line_lead(272, 1), 15u);
  EXPECT_EQ(line_lead(48, 16), 0u);
  EXPECT_EQ(line_lead(264, 4), 0u);  // rows not whole lines: no line to start on
  Grid g{264, 20, 20, 4};
  EXPECT_EQ(x_cuts(g, 64), (std::vector<std::size_t>{4, 64, 128, 192, 260}));
  g.p1 = 272;
  g.lead = line_lead(g.pitch(), 4);
  EXPECT_EQ(x_cuts(g, 64), (std::vector<std::size_t>{4, 68, 132, 196, 260}));
  for (std::size_t x : x_cuts(g, 64)) EXPECT_EQ((g.lead + x) % 16, 0u) << x;
  EXPECT_EQ(x_cuts(g, 512), (std::vector<std::size_t>{4, 260}));
}

// --plane-pitch auto: the plane's rows rounded up to an odd count of 64-byte lines; packed, or a
// count of floats from pitch x n2 up; anything else refused in one line. The index and the points
// follow it.
TEST(Iso3dfdOrders, PlanePitchIsAnOddCountOfLines) {
  EXPECT_EQ(padded_plane(272, 272), 272u * 272 + 16);  // 4624 lines: 4625
  EXPECT_EQ(padded_plane(272, 65), 272u * 65);         // 1105 lines already odd
  EXPECT_EQ(padded_plane(45, 10), 464u);               // 450 floats: 29 lines
  EXPECT_EQ(parse_plane_pitch("auto", 272, 64), 272u * 64 + 16);
  EXPECT_EQ(parse_plane_pitch("packed", 272, 64), 272u * 64);
  EXPECT_EQ(parse_plane_pitch("20000", 272, 64), 20000u);
  for (const char* bad : {"17407", "0", "-3", "tall", ""})
    EXPECT_THROW(parse_plane_pitch(bad, 272, 64), bw::UsageError) << bad;
  Grid g{10, 4, 3, 1};
  g.p1 = 16;
  g.p2 = 80;
  EXPECT_EQ(g.plane(), 80u);
  EXPECT_EQ(g.points(), 240u);
  EXPECT_EQ(g.index(1, 2, 1), 80u + 2 * 16 + 1);
}

// --array-offset auto: next a third and vel two thirds of a 4 KiB page (whole lines) after prev, in
// buffers that each start on a page; a multiple of 16 floats from 0 to 1008 as given; anything else
// refused in one line. Each buffer holds its array's lead and offsets, and fields_in puts the
// arrays there, so the same point of the three lies at three addresses within a page.
TEST(Iso3dfdOrders, ArraysStartAThirdOfAPageApart) {
  EXPECT_EQ(parse_array_offset("auto"), kArrayOffset);
  EXPECT_EQ(kArrayOffset % 16, 0u);
  EXPECT_EQ(kArrayOffset * sizeof(float), 4096u / 3 / 64 * 64);
  EXPECT_EQ(parse_array_offset("0"), 0u);
  EXPECT_EQ(parse_array_offset("1008"), 1008u);
  for (const char* bad : {"17", "-16", "1024", "third", ""})
    EXPECT_THROW(parse_array_offset(bad), bw::UsageError) << bad;
  Grid g{40, 30, 20, 4};
  g.p1 = padded_pitch(g.n1);
  g.lead = line_lead(g.pitch(), g.radius);
  for (std::size_t offset : {std::size_t{0}, kArrayOffset, std::size_t{1008}}) {
    g.offset = offset;
    const bw::Placement first_touch = bw::Placement::parse("first-touch");
    const bw::Buffer prev(array_bytes(g, 0), first_touch), next(array_bytes(g, 1), first_touch),
        vel(array_bytes(g, 2), first_touch);
    const Fields f = fields_in(prev, next, vel, g);
    auto in_buffer = [](const float* p, const bw::Buffer& b) {
      return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(b.data()));
    };
    EXPECT_EQ(in_buffer(f.prev, prev), g.lead * sizeof(float));
    EXPECT_EQ(in_buffer(f.next, next), (g.lead + offset) * sizeof(float));
    // vel two offsets on, within the first page (the first point's page: no page before it untouched)
    EXPECT_EQ(in_buffer(f.vel, vel), (g.lead + 2 * offset % 1024) * sizeof(float));
    EXPECT_LT(in_buffer(f.vel, vel), 4096u);
    // each buffer ends at its array's last point: no page after it untouched
    int k = 0;
    for (const float* a : {f.prev, f.next, f.vel}) {
      EXPECT_EQ(array_bytes(g, k), (g.lead_of(k) + g.points()) * sizeof(float));
      EXPECT_EQ(in_buffer(a + g.points(), k == 0 ? prev : k == 1 ? next : vel), array_bytes(g, k));
      ++k;
    }
    EXPECT_EQ(arrays_bytes(g), array_bytes(g, 0) + array_bytes(g, 1) + array_bytes(g, 2));
  }
}

INSTANTIATE_TEST_SUITE_P(Radii, RadiusMatches, ::testing::Range(1, kMaxRadius + 1),
                         [](const auto& info) { return "radius" + std::to_string(info.param); });

// A vector variant runs its own kernel at the radii it is compiled for and the generic loops at
// the others, and says which.
TEST(Iso3dfdOrders, RadiusPathSaysWhichKernelRuns) {
  for (int r = 1; r <= kMaxRadius; ++r) {
    const Grid g{64, 20, 20, r};
    const bool templated = kernel_radius_index(r) >= 0 && kernel_isa() != "generic";
    EXPECT_EQ(radius_path(g), templated ? "templated" : "generic") << "radius " << r;
    EXPECT_NE(active_box(g), nullptr);
  }
}

// Rows too short for whole vectors at a small radius run the generic loops: the vector kernels'
// unmasked loads of a vector before a row's first point, R planes back, would reach before the
// array (R (n1 + 1) below two vectors). They give the reference's wavefield there too.
TEST(Iso3dfdOrders, RowsTooShortForVectorsRunTheGenericLoops) {
  const RowVariant& v = *find_row_variant("auto");
  const std::size_t lanes = std::max<std::size_t>(static_cast<std::size_t>(v.lanes), 4);  // generic: any
  const Grid tiny{2 * lanes - 2, 9, 12, 1}, enough{2 * lanes - 1, 9, 12, 1};
  EXPECT_EQ(radius_path(tiny), "generic");
  EXPECT_EQ(radius_path(enough), v.lanes > 1 ? "templated" : "generic");
  const double want = reference_norm(tiny, 5);
  Arrays a(tiny);
  Fields f = a.fields();
  initialise(f, tiny, Blocks{tiny.n1, 3, 4}, true, 1);
  run(f, tiny, Blocks{tiny.n1, 3, 4}, Schedule::Static, 1, 5, coefficients(1));
  EXPECT_LT(std::fabs(l2_norm(f.prev, tiny.points()) - want) / want, kNormTolerance);
}
