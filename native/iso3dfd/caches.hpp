// The caches the temporal-blocking model (iso3dfd/timemodel.hpp) plans with on this machine: the
// sizes hwloc reports for a CPU (BANDWALL_CACHES may force them), and two figures measured per
// micro-architecture in the table of measured choices' "iso3dfd.time_model" entry for this CPU
// (bench/iso3dfd_time_model.py fills it): how many times memory's bandwidth the last-level cache
// feeds the team with (else the compiled kCacheOverMemory), and how much of the last-level cache the
// team's data stays in (its "llc_bytes": a guest may report a cache far larger than the share of
// the host's it gets), which replaces hwloc's size when smaller and no size is forced.
#pragma once
#include "common/record.hpp"
#include "iso3dfd/timemodel.hpp"

namespace bw::iso3dfd {

// The table's key of the model's measured figures.
inline constexpr const char* kTimeModelKey = "iso3dfd.time_model";

struct MachineCaches {
  Caches caches;
  json record;  // l2_bytes, l3_bytes, llc_over_memory, how ("table" or "default"), from; l3_reported_bytes
                // (hwloc's) when the table's measured size replaced it
};

// The caches of `cpu` (a CPU the run computes on), as the model sees them.
MachineCaches machine_caches(int cpu);

// The caches the model plans with from the sizes of a CPU's caches (l3: hwloc's or forced),
// its table entry (nullptr: none), the entry's citation, and whether the L3 size was forced.
MachineCaches planned_caches(std::uint64_t l2, std::uint64_t l3, const json* entry, const std::string& citation,
                             bool l3_forced);

// The ratio a table entry gives (its "llc_over_memory", a number from 0.5 to 20), or 0 when it
// gives none.
double llc_over_memory_of(const json& entry);

// The last-level cache's bytes the entry measured as the team's (its "llc_bytes", at least 1 MiB),
// or 0 when it gives none.
std::uint64_t llc_bytes_of(const json& entry);

}  // namespace bw::iso3dfd
