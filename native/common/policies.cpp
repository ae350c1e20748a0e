#include "common/policies.hpp"

#include "common/args.hpp"

#include <numaif.h>

#include "common/topology.hpp"

namespace bw {
namespace {

const PlacementPolicy kPlacements[] = {
    {"first-touch", PolicyArg::None, -1, false,
     "plain pages; the kernel initialises them in parallel, in compute order, so each lands on its thread's node"},
    {"serial", PolicyArg::None, -1, true, "plain pages; the master thread initialises everything (the NUMA mistake)"},
    {"bind", PolicyArg::Node, MPOL_BIND, false, "pages only on NUMA node N"},
    {"interleave", PolicyArg::NodesOrEvery, MPOL_INTERLEAVE, false,
     "pages round-robin over the nodes listed (every node when none is)"},
    {"preferred", PolicyArg::Node, MPOL_PREFERRED, false, "pages on node N while it has room"},
};

const BindingPolicy kBindings[] = {
    {"compact", PolicyArg::None,
     [](const Topology& t, const std::vector<int>& allowed, int, int) { return t.compact_order(allowed); },
     "hwloc logical order: SMT siblings, then cores, then nodes, then packages"},
    {"scatter", PolicyArg::None,
     [](const Topology& t, const std::vector<int>& allowed, int, int) { return t.scatter_order(allowed); },
     "round robin over packages, then NUMA nodes, then cores, then SMT siblings"},
    {"spread", PolicyArg::None,
     [](const Topology& t, const std::vector<int>& allowed, int, int n) { return t.spread_order(allowed, n); },
     "the threads evenly apart in compact order (every P/n-th of P CPUs), as OpenMP's spread"},
    {"node", PolicyArg::Node,
     [](const Topology& t, const std::vector<int>& allowed, int node, int) { return t.compact_order(allowed, node); },
     "the CPUs of NUMA node N (OS number), in compact order"},
    {"none", PolicyArg::None, nullptr, "threads are not bound: the OS places them"},
};

template <class Row>
std::string syntax_list(std::span<const Row> rows, bool (*keep)(const Row&)) {
  std::vector<std::string> words;
  for (const Row& r : rows)
    if (keep(r)) words.push_back(syntax(r.name, r.arg));
  return or_list(words);
}

// The argument's type as the manifest names it.
const char* arg_name(PolicyArg arg) {
  switch (arg) {
    case PolicyArg::Node: return "node";
    case PolicyArg::NodesOrEvery: return "nodes-or-every";
    default: return "none";
  }
}

template <class Row>
json rows_json(std::span<const Row> rows) {
  json out = json::array();
  for (const Row& r : rows)
    out.push_back({{"name", r.name}, {"arg", arg_name(r.arg)}, {"syntax", syntax(r.name, r.arg)}, {"help", r.help}});
  return out;
}

}  // namespace

std::span<const PlacementPolicy> placement_policies() { return kPlacements; }
std::span<const BindingPolicy> binding_policies() { return kBindings; }

std::string syntax(std::string_view name, PolicyArg arg) {
  std::string s(name);
  if (arg == PolicyArg::Node) s += ":N";
  if (arg == PolicyArg::NodesOrEvery) s += "[:N,M...]";
  return s;
}

std::string placement_syntax(bool per_process) {
  if (per_process)
    return syntax_list<PlacementPolicy>(kPlacements, [](const PlacementPolicy& p) { return p.mode >= 0; });
  return syntax_list<PlacementPolicy>(kPlacements, [](const PlacementPolicy&) { return true; });
}

std::string binding_syntax() {
  return syntax_list<BindingPolicy>(kBindings, [](const BindingPolicy&) { return true; });
}

json policies_json() {
  json placement = rows_json<PlacementPolicy>(kPlacements);
  for (std::size_t i = 0; i < placement.size(); ++i) placement[i]["per_process"] = kPlacements[i].mode >= 0;
  return {{"placement", placement}, {"binding", rows_json<BindingPolicy>(kBindings)}};
}

}  // namespace bw
