// Whether an OpenMP team's threads share a last-level cache, by measurement: a cache line passed
// back and forth between the team's first and last thread, as they are pinned. hwloc reports the
// caches a CPU claims; a virtual machine's host may place two vCPUs the guest sees on one L3 on two
// and move them back from second to second (on an AMD Zen 4 guest a line's round trip took 50-60 ns
// in most probes, 320-340 ns in the others, and radius 3's sweeps by the team together ran 1.34x
// slower than by slabs in those rounds; bench/results/2026-12-07-zen4-unseat.md).
#pragma once
#include <string>

#include "common/record.hpp"

namespace bw {

// A round trip below this many ns: the two CPUs share a last-level cache (50-150 ns where they do;
// 200-400 ns between two AMD CCDs or two sockets).
inline constexpr double kOneLlcNs = 200.0;

struct LlcProbe {
  bool ran = false;          // false: one thread, or the two did not answer in time
  bool shared = true;        // one last-level cache by the round trip (true where nothing ran)
  double round_trip_ns = 0;  // the median of the samples
  int cpu_first = -1, cpu_last = -1;
  int samples = 0;  // how many the median is of
  std::string why;
  std::string forced;  // "BANDWALL_LLC_PROBE=two": the verdict given, nothing timed
  json to_json() const;
};

// BANDWALL_LLC_PROBE=one or two forces every probe's verdict (nothing is timed, the record says so):
// each branch of a choice that follows it on any machine, and a way out for a host whose probe
// misleads. Any other value is refused (UsageError).
//
// Probes the team of `threads` OpenMP threads (outside any parallel region): thread 0 and the last
// pass a line back and forth, 3 samples of 256 round trips after 64 unmeasured, the others idle.
// Bounded: a thread that waits more than 20 ms for the other (both on one CPU, say) ends the probe
// with ran false.
LlcProbe probe_team_llc(int threads);

// The same between two threads of its own pinned to CPUs a and b (bandwall-topo --llc-probe, the
// benches' column), `samples` samples. ran false, saying why, where a thread cannot run on its CPU.
LlcProbe probe_cpus_llc(int a, int b, int samples = 3);

}  // namespace bw
