// Binding policies on synthetic machines: a 2-socket node with 2 NUMA nodes per socket and SMT,
// and a 4-node machine; not only on the 1-node machine the tests happen to run on.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/errors.hpp"
#include "common/policies.hpp"
#include "common/topology.hpp"

namespace {

// 2 packages x 2 NUMA nodes x 4 cores x 2 hardware threads = 32 PUs.
const char* kTwoSocketSmt = "pack:2 numa:2 core:4 pu:2";
const char* kFourNode = "numa:4 core:2 pu:1";

}  // namespace

TEST(TopologySynthetic, Counts) {
  bw::Topology t(kTwoSocketSmt);
  EXPECT_EQ(t.numa_nodes(), 4);
  EXPECT_EQ(t.cores(), 16);
  EXPECT_EQ(t.all_cpus().size(), 32u);
  EXPECT_EQ(t.node_cpus(1).size(), 8u);
  EXPECT_EQ(t.to_json()["packages"], 2);
}

TEST(TopologySynthetic, CompactFillsSmtSiblingsThenCores) {
  bw::Topology t(kTwoSocketSmt);
  auto o = t.order("compact", 4);
  ASSERT_EQ(o.size(), 4u);
  // First two threads share a core, the next two the following core, all on node 0.
  auto j = t.to_json();
  auto core_of = [&](int cpu) {
    for (auto& c : j["core_list"])
      for (int p : c["cpus"])
        if (p == cpu) return c["logical_index"].get<int>();
    return -1;
  };
  EXPECT_EQ(core_of(o[0]), core_of(o[1]));
  EXPECT_EQ(core_of(o[2]), core_of(o[3]));
  EXPECT_NE(core_of(o[0]), core_of(o[2]));
  for (int c : o) EXPECT_EQ(t.node_of_cpu(c), t.node_of_cpu(o[0]));
}

TEST(TopologySynthetic, ScatterVisitsPackagesThenNodesThenCoresBeforeSmt) {
  bw::Topology t(kTwoSocketSmt);
  auto o = t.order("scatter", 0);
  ASSERT_EQ(o.size(), 32u);
  // First 4 threads: one on each NUMA node, alternating packages.
  std::set<int> nodes;
  for (int i = 0; i < 4; ++i) nodes.insert(t.node_of_cpu(o[i]));
  EXPECT_EQ(nodes.size(), 4u);
  auto pkg = [&](int cpu) { return t.node_of_cpu(cpu) / 2; };
  EXPECT_NE(pkg(o[0]), pkg(o[1]));
  // First 16 threads: one per core (no two share a core).
  auto j = t.to_json();
  std::set<int> cores;
  for (int i = 0; i < 16; ++i)
    for (auto& c : j["core_list"])
      for (int p : c["cpus"])
        if (p == o[i]) cores.insert(c["logical_index"].get<int>());
  EXPECT_EQ(cores.size(), 16u);
  // Every CPU exactly once.
  std::set<int> all(o.begin(), o.end());
  EXPECT_EQ(all.size(), 32u);
}

TEST(TopologySynthetic, FourNodeScatterAndNodeOrder) {
  bw::Topology t(kFourNode);
  auto o = t.order("scatter", 4);
  std::set<int> nodes;
  for (int c : o) nodes.insert(t.node_of_cpu(c));
  EXPECT_EQ(nodes.size(), 4u);
  auto n2 = t.order("node:2", 0);
  ASSERT_EQ(n2.size(), 2u);
  for (int c : n2) EXPECT_EQ(t.node_of_cpu(c), 2);
}

TEST(TopologySynthetic, RestrictedToAllowedCpus) {
  bw::Topology t(kFourNode);
  auto o = t.order("scatter", 0, {0, 1, 2, 3});
  EXPECT_EQ(o.size(), 4u);
  for (int c : o) EXPECT_LT(c, 4);
  // The two nodes covered by CPUs 0-3 alternate.
  EXPECT_NE(t.node_of_cpu(o[0]), t.node_of_cpu(o[1]));
}

// Every binding row with a CPU order gives one (node rows for the first node); "none" binds nothing.
TEST(TopologySynthetic, EveryBindingRowOrders) {
  bw::Topology t(kFourNode);
  for (const bw::BindingPolicy& row : bw::binding_policies()) {
    std::string text(row.name);
    if (row.arg == bw::PolicyArg::Node) text += ":0";
    if (!row.order) {
      EXPECT_THROW(t.order(text, 0), bw::UsageError) << text;
      continue;
    }
    EXPECT_FALSE(t.order(text, 0).empty()) << text;
    EXPECT_NE(bw::binding_syntax().find(bw::syntax(row.name, row.arg)), std::string::npos) << text;
  }
  EXPECT_EQ(t.order("node:0", 0), t.node_cpus(0));
}

TEST(TopologySynthetic, RefusesBadRequests) {
  bw::Topology t(kFourNode);
  EXPECT_THROW(t.order("spiral", 1), bw::UsageError);
  EXPECT_THROW(t.order("node:9", 1), bw::UsageError);
  EXPECT_THROW(t.order("node:x", 1), bw::UsageError);
  EXPECT_THROW(t.order("compact", 9), bw::UsageError);
  EXPECT_THROW(bw::Topology("not a topology at all"), bw::UsageError);
}

TEST(TopologyThisMachine, LlcAndDigest) {
  bw::Topology t;
  EXPECT_GT(t.llc_bytes(), 0u);
  EXPECT_EQ(t.digest().size(), 16u);
  EXPECT_EQ(t.digest(), bw::Topology().digest());
  EXPECT_NE(t.digest(), bw::Topology(kFourNode).digest());
}

// BANDWALL_CACHES's sizes replace hwloc's: per CPU, and in the last-level cache, one a cache object
// of that level (one shared cache where hwloc knows none of it).
TEST(TopologySynthetic, ForcedCachesReplaceHwlocs) {
  bw::Topology t("pack:2 l3:1(size=16777216) l2:2(size=1048576) core:1 pu:1");
  EXPECT_EQ(t.cache_bytes(2, 0), 1u << 20);
  EXPECT_EQ(t.llc_bytes(), 2 * (16u << 20));
  t.force_caches("L2=512K,L3=32M");
  EXPECT_EQ(t.cache_bytes(2, 3), 512u << 10);
  EXPECT_EQ(t.cache_bytes(3, 0), 32u << 20);
  EXPECT_EQ(t.llc_bytes(), 2 * (32u << 20));
  EXPECT_EQ(t.llc_bytes({0, 1}), 32u << 20);
  EXPECT_EQ(t.forced_caches(), "BANDWALL_CACHES=L2=512K,L3=32M");
  EXPECT_EQ(t.to_json()["caches_forced"], "BANDWALL_CACHES=L2=512K,L3=32M");
  t.force_caches("L4=64M");  // a level hwloc does not know: one cache shared by all
  EXPECT_EQ(t.llc_bytes(), 64u << 20);
  EXPECT_EQ(t.cache_bytes(3, 0), 16u << 20);
  t.force_caches("");
  EXPECT_EQ(t.forced_caches(), "");
  EXPECT_EQ(t.llc_bytes(), 2 * (16u << 20));
  for (const char* bad : {"L2", "L2=0", "L6=1M", "l2=1M,L2=2M", "L2=big", ",", "M2=1M"})
    EXPECT_THROW(t.force_caches(bad), bw::UsageError) << bad;
  EXPECT_EQ(t.forced_caches(), "");  // a refused text changes nothing
}
