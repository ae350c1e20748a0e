// The decision rule (common/decide.hpp) against the table of cases the front end's implementation
// is held to as well (tests/fixtures/decision_cases.json): both give the same numbers and choices.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/decide.hpp"

#ifndef BANDWALL_SOURCE_DIR
#define BANDWALL_SOURCE_DIR "."
#endif

namespace {

using bw::json;
namespace d = bw::decide;

const json& cases() {
  static const json j = [] {
    std::ifstream in(std::string(BANDWALL_SOURCE_DIR) + "/tests/fixtures/decision_cases.json");
    std::stringstream s;
    s << in.rdbuf();
    return json::parse(s.str());
  }();
  return j;
}

d::Rule case_rule() {
  const json& r = cases()["rule"];
  return {r["confidence"].get<double>(), r["margin"].get<double>(), r["tolerance"].get<double>(),
          r["rounds"].get<int>(), r["rounds_when_unsettled"].get<int>()};
}

TEST(Decide, TheCompiledInRuleIsTheOneTheCasesAssume) {
  const d::Rule& r = d::rule();
  const d::Rule c = case_rule();
  EXPECT_DOUBLE_EQ(r.confidence, c.confidence);
  EXPECT_DOUBLE_EQ(r.margin, c.margin);
  EXPECT_DOUBLE_EQ(r.tolerance, c.tolerance);
  EXPECT_EQ(r.rounds, c.rounds);
  EXPECT_EQ(r.rounds_when_unsettled, c.rounds_when_unsettled);
}

TEST(Decide, Coverage) {
  for (const json& c : cases()["coverage"])
    EXPECT_NEAR(d::coverage(c["n"], c["k"]), c["coverage"].get<double>(), 1e-12) << c.dump();
}

TEST(Decide, Intervals) {
  for (const json& c : cases()["intervals"]) {
    const d::Interval i = d::ratio_interval(c["a"], c["b"], case_rule());
    SCOPED_TRACE(c["name"].get<std::string>());
    EXPECT_NEAR(i.median, c["median"].get<double>(), 1e-9);
    EXPECT_NEAR(i.lo, c["lo"].get<double>(), 1e-9);
    EXPECT_NEAR(i.hi, c["hi"].get<double>(), 1e-9);
    EXPECT_NEAR(i.coverage, c["coverage"].get<double>(), 1e-12);
    EXPECT_EQ(std::string(d::to_string(d::verdict(i, case_rule()))), c["verdict"].get<std::string>());
    EXPECT_EQ(d::unsettled(i, case_rule()), c["unsettled"].get<bool>());
  }
}

TEST(Decide, BestAmongCandidates) {
  for (const json& c : cases()["best"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto names = c["names"].get<std::vector<std::string>>();
    const d::Choice ch = d::choose_best(names, c["rates"], c["default"], "x", case_rule());
    EXPECT_EQ(names[ch.chosen], c["chosen"].get<std::string>());
    EXPECT_EQ(ch.decisive, c["decisive"].get<bool>());
    EXPECT_EQ(ch.record["decisive"], c["decisive"]);
    EXPECT_FALSE(ch.why.empty());
  }
}

TEST(Decide, FewestThreads) {
  for (const json& c : cases()["fewest"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto counts = c["counts"].get<std::vector<int>>();
    const d::Choice ch = d::choose_fewest(counts, c["rates"], "x", case_rule());
    EXPECT_EQ(counts[ch.chosen], c["chosen"].get<int>());
    EXPECT_EQ(ch.decisive, c["decisive"].get<bool>());
  }
}

TEST(Decide, TheSameRatesGiveTheSameChoiceWhateverTheirOrderWithinARound) {
  // Rates of a noisy machine where the candidates are 1% apart: no choice, run after run.
  const std::vector<std::vector<double>> rates = {{100, 120, 90, 110, 95}, {101, 118, 92, 111, 96}};
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(d::choose_best({"x", "y"}, rates, 0, "u").decisive);
}

// A decision read back from a file is carried into a record only with the shape a Choice gives it:
// every record choose_best makes passes, and each spoilt field fails.
TEST(Decide, ChoiceRecordShape) {
  const json good = d::choose_best({"x", "y"}, {{100, 101, 99, 100, 100}, {120, 121, 119, 120, 120}}, 0, "u").record;
  EXPECT_TRUE(d::is_choice_record(good));
  const std::vector<std::pair<std::string, json>> spoilt = {
      {"default", nullptr}, {"chosen", json::array()}, {"decisive", "yes"}, {"why", ""}, {"why", 3},
      {"rule", 1},          {"comparisons", "many"},
  };
  for (const auto& [field, value] : spoilt) {
    json bad = good;
    bad[field] = value;
    EXPECT_FALSE(d::is_choice_record(bad)) << field;
  }
  json bad = good;
  bad["rule"]["confidence"] = 0;
  EXPECT_FALSE(d::is_choice_record(bad));
  bad = good;
  bad["comparisons"][0].erase("ratio");
  EXPECT_FALSE(d::is_choice_record(bad));
  EXPECT_FALSE(d::is_choice_record(json::object()));
  EXPECT_FALSE(d::is_choice_record(nullptr));
}

}  // namespace
