// The steal a run's record reports: /proc/stat's cpuN lines read as tables of cases, and the share
// and seconds between two readings over the run's CPUs.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/steal.hpp"

namespace {

struct ParseCase {
  const char* name;
  std::string text;
  int cpu;
  unsigned long long steal, total;
};

class ParseCpuTicks : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseCpuTicks, ReadsStealAndTheWholeOfEachCpu) {
  const ParseCase& c = GetParam();
  const auto ticks = bw::parse_cpu_ticks(c.text);
  ASSERT_TRUE(ticks.contains(c.cpu)) << c.name;
  EXPECT_EQ(ticks.at(c.cpu).steal, c.steal) << c.name;
  EXPECT_EQ(ticks.at(c.cpu).total, c.total) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Lines, ParseCpuTicks,
                         ::testing::Values(
                             // guest and guest_nice (within user) are not added again
                             ParseCase{"ten columns", "cpu  9 9 9 9 9 9 9 9 9 9\ncpu0 10 1 5 80 2 0 1 7 3 0\n", 0, 7,
                                       106},
                             ParseCase{"second cpu", "cpu0 1 1 1 1 1 1 1 1\ncpu1 100 0 0 300 0 0 0 25\n", 1, 25, 425},
                             ParseCase{"no steal column", "cpu3 4 0 2 10 1 0 0\n", 3, 0, 17},
                             ParseCase{"last line without newline", "intr 5\ncpu12 1 2 3 4 5 6 7 8", 12, 8, 36}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (ch == ' ') ch = '_';
                           return n;
                         });

TEST(ParseCpuTicks, LeavesOutTheAggregateAndOtherLines) {
  const auto ticks = bw::parse_cpu_ticks("cpu  1 2 3 4 5 6 7 8\nintr 1 2\ncpux 1\nctxt 5\ncpu2 0 0 0 1 0 0 0 0\n");
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_TRUE(ticks.contains(2));
  EXPECT_TRUE(bw::parse_cpu_ticks("").empty());
}

TEST(StealBetween, CountsTheRunsCpusOnly) {
  const std::map<int, bw::CpuTicks> before{{0, {10, 1000}}, {1, {0, 1000}}, {2, {0, 1000}}};
  const std::map<int, bw::CpuTicks> after{{0, {60, 1500}}, {1, {0, 1500}}, {2, {500, 1500}}};
  const auto one = bw::steal_between(before, after, {0}, 100);
  EXPECT_DOUBLE_EQ(one["share"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(one["seconds"].get<double>(), 0.5);
  const auto two = bw::steal_between(before, after, {0, 1}, 100);
  EXPECT_DOUBLE_EQ(two["share"].get<double>(), 0.05);
  // no CPUs named: every CPU listed
  EXPECT_DOUBLE_EQ(bw::steal_between(before, after, {}, 100)["share"].get<double>(), 550.0 / 1500.0);
}

TEST(StealBetween, IsNullWhenNoTickPassedOrTheCpuIsUnknown) {
  const std::map<int, bw::CpuTicks> same{{0, {5, 100}}};
  EXPECT_TRUE(bw::steal_between(same, same, {0}, 100).is_null());
  EXPECT_TRUE(bw::steal_between(same, {{0, {6, 200}}}, {7}, 100).is_null());
  EXPECT_TRUE(bw::steal_between({}, {}, {}, 100).is_null());
}

TEST(StealSinceStart, IsAShareOfTheRunsTimeOrNull) {
  bw::start_steal_clock();
  nlohmann::json s;  // null until a tick has passed since the clock started (the kernel's HZ)
  for (int i = 0; i < 1000 && s.is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s = bw::steal_since_start({});
  }
  ASSERT_FALSE(s.is_null()) << "/proc/stat's ticks did not advance";
  EXPECT_GE(s["share"].get<double>(), 0.0);
  EXPECT_LE(s["share"].get<double>(), 1.0);
  EXPECT_GE(s["seconds"].get<double>(), 0.0);
}

}  // namespace
