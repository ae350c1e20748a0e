// Placement and binding policies as tables: one row per policy says how it is written, what its
// argument is, how it is applied and what it means. Parsing, the mbind / set_mempolicy mode, the
// help texts of every executable and the front end's help (bandwall-topo --list-policies) all come
// from these rows; adding a policy is adding a row (and, for a binding, its CPU order).
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/record.hpp"

namespace bw {

class Topology;

// What follows the policy's word after a colon.
enum class PolicyArg {
  None,          // first-touch
  Node,          // bind:N (required)
  NodesOrEvery,  // interleave[:N,M...] (every node when left out)
};

struct PlacementPolicy {
  std::string_view name;
  PolicyArg arg;
  // The memory policy the pages get (mbind for a buffer, set_mempolicy for a process);
  // -1: none, the pages land on the node of the thread that touches them first.
  int mode;
  bool serial_init;  // the master thread initialises everything
  std::string_view help;
};

struct BindingPolicy {
  std::string_view name;
  PolicyArg arg;
  // The CPUs the threads get, in thread order, from the CPUs allowed (logical order), for a team of
  // threads (0: as many as there are CPUs); empty function: the threads are not bound.
  std::vector<int> (*order)(const Topology& topo, const std::vector<int>& allowed, int node, int threads);
  std::string_view help;
};

std::span<const PlacementPolicy> placement_policies();
std::span<const BindingPolicy> binding_policies();

// "bind:N", "interleave[:N,M...]": how a row is written.
std::string syntax(std::string_view name, PolicyArg arg);
// Every row's syntax: "first-touch, serial, bind:N, interleave[:N,M...] or preferred:N"; the
// placement rows with a memory mode only when per_process (what a process can be given).
std::string placement_syntax(bool per_process = false);
std::string binding_syntax();

// Both tables as JSON ({"placement": [...], "binding": [...]}, each row name, arg (none, node or
// nodes-or-every), syntax, help):
// what bandwall-topo --list-policies prints for the front end.
json policies_json();

}  // namespace bw
