// The bandit's and the pirate's mechanics (sensitivity/): what they touch, that they count and time,
// and that they refuse bad commands. No rate is asserted: any CPU, any load.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "common/errors.hpp"
#include "sensitivity/bandit.hpp"
#include "sensitivity/pirate.hpp"

using namespace bw::sensitivity;

namespace {
int some_cpu() {
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return c;
  return 0;
}
}  // namespace

TEST(Bandit, ReadsOneLineAPageAtTheSameOffset) {
  EXPECT_EQ(stride_bytes(Pattern::strided), kPage);
  EXPECT_EQ(stride_bytes(Pattern::mixed), kPage) << "mixed reads as strided does";
  EXPECT_EQ(stride_bytes(Pattern::triad), kLine);
  auto lines = bandit_lines(64 * kPage + 100);
  ASSERT_EQ(lines.size(), 64u);
  std::set<std::uint64_t> offsets;
  for (auto off : lines) offsets.insert(off % kPage);
  EXPECT_EQ(offsets.size(), 1u) << "every line at one offset in its page: 1/64 of the sets";
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i] - lines[i - 1], kPage);
}

TEST(Bandit, BufferCoversFourCachesInWholePages) {
  EXPECT_EQ(bandit_buffer_bytes(32u << 20, 1), 128u << 20);
  EXPECT_EQ(bandit_buffer_bytes(32u << 20, 16), 32u << 20) << "at least 32 MiB a thread";
  EXPECT_EQ(bandit_buffer_bytes(100u << 20, 3) % kPage, 0u);
}

TEST(Bandit, DutyIsTheShareOfAPeriod) {
  EXPECT_DOUBLE_EQ(busy_seconds(1.0), kPeriodSeconds);
  EXPECT_DOUBLE_EQ(busy_seconds(0.25), 0.25 * kPeriodSeconds);
  EXPECT_DOUBLE_EQ(busy_seconds(3.0), kPeriodSeconds);
}

TEST(Bandit, PatternsByName) {
  EXPECT_EQ(parse_pattern("strided"), Pattern::strided);
  EXPECT_EQ(parse_pattern("triad"), Pattern::triad);
  for (auto p : {Pattern::strided, Pattern::write, Pattern::mixed, Pattern::triad, Pattern::compute})
    EXPECT_EQ(parse_pattern(pattern_name(p)), p);
  EXPECT_STREQ(pattern_name(Pattern::triad), "triad");
  EXPECT_STREQ(pattern_name(Pattern::compute), "compute");
  EXPECT_THROW(parse_pattern("stream"), bw::UsageError);
}

// At every dose and in both patterns, a run reads something and counts it.
TEST(Bandit, CountsWhatItReadsAtEveryDose) {
  for (auto pattern : {Pattern::strided, Pattern::write, Pattern::mixed, Pattern::triad}) {
    Bandit bandit({some_cpu()}, 1u << 20, pattern);
    for (double duty : {0.25, 1.0}) {
      bandit.start(duty);
      EXPECT_TRUE(bandit.running());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      auto s = bandit.stop();
      EXPECT_EQ(s.duty, duty);
      ASSERT_EQ(s.bytes.size(), 1u);
      EXPECT_GT(s.bytes[0], 0u) << pattern_name(pattern) << " at " << duty;
      EXPECT_EQ(s.bytes[0] % kLine, 0u);
      EXPECT_GT(s.gbps(), 0.0);
    }
  }
  Bandit compute({some_cpu()}, 1u << 20, Pattern::compute);  // computes, reads nothing
  compute.start(1.0);
  auto s = compute.stop();
  EXPECT_EQ(s.bytes.at(0), 0u);
}

TEST(Bandit, RefusesWhatItCannotDo) {
  Bandit bandit({some_cpu()}, 1u << 20);
  EXPECT_THROW(bandit.stop(), bw::UsageError);
  EXPECT_THROW(bandit.start(0.0), bw::UsageError);
  EXPECT_THROW(bandit.start(1.5), bw::UsageError);
  bandit.start(1.0);
  EXPECT_THROW(bandit.start(1.0), bw::UsageError);
  bandit.stop();
  EXPECT_THROW(Bandit({}, 1u << 20), bw::UsageError);
}

// The pirate's cycles: each line on exactly one of them, each cycle closed, of even length.
TEST(Pirate, CyclesCoverEveryLineOnce) {
  for (std::uint32_t n : {8u, 9u, 1000u, 4096u}) {
    auto nxt = chain_order(n, kChains, 7);
    std::vector<int> seen(n, 0);
    int cycles = 0;
    for (std::uint32_t start = 0; start < n; ++start) {
      if (seen[start]) continue;
      ++cycles;
      std::uint32_t p = start;
      do {
        ASSERT_LT(p, n);
        ++seen[p];
        p = nxt[p];
      } while (p != start && seen[p] == 0);
      EXPECT_EQ(p, start) << "a cycle closes on its start";
    }
    EXPECT_EQ(cycles, kChains) << n << " lines";
    for (int s : seen) EXPECT_EQ(s, 1);
  }
  EXPECT_EQ(chain_order(100, 8, 1), chain_order(100, 8, 1)) << "seeded: the same cycles every run";
}

TEST(Pirate, HoldsTimesAndProbes) {
  const int cpu = some_cpu();
  Pirate pirate(cpu, 2u << 20);
  const double alone = pirate.hold(1u << 20);
  EXPECT_GT(alone, 0.0);
  EXPECT_TRUE(pirate.holding());
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto s = pirate.stop();
  EXPECT_GT(s.accesses, 0u);
  EXPECT_GT(s.ns_per_access(), 0.0);
  auto p = pirate.probe(cpu, 1u << 20);  // the same CPU stands in for the program's here
  EXPECT_GT(p.own_ns, 0.0);
  EXPECT_GT(p.shared_ns, 0.0);
  EXPECT_GT(p.flushed_ns, 0.0);
  EXPECT_THROW(pirate.stop(), bw::UsageError);
  EXPECT_THROW(pirate.hold(4u << 20), bw::UsageError) << "more than it may hold";
  EXPECT_THROW(pirate.hold(64), bw::UsageError) << "less than a line a cycle";
}
