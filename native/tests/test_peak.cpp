#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/errors.hpp"
#include "common/isa.hpp"

#include "peak/fma.hpp"

using namespace bw::peak;

TEST(PeakFma, FlopsPerIterationFollowLanesAndAccumulators) {
  EXPECT_EQ(lanes(Precision::Single), 2 * lanes(Precision::Double));
  EXPECT_EQ(flops_per_iteration(Precision::Double), 2.0 * lanes(Precision::Double) * variant().accumulators);
}

// The chains cover 4-5 cycles of FMA latency on 2 pipes and leave registers for the two constants
// and a temporary (a multiply + add variant needs one), so that none spills to the stack.
TEST(PeakFma, ChainsCoverTheLatencyAndFitTheRegisters) {
  for (int registers : {16, 32}) {
    EXPECT_GE(accumulators_for(registers), 10) << registers;
    EXPECT_LE(accumulators_for(registers) + 3, registers) << registers;
  }
}

// Every instruction-set variant: lanes from its vector width, and each chain reaches the value the
// recurrence converges to (so its flops were done); variants this binary or CPU lacks are skipped.
class PeakVariants : public ::testing::TestWithParam<std::string> {
 protected:
  void TearDown() override { select_isa("auto"); }
};

TEST_P(PeakVariants, ChainConvergesAndLanesFollowTheVectors) {
  const std::string isa = GetParam();
  if (!find_variant(isa)) GTEST_SKIP() << bw::isa_refusal(isa, {isa});
  EXPECT_EQ(select_isa(isa), isa);
  const Variant& v = variant();
  EXPECT_EQ(v.isa, isa);
  EXPECT_EQ(lanes(Precision::Double) * 64, v.vector_bits);
  EXPECT_EQ(v.accumulators, accumulators_for(isa == "avx512" ? 32 : 16)) << isa;
  if (isa != "generic") {
    EXPECT_EQ(v.vector_bits, isa == "avx512" ? 512 : 256);
    EXPECT_TRUE(v.fma);
  }
  for (auto p : {Precision::Double, Precision::Single}) {
    double s = run_chain(p, 100000);
    EXPECT_TRUE(std::isfinite(s));
    EXPECT_NEAR(s, v.accumulators, 1e-3 * v.accumulators) << isa;
    // A short chain has not converged yet: the value depends on the iterations done.
    EXPECT_GT(std::fabs(run_chain(p, 2) - v.accumulators), 1e-2) << isa;
  }
  auto m = measure(Precision::Single, 1, 0.005, 1);
  EXPECT_TRUE(m.checksum_ok);
  EXPECT_GT(m.gflops, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Isa, PeakVariants, ::testing::Values("avx512", "avx2", "generic"));

TEST(PeakFma, AutoIsTheBestTheCpuRunsAndOthersAreRefused) {
  ASSERT_NE(find_variant("auto"), nullptr);
  EXPECT_EQ(find_variant("auto")->isa, bw::cpu_isas().front());
  EXPECT_THROW(select_isa("sse9"), bw::UsageError);
  for (const std::string& n : bw::isa_names())
    if (!bw::cpu_has_isa(n)) {
      EXPECT_THROW(select_isa(n), bw::UsageError) << n;
    }
}

TEST(PeakFma, MeasureGivesPositiveRate) {
  auto m = measure(Precision::Double, 1, 0.01, 2);
  EXPECT_GT(m.gflops, 0.0);
  EXPECT_GT(m.iters, 0u);
  EXPECT_TRUE(m.checksum_ok);
}
