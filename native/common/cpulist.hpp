// CPU lists as bandwall's --cpus and likwid-pin's -c take them:
//   0-3,8   3,2,1,0   0-7:2        OS CPU numbers in thread order (taskset style; a range may have a stride)
//   S0:0-3  M1:0,1  N:0-7  C0:0-1   likwid thread domains (N node, S socket, D die, M NUMA domain, C
//                                   last-level cache): numbers count within the domain, physical cores
//                                   first, then their second hardware threads (Topology::domain_cpus)
//   S0:0-1@S1:0-1                   domain lists joined with @
//   E:S0:4   E:N:4:1:2              likwid expressions: COUNT CPUs of a domain, CHUNK of them together
//                                   every STRIDE (defaults 1 and 1)
// A CPU named twice, a number past the end of its domain and a domain the machine does not have are
// UsageErrors naming the list.
#pragma once
#include <string_view>
#include <vector>

namespace bw {

class Topology;

std::vector<int> resolve_cpu_list(std::string_view text, const Topology& topo);
// With the process-wide topology (BANDWALL_TOPOLOGY or this machine).
std::vector<int> resolve_cpu_list(std::string_view text);

}  // namespace bw
