// The row kernel itself with its data in L2 (iso3dfd/in_l2.hpp): under every variant this CPU runs,
// the default shape at every radius and every shape at one give a rate on a block that half of L2
// holds, checked against the generic loops; a wrong kernel is caught; without an L2 size, or where
// no block fits, it says why instead.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/isa.hpp"
#include "iso3dfd/in_l2.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"

using namespace bw::iso3dfd;

namespace {

constexpr std::uint64_t kL2 = 1 << 20;

Grid run_grid(int radius, std::size_t nx) {
  Grid g;
  g.radius = radius;
  g.n1 = nx + 2 * static_cast<std::size_t>(radius), g.n2 = g.n1, g.n3 = g.n1;
  return g;
}

void expect_measured(const KernelInL2& k, const std::string& what) {
  EXPECT_EQ(k.unavailable, "") << what;
  EXPECT_GT(k.seconds_per_point, 0) << what;
  EXPECT_LE(k.bytes, kL2 / 2) << what;
  EXPECT_GE(k.nz, 8u) << what;
  EXPECT_GE(k.ny, 1u) << what;
  EXPECT_LE(k.max_rel_difference, 1e-5) << what;
}

// Writes zeros where the update goes: a kernel the check must catch.
void zeros(const Coefficients&, const float*, float* next, const float*, const Grid& g, const Box& b) {
  for (std::size_t z = b.z0; z < b.z1; ++z)
    for (std::size_t y = b.y0; y < b.y1; ++y)
      for (std::size_t x = b.x0; x < b.x1; ++x) next[g.index(x, y, z)] = 0;
}

}  // namespace

class KernelInL2Isa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    before_ = kernel_isa();
    const RowVariant* v = find_row_variant(GetParam());
    if (!v) GTEST_SKIP() << row_variant_refusal(GetParam());
    if (v->shapes[0].any_radius) GTEST_SKIP() << GetParam() << " is the generic loops the check compares with";
    select_isa(GetParam());
    variant_ = v;
  }
  void TearDown() override { select_isa(before_); }
  std::string before_;
  const RowVariant* variant_ = nullptr;
};

TEST_P(KernelInL2Isa, TheDefaultShapeAtEveryRadiusAndEveryShapeAtOne) {
  for (const int radius : kKernelRadii) {
    const RowShape& s = variant_->default_shape(radius);
    expect_measured(kernel_in_l2(s, run_grid(radius, 256), kL2),
                    GetParam() + " " + shape_name(s) + " at radius " + std::to_string(radius));
  }
  for (const RowShape& s : variant_->shape_list())
    expect_measured(kernel_in_l2(s, run_grid(3, 200), kL2), GetParam() + " " + shape_name(s) + " at radius 3");
}

TEST_P(KernelInL2Isa, RowsTooLongForL2AreCutAndAWrongKernelIsCaught) {
  const KernelInL2 k = kernel_in_l2(variant_->default_shape(8), run_grid(8, 2048), kL2);
  expect_measured(k, "radius 8, rows of 2048");
  EXPECT_LT(k.nx, 2048u);
  EXPECT_EQ(k.nx % 16, 0u);
  RowShape wrong;
  wrong.any_radius = &zeros;
  EXPECT_THROW(kernel_in_l2(wrong, run_grid(4, 256), kL2), std::runtime_error);
}

TEST_P(KernelInL2Isa, HalfOfA512KiBL2HoldsABlockAtEveryRadius) {
  // the halos of next and vel are never touched, so they are not counted: at radius 7 and 8 a block
  // of rows of 64 floats or more still fits half of a 512 KiB L2 (AMD Zen 3's)
  constexpr std::uint64_t kSmallL2 = 512 << 10;
  for (const int radius : kKernelRadii) {
    const std::string what = GetParam() + " at radius " + std::to_string(radius);
    const KernelInL2 k = kernel_in_l2(variant_->default_shape(radius), run_grid(radius, 256), kSmallL2);
    EXPECT_EQ(k.unavailable, "") << what;
    EXPECT_LE(k.bytes, kSmallL2 / 2) << what;
    EXPECT_GE(k.nx, 64u) << what;
    EXPECT_LE(k.max_rel_difference, 1e-5) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, KernelInL2Isa, ::testing::ValuesIn(bw::isa_names()));

TEST(KernelInL2, SaysWhyWhenItCannotMeasure) {
  const RowShape& s = find_row_variant("auto")->default_shape(8);
  EXPECT_NE(kernel_in_l2(s, run_grid(8, 256), 0).unavailable, "");
  // half of 16 KiB holds no block of radius 8's halos
  const KernelInL2 small = kernel_in_l2(s, run_grid(8, 256), 16 << 10);
  EXPECT_EQ(small.seconds_per_point, 0);
  EXPECT_NE(small.unavailable, "");
}
