// The choice of a kernel's instruction-set variant by speed (common/isa_choice.hpp): a table hit,
// its fallback when the binary or CPU lacks the variant it names, an unknown CPU measured and then
// cached, a forced name, and the built-in table's shape. No figure here is a speed: the measure
// functions return made-up numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>

#include <unistd.h>

#include "common/isa.hpp"
#include "common/isa_choice.hpp"

namespace {

using bw::choose_variant;
using bw::json;

const std::vector<std::string> kAll = {"avx512", "avx2", "generic"};

json table() {
  return json::parse(R"({"rows": [{"microarch": "Test Zen", "command": "python3 bench/isa_choices.py --rounds 5",
    "measured": "2026-01-01", "cpu": "a test CPU",
    "kernels": {"stream.dot": {"isa": "avx2", "figures": {"avx512": 19.0, "avx2": 23.0, "generic": 18.0},
                               "unit": "GB/s"},
                "peak.fma": {"isa": "avx512", "figures": {"avx512": 60.0, "avx2": 59.0, "generic": 20.0},
                             "unit": "GFlop/s per core", "command": "python3 bench/isa_choices.py --kernels peak.fma"}}}]})");
}

class IsaChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("bw-isa-choice-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    cache = (dir / "isa-choices-0123.json").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
  std::string cache;
  std::map<std::string, int> timed;
  // Made-up figures: generic fastest, so a measured choice differs from the widest.
  bw::IsaMeasure measure = [this](const std::string& isa) {
    ++timed[isa];
    return isa == "generic" ? 3.0 : isa == "avx2" ? 2.0 : 1.0;
  };
};

TEST_F(IsaChoice, TableRowOfThisMicroarchitecture) {
  auto c = choose_variant("auto", "stream.dot", kAll, measure, "GB/s", table(), "Test Zen", kAll, cache);
  EXPECT_EQ(c.isa, "avx2");
  EXPECT_EQ(c.how, "table");
  EXPECT_EQ(c.figures["avx2"], 23.0);
  EXPECT_EQ(c.source["command"], "python3 bench/isa_choices.py --rounds 5");  // the row's
  EXPECT_TRUE(timed.empty());
  EXPECT_FALSE(std::filesystem::exists(cache));
  auto p = choose_variant("auto", "peak.fma", kAll, measure, "", table(), "Test Zen", kAll, cache);
  EXPECT_EQ(p.isa, "avx512");
  EXPECT_EQ(p.source["command"], "python3 bench/isa_choices.py --kernels peak.fma");  // the entry's own
  json j = c.to_json("stream.dot");
  EXPECT_EQ(j["kernel"], "stream.dot");
  EXPECT_EQ(j["how"], "table");
  EXPECT_EQ(j["unit"], "GB/s");
}

TEST_F(IsaChoice, TableChoiceNotBuiltFallsToItsFastestCandidate) {
  // the table names avx2, which this binary lacks: the fastest of the others by the same figures
  auto c =
      choose_variant("auto", "stream.dot", {"avx512", "generic"}, measure, "GB/s", table(), "Test Zen", kAll, cache);
  EXPECT_EQ(c.isa, "avx512");
  EXPECT_EQ(c.how, "table");
  // a CPU without AVX-512 and a binary without AVX2: one candidate
  auto only = choose_variant("auto", "stream.dot", {"avx512", "generic"}, measure, "GB/s", table(), "Test Zen",
                             {"avx2", "generic"}, cache);
  EXPECT_EQ(only.isa, "generic");
  EXPECT_EQ(only.how, "only");
}

TEST_F(IsaChoice, UnknownCpuIsMeasuredThenCached) {
  auto first = choose_variant("auto", "stream.dot", kAll, measure, "GB/s", table(), "", kAll, cache);
  EXPECT_EQ(first.isa, "generic");
  EXPECT_EQ(first.how, "measured");
  EXPECT_EQ(first.figures["generic"], 3.0);
  EXPECT_EQ(timed["avx512"], 3);  // three alternated rounds of each
  EXPECT_EQ(timed["generic"], 3);
  ASSERT_TRUE(std::filesystem::exists(cache));
  timed.clear();
  auto again = choose_variant("auto", "stream.dot", kAll, measure, "GB/s", table(), "", kAll, cache);
  EXPECT_EQ(again.isa, "generic");
  EXPECT_EQ(again.how, "cached");
  EXPECT_EQ(again.source["file"], cache);
  EXPECT_TRUE(timed.empty());
  // a known CPU whose row lacks the kernel is measured too, and another kernel has its own entry
  auto other = choose_variant("auto", "stream.copy.nt", kAll, measure, "GB/s", table(), "Test Zen", kAll, cache);
  EXPECT_EQ(other.how, "measured");
  EXPECT_NE(other.why.find("no stream.copy.nt entry for Test Zen"), std::string::npos) << other.why;
  // a binary with other variants than those cached measures again
  timed.clear();
  auto rebuilt = choose_variant("auto", "stream.dot", {"avx2", "generic"}, measure, "GB/s", table(), "", kAll, cache);
  EXPECT_EQ(rebuilt.how, "measured");
  EXPECT_EQ(timed["avx2"], 3);
}

TEST_F(IsaChoice, NoMeasurementFallsToTheWidest) {
  auto c = choose_variant("auto", "stream.dot", kAll, {}, "GB/s", table(), "", kAll, "");
  EXPECT_EQ(c.isa, "avx512");
  EXPECT_EQ(c.how, "capability");
}

TEST_F(IsaChoice, ForcedNameWinsOverTableAndIsRefusedWhenAbsent) {
  auto c = choose_variant("generic", "stream.dot", kAll, measure, "GB/s", table(), "Test Zen", kAll, cache);
  EXPECT_EQ(c.isa, "generic");
  EXPECT_EQ(c.how, "forced");
  EXPECT_TRUE(timed.empty());
  auto none =
      choose_variant("avx512", "stream.dot", kAll, measure, "GB/s", table(), "Test Zen", {"avx2", "generic"}, cache);
  EXPECT_TRUE(none.isa.empty());
  auto unknown = choose_variant("sse9", "stream.dot", kAll, measure, "GB/s", table(), "Test Zen", kAll, cache);
  EXPECT_TRUE(unknown.isa.empty());
}

TEST_F(IsaChoice, UnreadableCacheIsMeasuredAgain) {
  std::filesystem::create_directories(dir);
  std::ofstream(cache) << "not json";
  auto c = choose_variant("auto", "stream.dot", kAll, measure, "GB/s", table(), "", kAll, cache);
  EXPECT_EQ(c.how, "measured");
}

// Every entry of the built-in table names a variant among its figures, the fastest of them, with a
// unit and a command (its own or its row's), on a micro-architecture of common/machine.cpp.
TEST(IsaChoiceTable, BuiltInRowsAreComplete) {
  const json& t = bw::isa_choice_table();
  for (const json& row : t["rows"]) {
    ASSERT_TRUE(row.contains("microarch") && row.contains("cpu") && row.contains("command")) << row.dump();
    for (const auto& [key, e] : row["kernels"].items()) {
      const std::string isa = e["isa"];
      ASSERT_TRUE(e["figures"].contains(isa)) << key;
      for (const auto& [other, figure] : e["figures"].items())
        EXPECT_LE(figure.get<double>(), e["figures"][isa].get<double>()) << key << " " << other;
      EXPECT_FALSE(e.value("unit", "").empty()) << key;
      EXPECT_NE(std::find(bw::isa_names().begin(), bw::isa_names().end(), isa), bw::isa_names().end()) << key;
    }
  }
}

}  // namespace
