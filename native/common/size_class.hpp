// The memory level a run's data live in: the size class measured choices are kept under
// (common/isa_choice.hpp), so a choice timed on data in cache is never reused for data in DRAM.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bw {

// "core" (no data: registers), "l2" (within the L2 caches of cpus together), "llc" (within their
// last-level caches), else "dram". cpus empty: every allowed CPU.
std::string size_class(std::uint64_t bytes, const std::vector<int>& cpus);

}  // namespace bw
