// The C API of the one CPU-list parser (common/cpulist.h), as tables of cases: every form on a
// described machine given through the topology input (2 sockets of 4 cores with SMT 2: socket s holds
// the cores 4s..4s+3, core k the CPUs 2k and 2k+1), and malformed lists, each refused with one line.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cpulist.h"

namespace {

using V = std::vector<int>;

// likwid's order: the first hardware thread of every core, then the second.
V socket_cpus(int s) {
  V out;
  for (int smt = 0; smt < 2; ++smt)
    for (int core = 4 * s; core < 4 * s + 4; ++core) out.push_back(2 * core + smt);
  return out;
}

int described(void* ctx, char kind, int index, const int** cpus, int* count, char* msg, size_t len) {
  auto* last = static_cast<V*>(ctx);
  if (kind == 'N' && index == 0) {  // the first threads of all 8 cores, then the second ones
    *last = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
  } else if ((kind == 'S' || kind == 'M') && index < 2) {
    *last = socket_cpus(index);
  } else {
    std::snprintf(msg, len, "CPU domain %c%d: this machine has 2 of them (numbered from 0)", kind, index);
    return -1;
  }
  *cpus = last->data();
  *count = static_cast<int>(last->size());
  return 0;
}

struct Parsed {
  int rc;
  V cpus;
  std::string msg;
};

Parsed parse(const char* text, const char* name = nullptr, unsigned flags = 0, bool topology = true) {
  V last;
  const bw_cpulist_topology topo{described, &last};
  int* cpus = nullptr;
  int count = 0;
  char msg[512] = "untouched";
  Parsed p{bw_cpulist_parse(text, name, topology ? &topo : nullptr, flags, &cpus, &count, msg, sizeof msg), {}, msg};
  if (p.rc == 0) p.cpus.assign(cpus, cpus + count);
  std::free(cpus);
  return p;
}

struct Good {
  const char* list;
  V cpus;
};

class CpuListC : public ::testing::TestWithParam<Good> {};

TEST_P(CpuListC, NamesTheseCpusInThreadOrder) {
  Parsed p = parse(GetParam().list);
  ASSERT_EQ(p.rc, 0) << p.msg;
  EXPECT_EQ(p.cpus, GetParam().cpus);
}

INSTANTIATE_TEST_SUITE_P(Table, CpuListC,
                         ::testing::Values(Good{"0", {0}}, Good{"0-3,8", {0, 1, 2, 3, 8}},
                                           Good{"3,2,1,0", {3, 2, 1, 0}}, Good{"0-7:2", {0, 2, 4, 6}},
                                           Good{"1-7:3", {1, 4, 7}}, Good{"5:2", {5}}, Good{"S0:0-3", {0, 2, 4, 6}},
                                           Good{"S0:4-5", {1, 3}}, Good{"S1:0", {8}}, Good{"M1:0,1", {8, 10}},
                                           Good{"N:0-3", {0, 2, 4, 6}}, Good{"N:8", {1}},
                                           Good{"S0:0-7:2", {0, 4, 1, 5}}, Good{"S0:0-1@S1:0-1", {0, 2, 8, 10}},
                                           Good{"E:S1:2", {8, 10}}, Good{"E:N:4:1:2", {0, 4, 8, 12}},
                                           Good{"E:N:4:2:4", {0, 2, 8, 10}}, Good{"E:S0:2@E:S1:2", {0, 2, 8, 10}},
                                           Good{"S0:0@E:S1:1", {0, 8}}));

struct Bad {
  const char* list;
  const char* message;  // the whole line
};

class CpuListCBad : public ::testing::TestWithParam<Bad> {};

TEST_P(CpuListCBad, IsRefusedWithOneLineNamingTheList) {
  Parsed p = parse(GetParam().list);
  EXPECT_EQ(p.rc, -1) << GetParam().list << " was accepted";
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(p.msg, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CpuListCBad,
    ::testing::Values(
        Bad{"", "CPU list is empty"}, Bad{",", "CPU list ',': empty item at position 1"},
        Bad{"1,,2", "CPU list '1,,2': empty item at position 2"}, Bad{"1,", "CPU list '1,': empty item at position 2"},
        Bad{"a", "CPU list 'a': CPU 'a' is not a whole number"},
        Bad{"0-", "CPU list '0-': CPU '' is not a whole number"}, Bad{"-1", "CPU list '-1' has a negative CPU"},
        Bad{"3-1", "CPU list '3-1' has a descending range '3-1'"},
        Bad{"0-3:0", "CPU list '0-3:0' has a stride below 1"},
        Bad{"0-3:x", "CPU list '0-3:x': stride 'x' is not a whole number"},
        Bad{"0,0", "CPU list '0,0' names CPU 0 twice"}, Bad{"0-3,2", "CPU list '0-3,2' names CPU 2 twice"},
        Bad{"99999999", "CPU list '99999999' names CPU 99999999, beyond any machine"},
        Bad{"s0:0", "CPU list 's0:0': CPU 's0' is not a whole number"},
        Bad{"S2:0", "CPU list 'S2:0': CPU domain S2: this machine has 2 of them (numbered from 0)"},
        Bad{"S0:8", "CPU list 'S0:8': 'S0:8' asks for CPU 8 of a domain of 8 (0-7)"},
        Bad{"S0", "CPU list 'S0': 'S0' needs CPUs after its domain, as in S0:0-1"},
        Bad{"S:0", "CPU list 'S:0': domain 'S' needs its number (S0)"},
        Bad{"N1:0", "CPU list 'N1:0': the node domain is N, not 'N1'"},
        Bad{"X0:0", "CPU list 'X0:0': unknown CPU domain 'X' (use N, S, D, M or C)"},
        Bad{"Sx:0", "CPU list 'Sx:0': domain number 'x' is not a whole number"},
        Bad{"S1234567:0", "CPU list 'S1234567:0': domain number '1234567' is too large"},
        Bad{"S0:0@S0:0", "CPU list 'S0:0@S0:0' names CPU 0 twice"},
        Bad{"S0:0@", "CPU list 'S0:0@' has an empty part between @"},
        Bad{"S0:", "CPU list 'S0:': CPU list is empty after its domain 'S0'"},
        Bad{"S0:0,,1", "CPU list 'S0:0,,1': empty item at position 2"},
        Bad{"E:N:0", "CPU list 'E:N:0': 'E:N:0' needs COUNT and CHUNK of at least 1 and STRIDE of at least CHUNK"},
        Bad{"E:N:4:2:1",
            "CPU list 'E:N:4:2:1': 'E:N:4:2:1' needs COUNT and CHUNK of at least 1 and STRIDE of at least CHUNK"},
        Bad{"E:N", "CPU list 'E:N': 'E:N' is not E:DOMAIN:COUNT or E:DOMAIN:COUNT:CHUNK:STRIDE"},
        Bad{"E:N:1:1", "CPU list 'E:N:1:1': 'E:N:1:1' is not E:DOMAIN:COUNT or E:DOMAIN:COUNT:CHUNK:STRIDE"},
        Bad{"E:N:1:1:1:1",
            "CPU list 'E:N:1:1:1:1': 'E:N:1:1:1:1' is not E:DOMAIN:COUNT or E:DOMAIN:COUNT:CHUNK:STRIDE"},
        Bad{"E:N:20", "CPU list 'E:N:20': 'E:N:20' asks for CPU 16 of a domain of 16 (0-15)"},
        Bad{"E:s0:1", "CPU list 'E:s0:1': 's0' is not a CPU domain (N, S0, D0, M0, C0)"},
        Bad{"E:N:x", "CPU list 'E:N:x': count 'x' is not a whole number"}));

TEST(CpuListCApi, ANameReplacesTheSubject) {
  EXPECT_EQ(parse("0,,1", "MP_BLIST").msg, "MP_BLIST='0,,1': empty item at position 2");
  EXPECT_EQ(parse("", "MP_BLIST").msg, "MP_BLIST is empty");
}

TEST(CpuListCApi, RepeatsWhenAsked) {
  EXPECT_EQ(parse("0,0,1-2,1", nullptr, BW_CPULIST_REPEATS).cpus, (V{0, 0, 1, 2, 1}));
  EXPECT_EQ(parse("S0:0@S0:0", nullptr, BW_CPULIST_REPEATS).cpus, (V{0, 0}));
}

TEST(CpuListCApi, DomainsWithoutATopologyAreRefused) {
  Parsed p = parse("S0:0-1", "MP_BLIST", 0, false);
  EXPECT_EQ(p.rc, -1);
  EXPECT_EQ(p.msg, "MP_BLIST='S0:0-1': likwid's domain 'S0' needs the machine's topology, which is not known here");
  EXPECT_EQ(parse("0-3", nullptr, 0, false).cpus, (V{0, 1, 2, 3}));
}

TEST(CpuListCApi, RefusesUnknownFlagsAndMissingOutputs) {
  int* cpus = nullptr;
  int count = 0;
  EXPECT_EQ(bw_cpulist_parse("0", nullptr, nullptr, 0x80, &cpus, &count, nullptr, 0), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(bw_cpulist_parse(nullptr, nullptr, nullptr, 0, &cpus, &count, nullptr, 0), -1);
}

TEST(CpuListCApi, EveryFormOfTheGrammarParses) {
  std::size_t n = 0;
  const bw_cpulist_form* forms = bw_cpulist_forms(&n);
  ASSERT_GE(n, 5u);
  for (std::size_t i = 0; i < n; ++i) {
    Parsed p = parse(forms[i].example);
    EXPECT_EQ(p.rc, 0) << forms[i].name << ": " << p.msg;
    EXPECT_EQ(parse(forms[i].example, nullptr, 0, false).rc == 0, forms[i].needs_topology == 0) << forms[i].name;
  }
}

}  // namespace
