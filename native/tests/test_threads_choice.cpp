// The rule of --threads auto (common/decide.hpp's choose_fewest through common/driver.hpp) on
// synthetic rounds: the fewest threads shown to be within the tolerance of every other count, every
// thread when the rounds cannot show it, the counts it tries and the rounds a run can afford.
#include <gtest/gtest.h>

#include <vector>

#include "common/decide.hpp"
#include "common/driver.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"

namespace {

// Five rounds of one curve (the same rates each round, times a per-round factor: a machine whose
// speed drifts from round to round but whose curve keeps its shape).
std::vector<std::vector<double>> rounds_of(const std::vector<double>& curve,
                                           std::vector<double> drift = {1, 1.2, 0.8, 1.1, 0.9}) {
  std::vector<std::vector<double>> out(curve.size());
  for (std::size_t i = 0; i < curve.size(); ++i)
    for (double f : drift) out[i].push_back(curve[i] * f);
  return out;
}

int chosen(const std::vector<int>& counts, const std::vector<std::vector<double>>& rates) {
  return counts[bw::decide::choose_fewest(counts, rates, "GB/s").chosen];
}

TEST(ThreadsChoice, FewestWithinTheToleranceOfEveryOtherCount) {
  // Saturates at 4 threads: 4 is within 3% of 8, 2 is not; the drift between rounds cancels in the ratios.
  EXPECT_EQ(chosen({1, 2, 4, 8}, rounds_of({10.0, 18.0, 29.5, 30.0})), 4);
  EXPECT_EQ(chosen({1, 2}, rounds_of({97.5, 100.0})), 1);
  EXPECT_EQ(chosen({1, 2}, rounds_of({96.5, 100.0})), 2);
}

TEST(ThreadsChoice, FewerThreadsFasterAreChosen) {
  EXPECT_EQ(chosen({1, 2}, rounds_of({18.5, 2.0})), 1);
  EXPECT_EQ(chosen({1, 2, 3, 4}, rounds_of({10.0, 25.0, 24.5, 20.0})), 2);
}

TEST(ThreadsChoice, ComputeBoundKeepsEveryThread) {
  EXPECT_EQ(chosen({1, 2, 3, 4}, rounds_of({1.0, 2.0, 3.0, 4.0})), 4);
  EXPECT_EQ(chosen({1}, rounds_of({5.0})), 1);
}

TEST(ThreadsChoice, NoiseKeepsEveryThread) {
  // One round in five where two threads ran 10% faster: one thread is not shown to be enough.
  std::vector<std::vector<double>> r = rounds_of({30.0, 30.0});
  r[1][2] *= 1.1;
  EXPECT_EQ(chosen({1, 2}, r), 2);
  // Too few rounds to judge at all.
  EXPECT_EQ(chosen({1, 2}, rounds_of({30.0, 30.0}, {1, 1})), 2);
}

TEST(ThreadsChoice, NoRatesIsAnError) {
  EXPECT_THROW(bw::decide::choose_fewest({}, {}, "x"), bw::RunError);
  EXPECT_THROW(bw::decide::choose_fewest({1, 2}, {{1.0}}, "x"), bw::RunError);
}

TEST(ThreadsChoice, Candidates) {
  EXPECT_EQ(bw::thread_candidates(1), (std::vector<int>{1}));
  EXPECT_EQ(bw::thread_candidates(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(bw::thread_candidates(4), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(bw::thread_candidates(6), (std::vector<int>{1, 2, 3, 4, 6}));
  EXPECT_EQ(bw::thread_candidates(16), (std::vector<int>{1, 2, 3, 4, 8, 16}));
  EXPECT_EQ(bw::thread_candidates(20), (std::vector<int>{1, 2, 3, 4, 8, 16, 20}));
}

TEST(ThreadsChoice, RoundsARunCanAfford) {
  // Repetitions apart from the steps: the rule's rounds.
  EXPECT_EQ(bw::driver::thread_rounds(1, 2, false), bw::decide::rule().rounds);
  // Steps as repetitions: as many rounds as leave one timed step, at most the rule's.
  EXPECT_EQ(bw::driver::thread_rounds(100, 2, true), bw::decide::rule().rounds);
  EXPECT_EQ(bw::driver::thread_rounds(7, 2, true), 3);
  EXPECT_EQ(bw::driver::thread_rounds(3, 2, true), 1);
  EXPECT_THROW(bw::driver::thread_rounds(2, 2, true), bw::UsageError);
}

}  // namespace
