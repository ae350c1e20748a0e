// What the kernel says about this process's memory: its NUMA memory policy (get_mempolicy), the
// CPUs it may run on, the transparent-huge-page mode, and how much of a mapping is backed by huge
// pages (/proc/self/smaps). Used to prove placements and bindings in records.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace bw {

// {"mode": "default"|"bind"|"interleave"|"preferred"|"local", "nodes": [...]} of the calling thread.
nlohmann::json memory_policy();

// The word in brackets of /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
// "never"), or "unavailable" when the kernel has no THP.
std::string thp_mode();

// /proc/sys/kernel/numa_balancing (0 off, 1 on, 2 memory tiering), -1 when absent.
int numa_balancing();

// Bytes of the mapping that starts at or contains ptr which are backed by anonymous huge pages
// (AnonHugePages of /proc/self/smaps); 0 when the mapping is not found.
std::size_t huge_page_bytes(const void* ptr);

}  // namespace bw
