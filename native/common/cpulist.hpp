// CPU lists from C++: the one parser is C (common/cpulist.h, shared with libbandwall-pin.so), with
// the grammar and its forms described there; these wrappers give it the hwloc topology and turn
// its refusals into UsageErrors naming the list.
#pragma once
#include <string_view>
#include <vector>

namespace bw {

class Topology;

// Every form: taskset's lists and likwid-pin's domains, @ chains and E: expressions.
std::vector<int> resolve_cpu_list(std::string_view text, const Topology& topo);
// With the process-wide topology (BANDWALL_TOPOLOGY or this machine).
std::vector<int> resolve_cpu_list(std::string_view text);

}  // namespace bw
