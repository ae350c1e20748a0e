// CPU lists in likwid's thread-domain syntax, on synthetic machines: a 2-socket node with 2 NUMA
// nodes per socket, 4 cores per node and SMT 2 (hwloc numbers its PUs in order: core k of the
// machine holds PUs 2k and 2k+1), and a machine without SMT.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/topology.hpp"

namespace {

using V = std::vector<int>;
const char* kTwoSocketSmt = "pack:2 numa:2 core:4 pu:2";

}  // namespace

TEST(CpuList, PlainListsKeepTheirMeaning) {
  bw::Topology t(kTwoSocketSmt);
  EXPECT_EQ(bw::resolve_cpu_list("3,2,1,0", t), (V{3, 2, 1, 0}));
  EXPECT_EQ(bw::resolve_cpu_list("0-7:2", t), (V{0, 2, 4, 6}));
}

TEST(CpuList, DomainsCountPhysicalCoresFirst) {
  bw::Topology t(kTwoSocketSmt);
  EXPECT_EQ(t.domain_cpus('S', 0), (V{0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(bw::resolve_cpu_list("S0:0-3", t), (V{0, 2, 4, 6}));
  EXPECT_EQ(bw::resolve_cpu_list("S0:8-9", t), (V{1, 3}));  // the second hardware threads
  EXPECT_EQ(bw::resolve_cpu_list("S1:0", t), (V{16}));
  EXPECT_EQ(bw::resolve_cpu_list("M1:0,1", t), (V{8, 10}));
  EXPECT_EQ(bw::resolve_cpu_list("M3:3", t), (V{30}));
  EXPECT_EQ(bw::resolve_cpu_list("N:0-3", t), (V{0, 2, 4, 6}));
  EXPECT_EQ(bw::resolve_cpu_list("N:16", t), (V{1}));
  // No dies and no caches in the description: one domain, the whole machine.
  EXPECT_EQ(bw::resolve_cpu_list("D0:0-1", t), (V{0, 2}));
  EXPECT_EQ(bw::resolve_cpu_list("C0:0-1", t), (V{0, 2}));
}

TEST(CpuList, DomainsJoinWithAt) {
  bw::Topology t(kTwoSocketSmt);
  EXPECT_EQ(bw::resolve_cpu_list("S0:0-1@S1:0-1", t), (V{0, 2, 16, 18}));
  EXPECT_EQ(bw::resolve_cpu_list("M0:0@M1:0@M2:0@M3:0", t), (V{0, 8, 16, 24}));
}

TEST(CpuList, Expressions) {
  bw::Topology t(kTwoSocketSmt);
  EXPECT_EQ(bw::resolve_cpu_list("E:S1:2", t), (V{16, 18}));
  EXPECT_EQ(bw::resolve_cpu_list("E:N:4:1:2", t), (V{0, 4, 8, 12}));
  EXPECT_EQ(bw::resolve_cpu_list("E:N:4:2:4", t), (V{0, 2, 8, 10}));
  EXPECT_EQ(bw::resolve_cpu_list("E:M0:2@E:M2:2", t), (V{0, 2, 16, 18}));
}

TEST(CpuList, WithoutSmtTheDomainIsItsCoresInOrder) {
  bw::Topology t("numa:4 core:2 pu:1");
  EXPECT_EQ(bw::resolve_cpu_list("M2:0-1", t), (V{4, 5}));
  EXPECT_EQ(bw::resolve_cpu_list("S0:0-7", t), (V{0, 1, 2, 3, 4, 5, 6, 7}));
}

struct Bad {
  const char* list;
  const char* fragment;
};

class CpuListBad : public ::testing::TestWithParam<Bad> {};

TEST_P(CpuListBad, IsOneUsageErrorNamingTheList) {
  bw::Topology t(kTwoSocketSmt);
  try {
    bw::resolve_cpu_list(GetParam().list, t);
    FAIL() << GetParam().list << " was accepted";
  } catch (const bw::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().fragment), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, CpuListBad,
    ::testing::Values(Bad{"S2:0", "this machine has 2 sockets"}, Bad{"M4:0", "this machine has 4 NUMA domains"},
                      Bad{"S0:16", "asks for CPU 16 of a domain of 16 (0-15)"},
                      Bad{"S0", "needs CPUs after its domain"}, Bad{"S:0", "needs its number"},
                      Bad{"N1:0", "the node domain is N"}, Bad{"X0:0", "unknown CPU domain 'X'"},
                      Bad{"s0:0", "CPU list 's0:0'"}, Bad{"S0:0@S0:0", "names CPU 0 twice"}, Bad{"S0:0@", "empty part"},
                      Bad{"S0:", "CPU list is empty"}, Bad{"S0:0,,1", "empty item"},
                      Bad{"E:N:0", "COUNT and CHUNK of at least 1"}, Bad{"E:N:4:2:1", "STRIDE of at least CHUNK"},
                      Bad{"E:N", "is not E:DOMAIN:COUNT"}, Bad{"E:N:40", "asks for CPU 32 of a domain of 32"},
                      Bad{"Sx:0", "is not a whole number"}));
