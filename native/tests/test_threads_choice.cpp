// The rule of --threads auto (common/harness.hpp) on synthetic timings: the fewest threads whose
// rate is within 3% of the best, and the counts it tries.
#include <gtest/gtest.h>

#include <vector>

#include "common/errors.hpp"
#include "common/harness.hpp"

namespace {

int chosen(const std::vector<int>& counts, const std::vector<double>& rates) {
  return counts[bw::fewest_within(counts, rates)];
}

TEST(ThreadsChoice, FewestWithinThreePercentOfTheBest) {
  // A bandwidth curve that saturates at 4 threads: 4 is within 3% of 8's best, 2 is not.
  EXPECT_EQ(chosen({1, 2, 4, 8}, {10.0, 18.0, 29.5, 30.0}), 4);
  // 2.5% below the best is within it, 3.5% below is not.
  EXPECT_EQ(chosen({1, 2}, {97.5, 100.0}), 1);
  EXPECT_EQ(chosen({1, 2}, {96.5, 100.0}), 2);
}

TEST(ThreadsChoice, FewerThreadsFasterAreChosen) {
  // Two threads slower than one (a noisy or contended machine): one is the best and the fewest.
  EXPECT_EQ(chosen({1, 2}, {18.5, 2.0}), 1);
  // The best in the middle of the curve, the largest team a little behind.
  EXPECT_EQ(chosen({1, 2, 3, 4}, {10.0, 25.0, 24.5, 20.0}), 2);
}

TEST(ThreadsChoice, ComputeBoundKeepsEveryThread) {
  EXPECT_EQ(chosen({1, 2, 3, 4}, {1.0, 2.0, 3.0, 4.0}), 4);
  EXPECT_EQ(chosen({1}, {5.0}), 1);
}

TEST(ThreadsChoice, ToleranceIsAParameter) {
  EXPECT_EQ(bw::fewest_within({1, 2}, {90.0, 100.0}, 0.10), 0u);
  EXPECT_EQ(bw::fewest_within({1, 2}, {90.0, 100.0}, 0.0), 1u);
}

TEST(ThreadsChoice, NoRatesIsAnError) {
  EXPECT_THROW(bw::fewest_within({}, {}), bw::RunError);
  EXPECT_THROW(bw::fewest_within({1, 2}, {1.0}), bw::RunError);
}

TEST(ThreadsChoice, Candidates) {
  EXPECT_EQ(bw::thread_candidates(1), (std::vector<int>{1}));
  EXPECT_EQ(bw::thread_candidates(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(bw::thread_candidates(4), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(bw::thread_candidates(6), (std::vector<int>{1, 2, 3, 4, 6}));
  EXPECT_EQ(bw::thread_candidates(16), (std::vector<int>{1, 2, 3, 4, 8, 16}));
  EXPECT_EQ(bw::thread_candidates(20), (std::vector<int>{1, 2, 3, 4, 8, 16, 20}));
}

}  // namespace
