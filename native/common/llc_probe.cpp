#include "common/llc_probe.hpp"

#include <immintrin.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.hpp"

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

// The serving side: samples of kTrips round trips (after kWarm unmeasured), ns a round trip; fewer
// than asked where the other side stopped answering. Sets stop when done.
std::vector<double> serve(Line& line, std::atomic<bool>& stop, int samples) {
  std::vector<double> ns;
  long v = 0;
  for (int s = -1; s < samples && !stop.load(); ++s) {
    const int trips = s < 0 ? kWarm : kTrips;
    const auto t0 = Clock::now();
    for (int i = 0; i < trips; ++i) {
      line.ball.store(++v, std::memory_order_release);
      if (!wait_for(line, ++v, stop)) break;
    }
    if (s >= 0 && !stop.load())
      ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / trips);
  }
  stop.store(true);  // done: the answering side stops waiting
  return ns;
}

void answer(Line& line, std::atomic<bool>& stop) {
  for (long v = 1; wait_for(line, v, stop); v += 2) line.ball.store(v + 1, std::memory_order_release);
}

// The verdict from the samples the two sides (`who`) timed on their CPUs.
LlcProbe judge(std::vector<double> ns, int samples, int first, int last, const std::string& who) {
  LlcProbe p;
  p.cpu_first = first;
  p.cpu_last = last;
  if (ns.size() < static_cast<std::size_t>(samples)) {
    p.why = who + " did not answer each other within 20 ms (one CPU for both?)";
    return p;
  }
  std::sort(ns.begin(), ns.end());
  p.ran = true;
  p.round_trip_ns = ns[ns.size() / 2];
  if (first == last) {  // two threads on one CPU share every cache; the trip timed the scheduler
    p.why = who + " ran on one CPU, " + std::to_string(first);
    return p;
  }
  p.shared = p.round_trip_ns < kOneLlcNs;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f ns", p.round_trip_ns);
  p.why = std::string("a line's round trip between CPU ") + std::to_string(first) + " and CPU " + std::to_string(last) +
          " took " + buf + (p.shared ? ": one last-level cache" : ": two last-level caches");
  return p;
}

// The verdict BANDWALL_LLC_PROBE forces (ran, shared and why set), or nothing.
bool forced_verdict(LlcProbe& p) {
  const char* v = std::getenv("BANDWALL_LLC_PROBE");
  if (v == nullptr || *v == '\0') return false;
  const std::string value(v);
  if (value != "one" && value != "two")
    throw UsageError("BANDWALL_LLC_PROBE '" + value + "' is neither one nor two (last-level caches)");
  p.ran = true;
  p.shared = value == "one";
  p.forced = "BANDWALL_LLC_PROBE=" + value;
  p.why = "forced by " + p.forced + (p.shared ? ": one last-level cache" : ": two last-level caches");
  return true;
}

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace

json LlcProbe::to_json() const {
  json j = {{"ran", ran}, {"why", why}};
  if (!forced.empty())
    j.update({{"forced", forced}, {"shared", shared}});
  else if (ran)
    j.update({{"round_trip_ns", round_trip_ns},
              {"one_llc_below_ns", kOneLlcNs},
              {"shared", shared},
              {"cpus", {cpu_first, cpu_last}},
              {"method", "a cache line passed back and forth between two threads as pinned, the median of " +
                             std::to_string(samples) + " samples of " + std::to_string(kTrips) + " round trips"}});
  return j;
}

LlcProbe probe_team_llc(int threads) {
  LlcProbe p;
  if (threads < 2) {
    p.why = "one thread";
    return p;
  }
  if (forced_verdict(p)) return p;
  Line line;
  std::atomic<bool> stop{false};
  std::vector<double> ns;
  int team = 0, first = -1, last_cpu = -1;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), last = omp_get_num_threads() - 1;
    if (t == 0) team = last + 1;
    if (last > 0 && t == 0) {
      first = sched_getcpu();
      ns = serve(line, stop, kSamples);
    } else if (last > 0 && t == last) {
      last_cpu = sched_getcpu();
      answer(line, stop);
    }
  }
  if (team < 2) {
    p.why = "the team has one thread";
    return p;
  }
  p = judge(std::move(ns), kSamples, first, last_cpu, "the team's first and last thread");
  p.samples = kSamples;
  return p;
}

LlcProbe probe_cpus_llc(int a, int b, int samples) {
  if (LlcProbe p; forced_verdict(p)) {
    p.cpu_first = a;
    p.cpu_last = b;
    return p;
  }
  Line line;
  std::atomic<bool> stop{false};
  std::vector<double> ns;
  bool pinned_a = false, pinned_b = false;
  std::thread other([&] {
    pinned_b = pin_to(b);
    if (pinned_b) answer(line, stop);
  });
  std::thread one([&] {
    pinned_a = pin_to(a);
    if (pinned_a) ns = serve(line, stop, samples);
    stop.store(true);
  });
  one.join();
  other.join();
  if (!pinned_a || !pinned_b) {
    LlcProbe p;
    p.why = "a thread cannot run on CPU " + std::to_string(pinned_a ? b : a);
    return p;
  }
  LlcProbe p = judge(std::move(ns), samples, a, b, "the two threads");
  p.samples = samples;
  return p;
}

}  // namespace bw
