// The machine as hwloc sees it (or a synthetic / XML machine for tests), and the CPU orders the
// binding policies (common/policies.hpp) draw from it.
#pragma once
#include <hwloc.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <string>
#include <vector>

namespace bw {

class Topology {
 public:
  // The process-wide topology. By default the real machine; BANDWALL_TOPOLOGY (an hwloc synthetic
  // description such as "pack:2 numa:2 core:4 pu:2", or the path of an hwloc XML file) replaces it.
  static Topology& instance();
  // Loads a synthetic description or XML file (throws UsageError when hwloc refuses it).
  explicit Topology(const std::string& source = "");
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  bool is_this_machine() const { return source_.empty(); }
  std::string source() const { return source_.empty() ? "this machine" : source_; }

  std::string cpu_model() const;
  std::string digest() const;
  int numa_nodes() const;
  std::vector<int> node_os_indexes() const;       // OS numbers of the NUMA nodes
  std::vector<int> node_cpus(int node_os) const;  // OS numbers of the PUs of a node
  int node_of_cpu(int cpu) const;                 // -1 when unknown
  std::vector<int> all_cpus() const;              // every PU, OS numbers, ascending
  int cores() const;
  // Sum of the distinct last-level caches that cover cpus (all CPUs when empty).
  std::uint64_t llc_bytes(const std::vector<int>& cpus = {}) const;
  // Size of the level-th data (or unified) cache that covers cpu (1: L1d, 2: L2, ...); 0 when hwloc
  // knows none. A size forced for the level (force_caches) replaces hwloc's, here and in llc_bytes.
  std::uint64_t cache_bytes(int level, int cpu) const;

  // Sizes that replace hwloc's for every cache of a level: "L2=1M,L3=32M" (levels L1 to L5, L1 the
  // data cache; sizes as parse_size reads them). instance() takes them from BANDWALL_CACHES: what the
  // cache models (blocks, sweeps) would do with another CPU's caches, and the tests' way of holding
  // those models' inputs fixed on any machine. A level hwloc does not know is taken as one cache
  // shared by every CPU. Throws UsageError (one line) for a malformed text; "" forces nothing.
  void force_caches(const std::string& text);
  // The text that forced them ("" when none), for the records.
  const std::string& forced_caches() const { return forced_text_; }
  // Whether a size was forced for the level.
  bool cache_forced(int level) const { return forced_.count(level) > 0; }

  // The first n CPUs under a binding policy (a row of binding_policies(): compact, scatter, spread,
  // node:N), drawn from allowed (every CPU when empty); n = 0 means all of them. Throws UsageError
  // for unknown words, nodes or too many threads.
  std::vector<int> order(const std::string& policy, int n, const std::vector<int>& allowed = {}) const;
  // The orders the binding rows use: hwloc logical order (SMT siblings, then cores, then nodes,
  // then packages), only node's CPUs when node >= 0; and round robin over packages, then NUMA
  // nodes, then cores, then SMT siblings.
  std::vector<int> compact_order(const std::vector<int>& allowed, int node = -1) const;
  std::vector<int> scatter_order(const std::vector<int>& allowed) const;
  // n CPUs evenly apart in compact order (every P/n-th of the P allowed), as OpenMP's spread; the
  // whole compact order when n is 0 or larger than P.
  std::vector<int> spread_order(const std::vector<int>& allowed, int n) const;
  // likwid's thread domains: 'N' the whole node, 'S' package, 'D' die, 'M' NUMA node, 'C' last-level
  // cache, with index the domain's logical index (0 for N). Its CPUs (OS numbers) in likwid's order
  // within a domain: the first hardware thread of every core, then the second of every core, ...
  // Throws UsageError when the machine has no such domain.
  std::vector<int> domain_cpus(char kind, int index) const;

  nlohmann::json to_json() const;

 private:
  hwloc_topology_t topo_ = nullptr;
  std::string source_;
  std::map<int, std::uint64_t> forced_;  // level -> bytes
  std::string forced_text_;
};

// Hardware counters: "available" or "unavailable: <reason>"; DSA work queues found.
std::string pmu_status();
std::vector<std::string> dsa_work_queues();

}  // namespace bw
