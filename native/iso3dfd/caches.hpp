// The caches the temporal-blocking model (iso3dfd/timemodel.hpp) plans with on this machine: the
// sizes hwloc reports for a CPU (BANDWALL_CACHES may force them), and how many times memory's
// bandwidth the last-level cache feeds the team with, measured per micro-architecture: the table of
// measured choices' "iso3dfd.time_model" entry for this CPU (bench/iso3dfd_time_model.py fills it),
// else the compiled kCacheOverMemory.
#pragma once
#include "common/record.hpp"
#include "iso3dfd/timemodel.hpp"

namespace bw::iso3dfd {

// The table's key of the model's measured figures.
inline constexpr const char* kTimeModelKey = "iso3dfd.time_model";

struct MachineCaches {
  Caches caches;
  json record;  // l2_bytes, l3_bytes, llc_over_memory, how ("table" or "default"), from
};

// The caches of `cpu` (a CPU the run computes on), as the model sees them.
MachineCaches machine_caches(int cpu);

// The ratio a table entry gives (its "llc_over_memory", a number from 0.5 to 20), or 0 when it
// gives none.
double llc_over_memory_of(const json& entry);

}  // namespace bw::iso3dfd
