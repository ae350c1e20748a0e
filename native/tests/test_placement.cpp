// Placement policies (parsing, refusal of unknown words and nodes), buffer alignment and page maps
// of untouched, partly touched, read-only and huge-page-backed memory on this machine. The
// multi-node behaviour is proven in the simulated NUMA guests (tests/test_vm_placement.py).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "common/errors.hpp"
#include "common/placement.hpp"
#include "common/policies.hpp"
#include "common/topology.hpp"

namespace {

double share_sum(const nlohmann::json& m) {
  double s = 0;
  for (auto& [k, v] : m.items()) s += v.get<double>();
  return s;
}

int first_node() { return bw::Topology::instance().node_os_indexes().at(0); }

}  // namespace

TEST(PlacementParse, WordsRoundTrip) {
  std::string n = std::to_string(first_node());
  EXPECT_EQ(bw::Placement::parse("first-touch").str(), "first-touch");
  EXPECT_EQ(bw::Placement::parse("serial").str(), "serial");
  EXPECT_TRUE(bw::Placement::parse("serial").serial_init());
  EXPECT_EQ(bw::Placement::parse("bind:" + n).name(), "bind");
  EXPECT_EQ(bw::Placement::parse("preferred:" + n).nodes, std::vector<int>{first_node()});
  EXPECT_EQ(bw::Placement::parse("interleave").nodes, bw::Topology::instance().node_os_indexes());
  EXPECT_EQ(bw::Placement::parse("interleave:" + n).str(), "interleave:" + n);
}

// Every row of the table is written as its syntax says, parses back to itself and is applied with
// its memory mode (an mbind that the kernel accepts).
TEST(PlacementTable, EveryRowParsesAndApplies) {
  const std::string n = std::to_string(first_node());
  for (const bw::PlacementPolicy& row : bw::placement_policies()) {
    std::string text(row.name);
    if (row.arg != bw::PolicyArg::None) text += ":" + n;
    bw::Placement p = bw::Placement::parse(text);
    EXPECT_EQ(p.policy, &row) << text;
    EXPECT_EQ(p.str(), text);
    EXPECT_NE(bw::placement_syntax().find(bw::syntax(row.name, row.arg)), std::string::npos) << text;
    EXPECT_EQ(bw::placement_syntax(true).find(bw::syntax(row.name, row.arg)) != std::string::npos, row.mode >= 0);
    bw::Buffer b(1u << 20, p);
    std::memset(b.data(), 1, b.bytes());
  }
  EXPECT_EQ(bw::policies_json()["placement"].size(), bw::placement_policies().size());
}

TEST(PlacementParse, RefusesBadInput) {
  for (const char* bad : {"", "firsttouch", "bind", "bind:", "bind:x", "bind:-1", "bind:999", "bind:99999999999999",
                          "interleave:", "interleave:0,,", "preferred", "serial:0", "first-touch:1", "bind:0,1"}) {
    EXPECT_THROW(bw::Placement::parse(bad), bw::UsageError) << bad;
  }
}

TEST(PlacementBuffer, LargeBuffersAreHugePageAligned) {
  bw::Buffer b(5u << 20, bw::Placement::parse("first-touch"));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (2u << 20), 0u);
  std::memset(b.data(), 1, b.bytes());  // the whole length is mapped
  bw::Buffer small(4096 * 3, bw::Placement::parse("first-touch"));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 4096, 0u);
}

TEST(PlacementPageMap, UntouchedPagesAreAbsent) {
  bw::Buffer b(1u << 20, bw::Placement::parse("first-touch"));
  auto m = bw::page_map(b.data(), b.bytes());
  EXPECT_DOUBLE_EQ(m.value("absent", 0.0), 1.0);
}

TEST(PlacementPageMap, HalfTouched) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  bw::Buffer b(64 * page, bw::Placement::parse("first-touch"));
  std::memset(b.data(), 1, 32 * page);
  auto m = bw::page_map(b.data(), b.bytes());
  EXPECT_DOUBLE_EQ(m.value("absent", 0.0), 0.5);
  EXPECT_DOUBLE_EQ(share_sum(m), 1.0);
}

TEST(PlacementPageMap, ReadOnlyPagesHoldNoMemory) {
  // Reading untouched anonymous memory maps the shared zero page, which belongs to no array.
  bw::Buffer b(16 * 4096, bw::Placement::parse("first-touch"));
  volatile const char* p = b.as<const char>();
  long sum = 0;
  for (std::size_t i = 0; i < b.bytes(); i += 4096) sum += p[i];
  EXPECT_EQ(sum, 0);
  EXPECT_DOUBLE_EQ(bw::page_map(b.data(), b.bytes()).value("absent", 0.0), 1.0);
}

TEST(PlacementPageMap, BoundMemoryIsOnItsNode) {
  std::string n = std::to_string(first_node());
  bw::Buffer b(4u << 20, bw::Placement::parse("bind:" + n));
  std::memset(b.data(), 1, b.bytes());
  EXPECT_DOUBLE_EQ(bw::page_map(b.data(), b.bytes()).value(n, 0.0), 1.0);
}

TEST(PlacementPageMap, HugePagesCountByBasePages) {
  // With madvise'd huge pages (when the kernel offers them) the shares still cover the whole buffer
  // and a half-touched buffer reads half present, at huge page granularity.
  std::string n = std::to_string(first_node());
  bw::Buffer b(8u << 20, bw::Placement::parse("bind:" + n));
  madvise(b.data(), b.bytes(), MADV_HUGEPAGE);
  std::memset(b.data(), 1, 4u << 20);
  auto m = bw::page_map(b.data(), b.bytes());
  EXPECT_DOUBLE_EQ(m.value(n, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(m.value("absent", 0.0), 0.5);
}

TEST(PlacementPageMap, SamplingKeepsShares) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  bw::Buffer b(1024 * page, bw::Placement::parse("first-touch"));
  std::memset(b.data(), 1, 256 * page);
  auto m = bw::page_map(b.data(), b.bytes(), 64);
  EXPECT_NEAR(m.value("absent", 0.0), 0.75, 1.0 / 64);
}

// First-touch parts at huge-page granularity: cuts on a huge-page boundary leave the pages whole,
// a cut inside one splits that page, parts smaller than a huge page give base pages throughout.
TEST(Placement, SplitPagesAtThreadCuts) {
  const std::size_t huge = bw::huge_page_bytes(), bytes = 8 * huge;
  bw::Placement pl;
  pl.pages = bw::Pages::Huge;
  bw::Buffer b(bytes, pl);
  bw::PageSplit whole = bw::split_pages_at(b.data(), bytes, {4 * huge});
  EXPECT_EQ(whole.pages_split, 0);
  EXPECT_EQ(whole.mode, "huge pages whole to one thread");
  EXPECT_EQ(whole.smallest_part_bytes, 4 * huge);
  bw::PageSplit two = bw::split_pages_at(b.data(), bytes, {3 * huge + 4096, 6 * huge + 8192});
  EXPECT_EQ(two.pages_split, 2);
  EXPECT_EQ(two.smallest_part_bytes, 2 * huge - 8192);
  EXPECT_EQ(two.mode, "base pages in the huge pages that thread parts share");
  bw::PageSplit fine = bw::split_pages_at(b.data(), bytes, {huge / 2, 5 * huge});
  EXPECT_EQ(fine.mode.rfind("base pages throughout", 0), 0u) << fine.mode;
  EXPECT_EQ(fine.smallest_part_bytes, huge / 2);
}
