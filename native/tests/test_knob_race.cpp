// A kernel knob raced on the run's data and kept (common/knob_race.hpp): no race with one candidate
// or too small a budget, a first race's winner kept unconfirmed until a second race agrees, the
// default kept when a race finds no difference, entries of another CPU or candidate list ignored,
// measure racing afresh, and a file that cannot be written. The trials return made-up rates.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <unistd.h>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/knob_race.hpp"

namespace {

namespace fs = std::filesystem;
using bw::json;

class KnobRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bw-knob-race-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  bw::KnobRace race(std::vector<std::string> candidates = {"2x4", "4x2", "4x2-split"}, int budget = 100) const {
    return {"register shape",
            "iso3dfd.rows.r6 avx512 shape",
            std::move(candidates),
            "Test CPU",
            (dir_ / "knob-races.json").string(),
            false,
            [budget] { return budget; }};
  }
  // A trial whose rates are rates[name], counting the trials of each candidate.
  bw::KnobTrial rates(std::map<std::string, double> r) {
    return [this, r](const std::string& name) {
      ++trials_[name];
      return r.at(name);
    };
  }
  json kept(const bw::KnobRace& k) const {
    const json file = bw::read_json_file(k.cache_path);
    const json* e = bw::cached_choice(file, k.key);
    return e ? *e : json();
  }

  fs::path dir_;
  std::map<std::string, int> trials_;
};

const int kRounds = bw::decide::rule().rounds;

// The default at 100, 4x2 at 130 and 90 in turn: a median above 1.02x whose interval reaches below
// 1 however many rounds pool, unsettled for good.
bw::KnobTrial unsettled_4x2() {
  auto calls = std::make_shared<int>(0);
  return [calls](const std::string& name) {
    if (name != "4x2") return 100.0;
    return (*calls)++ % 2 == 0 ? 130.0 : 90.0;
  };
}

TEST_F(KnobRaceTest, OneCandidateRacesNothing) {
  const auto out = bw::race_knob(race({"2x4"}), rates({{"2x4", 1}}));
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_EQ(out.how, "default");
  EXPECT_EQ(out.trials, 0);
  EXPECT_TRUE(trials_.empty());
  EXPECT_NE(out.why.find("no row of the table"), std::string::npos);
}

TEST_F(KnobRaceTest, ARunTooShortRacesNothing) {
  const auto out = bw::race_knob(race({"2x4", "4x2"}, 2 * kRounds - 1), rates({{"2x4", 1}, {"4x2", 9}}));
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_EQ(out.how, "default");
  EXPECT_TRUE(trials_.empty());
  EXPECT_NE(out.why.find("too short"), std::string::npos);
  EXPECT_TRUE(kept(race()).is_null());
}

TEST_F(KnobRaceTest, TheDefaultFastestIsKeptSettled) {
  const auto k = race();
  const auto out = bw::race_knob(k, rates({{"2x4", 150}, {"4x2", 100}, {"4x2-split", 100}}));
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_EQ(out.how, "raced");
  EXPECT_EQ(out.trials, 3 * kRounds);
  EXPECT_EQ(trials_["4x2-split"], kRounds);
  EXPECT_TRUE(kept(k)["settled"].get<bool>());
  EXPECT_TRUE(bw::decide::is_choice_record(out.record["race"]));
  trials_.clear();
  const auto again = bw::race_knob(k, rates({{"2x4", 1}, {"4x2", 100}, {"4x2-split", 100}}));
  EXPECT_EQ(again.how, "kept");
  EXPECT_EQ(again.chosen, "2x4");
  EXPECT_TRUE(trials_.empty());
}

TEST_F(KnobRaceTest, NoDifferenceBeyondNoiseKeepsTheDefault) {
  const auto k = race();
  const auto out = bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 100}, {"4x2-split", 101}}));
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_EQ(kept(k)["chosen"], "2x4");
  EXPECT_TRUE(kept(k)["settled"].get<bool>());
}

TEST_F(KnobRaceTest, AWinnerRunsAtOnceAndIsKeptWhenASecondRaceAgrees) {
  const auto k = race();
  const auto fast_split = rates({{"2x4", 100}, {"4x2", 100}, {"4x2-split", 140}});
  const auto first = bw::race_knob(k, fast_split);
  EXPECT_EQ(first.chosen, "4x2-split");
  EXPECT_EQ(first.how, "raced");
  EXPECT_FALSE(kept(k)["settled"].get<bool>());
  EXPECT_NE(first.why.find("races it against the default again"), std::string::npos);
  trials_.clear();
  const auto second = bw::race_knob(k, fast_split);  // the default against the winner alone
  EXPECT_EQ(second.chosen, "4x2-split");
  EXPECT_EQ(second.trials, 2 * kRounds);
  EXPECT_EQ(trials_.count("4x2"), 0u);
  EXPECT_TRUE(kept(k)["settled"].get<bool>());
  EXPECT_NE(second.why.find("confirmed"), std::string::npos);
  const auto third = bw::race_knob(k, rates({{"2x4", 500}, {"4x2", 1}, {"4x2-split", 1}}));
  EXPECT_EQ(third.how, "kept");
  EXPECT_EQ(third.chosen, "4x2-split");
}

TEST_F(KnobRaceTest, AWinnerASecondRaceDoesNotConfirmLeavesTheDefault) {
  const auto k = race();
  bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 130}, {"4x2-split", 100}}));
  const auto second = bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 100}, {"4x2-split", 100}}));
  EXPECT_EQ(second.chosen, "2x4");
  EXPECT_NE(second.why.find("did not confirm the register shape 4x2"), std::string::npos);
  EXPECT_TRUE(kept(k)["settled"].get<bool>());
  EXPECT_EQ(bw::race_knob(k, rates({{"2x4", 1}, {"4x2", 100}, {"4x2-split", 100}})).how, "kept");
}

TEST_F(KnobRaceTest, AConfirmingRaceUnsettledKeepsItsRoundsAndTheWinnerWaiting) {
  const auto k = race({"2x4", "4x2"});
  bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 140}}));  // a winner, unconfirmed
  const auto second = bw::race_knob(k, unsettled_4x2());
  EXPECT_EQ(second.chosen, "2x4");  // this run: the default
  EXPECT_NE(second.why.find("could not yet confirm"), std::string::npos);
  EXPECT_EQ(kept(k)["chosen"], "4x2");  // still awaiting, with the rounds
  EXPECT_FALSE(kept(k)["settled"].get<bool>());
  EXPECT_EQ(kept(k)["rounds"]["4x2"].size(), static_cast<std::size_t>(bw::decide::rule().rounds_when_unsettled));
  // later races pool with it until 4x2 is faster beyond noise over all the rounds
  bw::KnobOutcome later;
  for (int races = 0; !kept(k)["settled"].get<bool>() && races < 5; ++races)
    later = bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 140}}));
  EXPECT_EQ(later.chosen, "4x2");
  EXPECT_NE(later.why.find("confirmed it"), std::string::npos);
  EXPECT_TRUE(kept(k)["settled"].get<bool>());
}

TEST_F(KnobRaceTest, AnUnconfirmedWinnerWaitsForARunLongEnough) {
  const auto k = race();
  bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 130}, {"4x2-split", 100}}));
  auto short_run = k;
  short_run.budget = [] { return 2 * kRounds - 1; };
  const auto out = bw::race_knob(short_run, rates({{"2x4", 100}, {"4x2", 130}, {"4x2-split", 100}}));
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_EQ(out.how, "default");
  EXPECT_NE(out.why.find("awaits a second"), std::string::npos);
  EXPECT_FALSE(kept(k)["settled"].get<bool>());
}

TEST_F(KnobRaceTest, AnUnsettledRaceRunsMoreRoundsAndKeepsThemForTheNext) {
  const auto k = race({"2x4", "4x2"});
  const auto first = bw::race_knob(k, unsettled_4x2());
  const int most = bw::decide::rule().rounds_when_unsettled;
  EXPECT_EQ(first.chosen, "2x4");
  EXPECT_EQ(first.trials, 2 * most);
  EXPECT_NE(first.why.find("undecided"), std::string::npos);
  EXPECT_FALSE(kept(k)["settled"].get<bool>());
  EXPECT_EQ(kept(k)["rounds"]["4x2"].size(), static_cast<std::size_t>(most));
  const auto second = bw::race_knob(k, unsettled_4x2());  // pools its rounds with the first's
  EXPECT_EQ(second.how, "raced");
  EXPECT_NE(second.why.find(std::to_string(2 * most) + " rounds with earlier races'"), std::string::npos);
  int races = 2;
  while (!kept(k)["settled"].get<bool>() && races < 10) bw::race_knob(k, unsettled_4x2()), ++races;
  EXPECT_EQ(races, (bw::kKnobPooledRounds + most - 1) / most);  // settled once the pool holds enough
  EXPECT_EQ(kept(k)["chosen"], "2x4");
  EXPECT_FALSE(kept(k).contains("rounds"));
  EXPECT_EQ(bw::race_knob(k, unsettled_4x2()).how, "kept");
}

TEST_F(KnobRaceTest, ACandidateUnsettledBelowTheDefaultLeavesItSettled) {
  const auto k = race({"2x4", "4x2"});
  auto calls = std::make_shared<int>(0);
  const auto out = bw::race_knob(k, [calls](const std::string& name) {
    if (name != "4x2") return 100.0;
    return (*calls)++ % 5 < 3 ? 70.0 : 110.0;  // a median of 0.7x, an interval reaching above 1
  });
  EXPECT_EQ(out.trials, 2 * kRounds);
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_TRUE(kept(k)["settled"].get<bool>());
}

TEST_F(KnobRaceTest, ABudgetForTheRuleRoundsOnlyKeepsThoseUnsettled) {
  const auto k = race({"2x4", "4x2"}, 2 * kRounds);
  const auto out = bw::race_knob(k, unsettled_4x2());
  EXPECT_EQ(out.trials, 2 * kRounds);
  EXPECT_EQ(kept(k)["rounds"]["2x4"].size(), static_cast<std::size_t>(kRounds));
}

TEST_F(KnobRaceTest, AnotherCpuOrCandidateListRacesAgain) {
  const auto k = race();
  bw::race_knob(k, rates({{"2x4", 150}, {"4x2", 100}, {"4x2-split", 100}}));
  auto other_cpu = k;
  other_cpu.cpu = "Another CPU";
  EXPECT_EQ(bw::race_knob(other_cpu, rates({{"2x4", 150}, {"4x2", 100}, {"4x2-split", 100}})).how, "raced");
  auto fewer = race({"2x4", "4x2"});
  EXPECT_EQ(bw::race_knob(fewer, rates({{"2x4", 150}, {"4x2", 100}})).how, "raced");
}

TEST_F(KnobRaceTest, MeasureRacesWhateverIsKept) {
  auto k = race();
  bw::race_knob(k, rates({{"2x4", 150}, {"4x2", 100}, {"4x2-split", 100}}));
  k.measure = true;
  const auto out = bw::race_knob(k, rates({{"2x4", 100}, {"4x2", 100}, {"4x2-split", 140}}));
  EXPECT_EQ(out.how, "raced");
  EXPECT_EQ(out.chosen, "4x2-split");
  EXPECT_FALSE(kept(k)["settled"].get<bool>());
}

TEST_F(KnobRaceTest, AFileThatCannotBeWrittenCostsOnlyTheKeeping) {
  auto k = race({"2x4", "4x2"});
  std::ofstream(dir_ / "a-file") << "not a folder";
  k.cache_path = (dir_ / "a-file" / "knob-races.json").string();  // its folder cannot be made
  const auto out = bw::race_knob(k, rates({{"2x4", 150}, {"4x2", 100}}));
  EXPECT_EQ(out.chosen, "2x4");
  EXPECT_FALSE(out.record["kept"]["settled"].get<bool>());
  EXPECT_EQ(out.record["kept"]["why"], "the cache file could not be written");
}

}  // namespace
