// The probe of whether a team's threads share a last-level cache (common/llc_probe.hpp): it answers
// for one thread without running, for a team as the threads are placed, and in bounded time when both
// threads are on one CPU (their turns then wait on the scheduler).
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <chrono>
#include <vector>

#include "common/args.hpp"
#include "common/llc_probe.hpp"

namespace {

TEST(LlcProbe, OneThreadRunsNothingAndKeepsTheCacheShared) {
  const bw::LlcProbe p = bw::probe_team_llc(1);
  EXPECT_FALSE(p.ran);
  EXPECT_TRUE(p.shared);
  EXPECT_EQ(p.why, "one thread");
  EXPECT_EQ(p.to_json().value("ran", true), false);
}

// The verdict follows the round trip and the threshold wherever the two threads are; the record
// names both CPUs and says why.
TEST(LlcProbe, ATeamOfTwoTimesARoundTripAndJudgesItByTheThreshold) {
  const bw::LlcProbe p = bw::probe_team_llc(2);
  ASSERT_FALSE(p.why.empty());
  if (!p.ran) GTEST_SKIP() << p.why;  // the two threads did not answer each other in time
  EXPECT_GT(p.round_trip_ns, 0.0);
  if (p.cpu_first != p.cpu_last) {
    EXPECT_EQ(p.shared, p.round_trip_ns < bw::kOneLlcNs) << p.why;
  }
  const bw::json j = p.to_json();
  EXPECT_EQ(j.at("cpus").size(), 2u);
  EXPECT_EQ(j.at("shared").get<bool>(), p.shared);
}

// Both threads pinned to one CPU: the probe ends (the turns yield to each other, and each wait gives
// up after 20 ms) and says the two share every cache, or that they did not answer.
TEST(LlcProbe, TwoThreadsOnOneCpuEndAndShareTheirCaches) {
  const int cpu = bw::allowed_cpus().front();
  std::vector<cpu_set_t> before(2);
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num();
    sched_getaffinity(0, sizeof(cpu_set_t), &before[t]);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const bw::LlcProbe p = bw::probe_team_llc(2);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#pragma omp parallel num_threads(2)
  sched_setaffinity(0, sizeof(cpu_set_t), &before[omp_get_thread_num()]);
  EXPECT_LT(seconds, 30.0);  // ends: a hang would never get here (not a timing of the probe)
  EXPECT_TRUE(p.shared) << p.why;
  if (p.ran) {
    EXPECT_EQ(p.cpu_first, p.cpu_last) << p.why;
  }
}

// Two CPUs named (bandwall-topo --llc-probe): the two threads of its own pinned to them; a CPU no
// thread may run on ends it with ran false and says which; one CPU twice shares every cache.
TEST(LlcProbe, TwoCpusNamedArePinnedOrRefused) {
  const std::vector<int> cpus = bw::allowed_cpus();
  const bw::LlcProbe absent = bw::probe_cpus_llc(cpus.front(), 100000);
  EXPECT_FALSE(absent.ran);
  EXPECT_TRUE(absent.shared);
  EXPECT_NE(absent.why.find("cannot run on CPU 100000"), std::string::npos) << absent.why;
  const bw::LlcProbe same = bw::probe_cpus_llc(cpus.front(), cpus.front(), 2);
  EXPECT_TRUE(same.shared) << same.why;
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU";
  const bw::LlcProbe p = bw::probe_cpus_llc(cpus[0], cpus[1], 2);
  if (!p.ran) GTEST_SKIP() << p.why;
  EXPECT_EQ(p.cpu_first, cpus[0]);
  EXPECT_EQ(p.cpu_last, cpus[1]);
  EXPECT_EQ(p.samples, 2);
  EXPECT_EQ(p.shared, p.round_trip_ns < bw::kOneLlcNs) << p.why;
}

}  // namespace
