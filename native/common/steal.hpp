// Time a virtual machine's host took from the run's CPUs while the run ran: the steal column of
// /proc/stat, counted from the executable's start (start_steal_clock, which guarded_main calls before
// the body) to the record's provenance. A guest whose vCPUs the host gives
// to other work meanwhile measures slow and unsteady, and a FMA peak over two vCPUs can read one
// core's figure for a repetition; the record says so instead of leaving it to be guessed from the
// spread.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace bw {

// Ticks of one CPU since boot: steal (the eighth value of its cpuN line) and the whole (user, nice,
// system, idle, iowait, irq, softirq and steal; guest time is already within user).
struct CpuTicks {
  unsigned long long steal = 0, total = 0;
};

// The cpuN lines of a /proc/stat text, by CPU number; lines too short for a steal column (kernels
// before 2.6.11) count no steal. The aggregate "cpu" line is left out.
std::map<int, CpuTicks> parse_cpu_ticks(std::string_view proc_stat);

// {"share": stolen / whole ticks, "seconds": stolen seconds summed over the CPUs} of cpus (every CPU
// /proc/stat lists when empty) between two readings; null when no tick passed on them.
nlohmann::json steal_between(const std::map<int, CpuTicks>& before, const std::map<int, CpuTicks>& after,
                             const std::vector<int>& cpus, long ticks_per_second);

// Reads /proc/stat once as the start of the run (later calls do nothing).
void start_steal_clock();

// The same from start_steal_clock (or this call, if none came first) to now, read from /proc/stat (null where it cannot
// be read).
nlohmann::json steal_since_start(const std::vector<int>& cpus);

}  // namespace bw
