#include <gtest/gtest.h>

#include <cmath>

#include "peak/fma.hpp"

using namespace bw::peak;

TEST(PeakFma, FlopsPerIterationFollowLanesAndAccumulators) {
  EXPECT_EQ(lanes(Precision::Single), 2 * lanes(Precision::Double));
  EXPECT_EQ(flops_per_iteration(Precision::Double), 2.0 * lanes(Precision::Double) * kAccumulators);
  EXPECT_GE(kAccumulators, 8) << "too few chains to cover 4-cycle latency on 2 pipes";
}

TEST(PeakFma, ChainConvergesSoResultsStayFinite) {
  for (auto p : {Precision::Double, Precision::Single}) {
    double s = run_chain(p, 100000);
    EXPECT_TRUE(std::isfinite(s));
    EXPECT_NEAR(s, kAccumulators, 1e-3 * kAccumulators);
  }
}

TEST(PeakFma, MeasureGivesPositiveRate) {
  auto m = measure(Precision::Double, 1, 0.01, 2);
  EXPECT_GT(m.gflops, 0.0);
  EXPECT_GT(m.iters, 0u);
  EXPECT_TRUE(m.checksum_ok);
}
