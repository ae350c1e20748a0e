// The one reader of /proc/self/smaps: what the kernel backs a range of this process's memory with.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bw {

struct SmapsTotals {
  bool found = false;                 // some mapping overlaps the range
  std::uint64_t rss_bytes = 0;        // Rss: resident
  std::uint64_t anon_huge_bytes = 0;  // AnonHugePages: in transparent huge pages
};

// Sums the fields of every mapping of /proc/self/smaps that overlaps [ptr, ptr + bytes) (bytes 0
// counts as 1: the mapping holding ptr). Nothing found when smaps cannot be read.
SmapsTotals smaps_totals(const void* ptr, std::size_t bytes);

}  // namespace bw
