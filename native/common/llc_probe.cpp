#include "common/llc_probe.hpp"

#include <immintrin.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

namespace bw {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWarm = 64, kTrips = 256, kSamples = 3;
constexpr auto kPatience = std::chrono::milliseconds(20);

struct alignas(64) Line {
  std::atomic<long> ball{0};
};

// Spins until line holds `want` or `stop` is set; gives up (setting stop) after kPatience, and
// yields now and then so that two threads on one CPU still take turns.
bool wait_for(const Line& line, long want, std::atomic<bool>& stop) {
  const auto deadline = Clock::now() + kPatience;
  for (unsigned spins = 1;; ++spins) {
    if (line.ball.load(std::memory_order_acquire) == want) return true;
    if (stop.load(std::memory_order_relaxed)) return false;
    _mm_pause();
    if (spins % 1024 == 0) {
      if (Clock::now() > deadline) {
        stop.store(true, std::memory_order_relaxed);
        return false;
      }
      sched_yield();
    }
  }
}

}  // namespace

json LlcProbe::to_json() const {
  json j = {{"ran", ran}, {"why", why}};
  if (ran)
    j.update({{"round_trip_ns", round_trip_ns},
              {"one_llc_below_ns", kOneLlcNs},
              {"shared", shared},
              {"cpus", {cpu_first, cpu_last}},
              {"method",
               "a cache line passed back and forth between the team's first and last thread as pinned, "
               "the median of 3 samples of 256 round trips"}});
  return j;
}

LlcProbe probe_team_llc(int threads) {
  LlcProbe p;
  if (threads < 2) {
    p.why = "one thread";
    return p;
  }
  Line line;
  std::atomic<bool> stop{false};
  std::vector<double> ns;
  int team = 0;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), last = omp_get_num_threads() - 1;
    if (t == 0) team = last + 1;
    if (last > 0 && t == 0) {
      p.cpu_first = sched_getcpu();
      long v = 0;
      for (int s = -1; s < kSamples && !stop.load(); ++s) {
        const int trips = s < 0 ? kWarm : kTrips;
        const auto t0 = Clock::now();
        for (int i = 0; i < trips; ++i) {
          line.ball.store(++v, std::memory_order_release);
          if (!wait_for(line, ++v, stop)) break;
        }
        if (s >= 0 && !stop.load())
          ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / trips);
      }
      stop.store(true);  // done: the last thread stops waiting
    } else if (last > 0 && t == last) {
      p.cpu_last = sched_getcpu();
      for (long v = 1; wait_for(line, v, stop); v += 2) line.ball.store(v + 1, std::memory_order_release);
    }
  }
  if (ns.size() < static_cast<std::size_t>(kSamples)) {
    p.why = team < 2 ? "the team has one thread"
                     : "the team's first and last thread did not answer each other within 20 ms (one CPU for both?)";
    return p;
  }
  std::sort(ns.begin(), ns.end());
  p.ran = true;
  p.round_trip_ns = ns[ns.size() / 2];
  if (p.cpu_first == p.cpu_last) {  // two threads on one CPU share every cache; the trip timed the scheduler
    p.why = "the team's first and last thread ran on one CPU, " + std::to_string(p.cpu_first);
    return p;
  }
  p.shared = p.round_trip_ns < kOneLlcNs;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f ns", p.round_trip_ns);
  p.why = std::string("a line's round trip between CPU ") + std::to_string(p.cpu_first) + " and CPU " +
          std::to_string(p.cpu_last) + " took " + buf +
          (p.shared ? ": one last-level cache" : ": two last-level caches");
  return p;
}

}  // namespace bw
