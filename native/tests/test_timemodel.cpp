// The temporal-blocking model (iso3dfd/timemodel.hpp) and what it plans with: who sweeps, how deep,
// which cache holds the tiles and what crosses memory, the caches of a CPU as the table of measured
// choices gives them (iso3dfd/caches.hpp), the race's calibration, and how a kept depth is counted
// and pooled. The kernels' exactness under these plans: test_timeblock.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/decide.hpp"
#include "iso3dfd/caches.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/timeblock.hpp"
#include "iso3dfd/timemodel.hpp"

using namespace bw::iso3dfd;
using bw::json;
namespace decide = bw::decide;

// The model calibrated by a race gives back the two rates it was calibrated on, predicts faster
// rates for depths that move fewer memory bytes, and keeps depth 1 when the race found no gain.
TEST(TimeModel, CalibratedByTheRaceGivesBackItsTwoRates) {
  const Grid g{528, 528, 528};
  const std::uint64_t l2 = 2u << 20, l3 = 480u << 20;
  const int deepest = max_depth(g, 2);
  const TimeBlockModel raced = fit_time_block(g, 2, 2, Caches{l2, l3});
  ASSERT_LT(raced.memory_bytes_per_point, kBytesPerPoint);
  const auto cal = calibrated_prediction(g, 2, deepest, Caches{l2, l3}, 1000.0, raced, 1080.0);
  const auto& p = cal["predicted"];
  ASSERT_GE(p.size(), 2u);
  EXPECT_EQ(p[0]["depth"].get<int>(), 1);
  EXPECT_NEAR(p[0]["mpoints_per_s"].get<double>(), 1000.0, 1e-6);
  EXPECT_EQ(p[1]["depth"].get<int>(), 2);
  EXPECT_NEAR(p[1]["mpoints_per_s"].get<double>(), 1080.0, 1e-6);
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (p[i]["memory_bytes_per_point"].get<double>() <= p[i - 1]["memory_bytes_per_point"].get<double>()) {
      EXPECT_GE(p[i]["mpoints_per_s"].get<double>(), p[i - 1]["mpoints_per_s"].get<double>());
    }
  }
  EXPECT_GT(cal["memory_share_step_by_step"].get<double>(), 0.0);
  EXPECT_GE(cal["best_depth"].get<int>(), 2);

  const auto lost = calibrated_prediction(g, 2, deepest, Caches{l2, l3}, 1000.0, raced, 990.0);
  EXPECT_EQ(lost["memory_share_step_by_step"].get<double>(), 0.0);
  EXPECT_EQ(lost["best_depth"].get<int>(), 1);
  for (const auto& q : lost["predicted"]) EXPECT_NEAR(q["mpoints_per_s"].get<double>(), 1000.0, 1e-6);

  const auto wild = calibrated_prediction(g, 2, deepest, Caches{l2, l3}, 1000.0, raced, 5000.0);
  EXPECT_LE(wild["memory_share_step_by_step"].get<double>(), 0.75 + 1e-12);
}

// Who sweeps, by the caches of the CPUs met (2 threads, 272^3 with the halo): with the 32 MiB L3 of
// the Zen 4 and Zen 5 guests a window a thread leaves no depth worth a sweep, the team's one window
// does (depth 3); with the 480 MiB the Intel guest reports, slabs (the team saves less than a fifth).
TEST(TimeModel, TheTeamSweepsTogetherWhereOneWindowAThreadDoesNotFit) {
  const Grid g{272, 272, 272};
  struct Case {
    std::uint64_t l2, l3;
    Teams teams;
    int depth;
    bool shared;
  };
  const std::vector<Case> cases = {
      {1u << 20, 32u << 20, Teams::Either, 3, true},     // Zen 4, Zen 5
      {1u << 20, 32u << 20, Teams::Slabs, 1, false},     // several NUMA nodes, or --sweep-team slabs
      {1u << 20, 32u << 20, Teams::Shared, 3, true},     // --sweep-team shared
      {2u << 20, 480u << 20, Teams::Either, 7, false},   // the Intel Xeon guest with AMX
      {512u << 10, 16u << 20, Teams::Either, 1, false},  // Zen 2 class: 16 MiB an L3 domain
  };
  for (const Case& c : cases) {
    const bool any = c.teams != Teams::Slabs;
    const TimeBlockModel m = propose_time_block(g, 2, max_depth(g, 2, any), Caches{c.l2, c.l3}, c.teams);
    EXPECT_EQ(m.depth, c.depth) << c.l3 << " " << m.why;
    EXPECT_EQ(m.shared, c.shared) << c.l3 << " " << m.why;
    EXPECT_EQ(m.to_json()["team"], c.shared ? "shared" : "slabs");
    if (m.shared) {
      EXPECT_EQ(m.shared_face_share, 0.0);
    }
  }
  // one thread has no team to share with
  EXPECT_FALSE(fit_time_block(g, 3, 1, Caches{1u << 20, 32u << 20}, Teams::Shared).shared);
}

// The model says how deep only after the race has shown that sweeps pay: a deeper best depth
// predicted beyond the margin over the raced depth's measured rate, and nothing otherwise.
TEST(TimeModel, DeeperByModelOnlyAfterARaceTheSweepsWon) {
  const json cal = {{"best_depth", 5}, {"best_mpoints_per_s", 1500.0}};
  const double margin = decide::rule().margin;
  struct Case {
    json calibrated;
    int raced;
    double rate;
    int expected;  // 0: the race's depth stands
  };
  const std::vector<Case> cases = {
      {cal, 2, 1300.0, 5},                                                 // beyond the margin
      {cal, 2, 1500.0 / (1 + margin) * 1.001, 0},                          // within it
      {cal, 2, 1500.0, 0},                                                 // level
      {cal, 5, 1300.0, 0},                                                 // not deeper
      {cal, 8, 1300.0, 0},                                                 // shallower
      {cal, 1, 1300.0, 0},                                                 // the race kept depth 1
      {{{"best_depth", 1}, {"best_mpoints_per_s", 1000.0}}, 2, 900.0, 0},  // the model wants none
      {json::object(), 2, 1300.0, 0},                                      // no calibration
  };
  for (const Case& c : cases) {
    const json d = deeper_by_model(c.calibrated, c.raced, c.rate);
    if (c.expected == 0) {
      EXPECT_TRUE(d.is_null()) << c.raced << " " << c.rate;
    } else {
      ASSERT_FALSE(d.is_null());
      EXPECT_EQ(d["to"].get<int>(), c.expected);
      EXPECT_EQ(d["from"].get<int>(), c.raced);
      EXPECT_NE(d["why"].get<std::string>().find("depth 5"), std::string::npos);
    }
  }
}

// How a run's steps are shared by the race: a warm-up step and the rounds within three quarters of
// them, the proposal raced as deep as a round affords with a single step left, as many single steps
// as the sweep's when they fit, and the added rounds only when they fit too.
TEST(TimeModel, RacePlanFitsThreeQuartersOfTheRun) {
  struct Case {
    int proposed, iterations, depth, singles;
    bool may_add;
  };
  const std::vector<Case> cases = {
      {7, 40, 4, 1, false},    // 29 steps: rounds of 5
      {2, 40, 2, 2, false},    // the same work: 8 rounds of 4 steps would take 32
      {7, 160, 7, 7, true},    // 119 steps: 8 rounds of 14 fit
      {8, 100, 8, 6, false},   // 74 steps: rounds of 14
      {3, 22, 2, 1, false},    // the shortest run that races
      {3, 21, 1, 1, false},    // too short
      {7, 10, 0, 1, false},    // the CLI's default: too short
      {1, 1000, 1, 1, false},  // the model proposed depth 1
  };
  for (const Case& c : cases) {
    const RacePlan p = plan_race(c.proposed, c.iterations, 5, 8);
    EXPECT_EQ(p.depth, c.depth) << c.proposed << " " << c.iterations;
    EXPECT_EQ(p.singles, c.singles) << c.proposed << " " << c.iterations;
    EXPECT_EQ(p.may_add, c.may_add) << c.proposed << " " << c.iterations;
    EXPECT_EQ(p.fewest_steps, 22);
    if (p.depth >= 2) {
      EXPECT_LE(1 + 5 * (p.depth + p.singles), c.iterations * 3 / 4);
      if (p.may_add) {
        EXPECT_LE(1 + 8 * (p.depth + p.singles), c.iterations * 3 / 4);
      }
    }
  }
}

// The model follows the radius: at radius 1 the halos are one plane and one row, so a window of the
// same depth and tile is smaller, the slabs hold deeper sweeps, and on the caches of the Zen 4 guest
// (1 MiB L2, 32 MiB L3) the model proposes a sweep at radius 1 where at radius 8 a window a thread
// leaves none (a grid of 514^3: 512^3 interior).
TEST(TimeModel, FollowsTheRadius) {
  const Grid one{514, 514, 514, 1}, eight{528, 528, 528, 8};
  const std::uint64_t l2 = 1u << 20, l3 = 32u << 20;
  const TimeBlockModel m1 = time_block_model(one, 4, 64, 2, Caches{l2, l3}, 16);
  const TimeBlockModel m8 = time_block_model(eight, 4, 64, 2, Caches{l2, l3}, 16);
  EXPECT_LT(m1.window_bytes, m8.window_bytes);
  EXPECT_LT(m1.llc_bytes_per_point, m8.llc_bytes_per_point);  // 2R halo planes a chunk re-read
  EXPECT_GT(max_depth(one, 2), max_depth(eight, 2));
  EXPECT_EQ(max_depth(one, 2), 256 + 1);  // a slab of 256 planes, one face shared: R (d - 1) <= 256
  const TimeBlockModel p1 = propose_time_block(one, 2, max_depth(one, 2), Caches{l2, l3}, Teams::Slabs);
  const TimeBlockModel p8 = propose_time_block(eight, 2, max_depth(eight, 2), Caches{l2, l3}, Teams::Slabs);
  EXPECT_GT(p1.depth, 1) << p1.why;
  EXPECT_LT(p1.memory_bytes_per_point, 0.5 * kBytesPerPoint) << p1.why;
  EXPECT_EQ(p8.depth, 1) << p8.why;
  // the skew of a tile's levels and the rows a tile needs are the radius's
  EXPECT_EQ(tile_rows_for(one, 1, 9), 8u);
  EXPECT_EQ(tile_rows_for(eight, 1, 9), 64u);
}

// The model weighs a tile L2 holds against the larger one the last-level cache holds: the small
// tile re-reads more rows from memory, the large one re-reads its halo planes from the last-level
// cache. On the Emerald Rapids guest's caches (2 MiB L2, 300 MiB L3) at radius 1, where the
// last-level cache feeds about twice memory's bandwidth, the tile L2 holds costs less; where it fed
// twenty times, the large tile would. Nothing but the memory bytes enters a window L2 holds.
TEST(TimeModel, WeighsTheTileL2HoldsByTheLastLevelCachesBandwidth) {
  // A tall grid: a tile sweep (every plane) outgrows the last-level cache, one window does not.
  const Grid g{130, 130, 8194, 1};
  const std::uint64_t l2 = 1u << 20, l3 = 64u << 20;
  const TimeBlockModel near = propose_time_block(g, 2, max_depth(g, 2), Caches{l2, l3, 1.9}, Teams::Slabs);
  EXPECT_EQ(near.level, "L2") << near.why;
  EXPECT_GT(near.depth, 1) << near.why;
  EXPECT_FALSE(near.rereads_in_llc) << near.why;
  EXPECT_DOUBLE_EQ(near.llc_bytes_per_point, near.memory_bytes_per_point);
  EXPECT_LE(near.window_bytes, static_cast<double>(l2));
  const TimeBlockModel fast = propose_time_block(g, 2, max_depth(g, 2), Caches{l2, l3, 20.0}, Teams::Slabs);
  EXPECT_EQ(fast.level, "L3") << fast.why;
  EXPECT_LT(fast.memory_bytes_per_point, near.memory_bytes_per_point);
  EXPECT_GT(fast.tile_rows, near.tile_rows);
  EXPECT_EQ(near.to_json()["llc_over_memory"], 1.9);
  // at radius 8 no tile L2 holds pays: the last-level cache's, as before
  const Grid eight{272, 272, 272, 8};
  EXPECT_NE(
      propose_time_block(eight, 2, max_depth(eight, 2, true), Caches{2u << 20, 300u << 20, 1.9}, Teams::Either).level,
      "L2");
}

// Tiles sized for L2 (--tile-cache L2): at a depth where the model's cheapest window is the
// last-level cache's, the largest tile whose window L2 holds instead; a depth without one keeps the
// model's, which tiles_allowed refuses, so the proposal and the calibrated model skip it. The
// caches of the Intel Xeon with AMX guest (2 MiB L2, 480 MiB L3, 1.837x) at radius 4 on 256^3, where
// the model tiles depth 2 for L3.
TEST(TimeModel, TilesSizedForL2TakeTheLargestTileL2HoldsOrNone) {
  const Grid g{264, 264, 264, 4};
  const Caches model{2u << 20, 480u << 20, 1.837};
  Caches l2 = model;
  l2.tiles = TileCache::L2;
  const TimeBlockModel cheapest = fit_time_block(g, 2, 2, model);
  const TimeBlockModel small = fit_time_block(g, 2, 2, l2);
  ASSERT_EQ(cheapest.level, "L3") << cheapest.why;
  EXPECT_EQ(small.level, "L2") << small.why;
  EXPECT_LT(small.tile_rows, cheapest.tile_rows);
  EXPECT_LE(small.window_bytes, static_cast<double>(l2.l2));
  EXPECT_GT(small.cost(), cheapest.cost());  // the model's cost prefers the last-level cache's
  EXPECT_TRUE(tiles_allowed(small, l2));
  EXPECT_FALSE(tiles_allowed(cheapest, l2));
  EXPECT_TRUE(tiles_allowed(cheapest, model));
  // every depth: a tile L2 holds, or the model's (refused under L2)
  for (int d = 2; d <= 8; ++d) {
    const TimeBlockModel m = fit_time_block(g, d, 2, l2);
    if (m.level != "L2") EXPECT_EQ(m.tile_rows, fit_time_block(g, d, 2, model).tile_rows) << d;
  }
  const TimeBlockModel p = propose_time_block(g, 2, max_depth(g, 2), l2);
  if (p.depth > 1) EXPECT_EQ(p.level, "L2") << p.why;
  // sized for the last-level cache: the model's tile at depth 2, and never one L2 holds
  Caches l3 = model;
  l3.tiles = TileCache::L3;
  EXPECT_EQ(fit_time_block(g, 2, 2, l3).tile_rows, cheapest.tile_rows);
  for (int d = 2; d <= 8; ++d) EXPECT_NE(fit_time_block(g, d, 2, l3).level, "L2") << d;
  EXPECT_FALSE(tiles_allowed(small, l3));
  const TimeBlockModel p3 = propose_time_block(g, 2, max_depth(g, 2), l3);
  if (p3.depth > 1) EXPECT_EQ(p3.level, "L3") << p3.why;
  const json c = calibrated_prediction(g, 2, max_depth(g, 2), l2, 1000.0, small, 1100.0);
  for (const json& e : c["predicted"])
    if (e["depth"].get<int>() > 1) EXPECT_TRUE(tiles_allowed(fit_time_block(g, e["depth"].get<int>(), 2, l2), l2));
}

// A wavefront step of fewer planes than the sweeps' shape computes together would compute them one
// at a time: chunks are at least the shape's planes (8 where it is not known, as before shapes were
// known). Thinner chunks leave L2 room for taller tiles, which re-read fewer rows: at radius 3 on
// 256^3 with the Intel Xeon with AMX's caches, a 2-plane shape's depth 4 takes a chunk below 8 and a
// taller tile than chunks of 8 allow, at a lower cost.
TEST(TimeModel, ChunksAreAtLeastTheSweptShapesPlanes) {
  const Grid g{262, 262, 262, 3};
  Caches eight{2u << 20, 480u << 20, 1.837};
  Caches two = eight, four = eight;
  two.shape_planes = 2;
  four.shape_planes = 4;
  const TimeBlockModel e = fit_time_block(g, 4, 2, eight), t = fit_time_block(g, 4, 2, two);
  EXPECT_GE(e.chunk, 8u);
  ASSERT_LT(t.chunk, 8u) << t.why;
  EXPECT_GE(t.chunk, 2u);
  EXPECT_GT(t.tile_rows, e.tile_rows);
  EXPECT_LT(t.cost(), e.cost());
  for (int d = 2; d <= 8; ++d) {
    EXPECT_GE(fit_time_block(g, d, 2, four).chunk, 4u) << d;
    EXPECT_GE(fit_time_block(g, d, 2, eight).chunk, 8u) << d;
  }
}

// The rows a tile re-reads from the tile before cost memory only when the last-level cache cannot
// hold what a tile sweep reads in between (every plane, on the tile's rows and those it reaches).
TEST(TimeModel, RowsReReadFromTheTileBeforeComeFromTheLastLevelCacheThatHoldsATileSweep) {
  const Grid g{514, 514, 514, 1};
  const std::uint64_t l2 = 2u << 20;
  const TimeBlockModel big = time_block_model(g, 4, 16, 2, Caches{l2, 300u << 20});
  const TimeBlockModel small = time_block_model(g, 4, 16, 2, Caches{l2, 32u << 20});
  ASSERT_EQ(big.level, "L2") << big.why;
  ASSERT_EQ(small.level, "L2") << small.why;
  EXPECT_TRUE(big.rereads_in_llc);
  EXPECT_FALSE(small.rereads_in_llc);
  const double reach = (16.0 + 1 * 5) / 16, swept = 20.0 / 4 * (1 + big.shared_face_share);
  EXPECT_DOUBLE_EQ(big.memory_bytes_per_point, swept);
  EXPECT_DOUBLE_EQ(big.llc_bytes_per_point, swept * reach);
  EXPECT_DOUBLE_EQ(small.memory_bytes_per_point, swept * reach);
  EXPECT_DOUBLE_EQ(small.llc_bytes_per_point, swept * reach);
  EXPECT_LT(big.cost(), small.cost());
  EXPECT_EQ(big.to_json()["rereads_from"], "last-level cache");
  EXPECT_EQ(small.to_json()["rereads_from"], "memory");
  // one tile re-reads nothing
  EXPECT_EQ(time_block_model(g, 4, 0, 2, Caches{l2, 300u << 20}).to_json()["rereads_from"], "none");
  EXPECT_NE(big.why.find("last-level cache"), std::string::npos) << big.why;
  // the calibrated model counts them at the last-level cache's bandwidth, memory's bytes in full
  EXPECT_DOUBLE_EQ(big.memory_equivalent_bytes(), swept + swept * (reach - 1) / big.llc_over_memory);
  EXPECT_DOUBLE_EQ(small.memory_equivalent_bytes(), swept * reach);
  // a window in L3 re-reads its chunks' halo planes from it at every level
  const TimeBlockModel l3 = time_block_model(g, 4, 0, 2, Caches{l2, 300u << 20}, 8);
  ASSERT_EQ(l3.level, "L3") << l3.why;
  EXPECT_DOUBLE_EQ(l3.memory_equivalent_bytes(),
                   l3.memory_bytes_per_point + (12.0 + 4.0 * 10 / 8 - l3.memory_bytes_per_point) / l3.llc_over_memory);
}

// The model plans with the share of the last-level cache the table measured as the team's where it
// is smaller than the size reported (a guest's "480 MiB" the host does not give it), and says so; a
// size forced for L3, a larger measure or none leave the reported size; a tiny or ill-typed one is
// no measure.
TEST(TimeModel, PlansWithTheLastLevelCacheTheTableMeasured) {
  const std::uint64_t l2 = 2u << 20, reported = 480u << 20, measured = 72u << 20;
  const json entry = {{"llc_over_memory", 1.8}, {"llc_bytes", measured}};
  const MachineCaches m = planned_caches(l2, reported, &entry, "the table", false);
  EXPECT_EQ(m.caches.l3, measured);
  EXPECT_EQ(m.record.value("l3_bytes", std::uint64_t{0}), measured);
  EXPECT_EQ(m.record.value("l3_reported_bytes", std::uint64_t{0}), reported);
  EXPECT_DOUBLE_EQ(m.caches.llc_over_memory, 1.8);
  EXPECT_EQ(m.record["how"], "table");
  EXPECT_EQ(m.record["from"], "the table");
  for (const auto& [l3, forced] : std::vector<std::pair<std::uint64_t, bool>>{{reported, true}, {32u << 20, false}}) {
    const MachineCaches kept = planned_caches(l2, l3, &entry, "the table", forced);
    EXPECT_EQ(kept.caches.l3, l3);
    EXPECT_FALSE(kept.record.contains("l3_reported_bytes")) << kept.record.dump();
  }
  for (const json& e : {json{{"llc_over_memory", 1.8}}, json{{"llc_bytes", 4096}}, json{{"llc_bytes", "72M"}},
                        json{{"llc_bytes", -1}}}) {
    EXPECT_EQ(planned_caches(l2, reported, &e, "the table", false).caches.l3, reported) << e.dump();
  }
  const MachineCaches none = planned_caches(l2, reported, nullptr, "", false);
  EXPECT_EQ(none.caches.l3, reported);
  EXPECT_EQ(none.record["how"], "default");
  EXPECT_DOUBLE_EQ(none.caches.llc_over_memory, kCacheOverMemory);
  // what it changes: a tile sweep the reported cache holds half of, the measured one does not
  const Grid g{514, 514, 514, 3};
  EXPECT_TRUE(time_block_model(g, 4, 12, 2, Caches{l2, reported}).rereads_in_llc);
  EXPECT_FALSE(time_block_model(g, 4, 12, 2, m.caches).rereads_in_llc);
}

// Sweeps are kept once a second race in a row settles on them: the count grows only from an entry
// that settled on sweeps on the same CPU; depth 1 and anything else start again at one.
TEST(TimeModel, SweepsAreKeptAfterASecondRaceInARow) {
  const std::string cpu = "this CPU";
  const json sweeps = {{"depth", 4}, {"decisive", true}, {"cpu", cpu}};
  EXPECT_EQ(races_in_a_row(nullptr, 4, cpu), 1);
  EXPECT_EQ(races_in_a_row(&sweeps, 4, cpu), 2);  // an entry from before the count: one race
  EXPECT_EQ(races_in_a_row(&sweeps, 6, cpu), 2);  // sweeps again, deeper: still sweeps
  json counted = sweeps;
  counted["races"] = 2;
  EXPECT_EQ(races_in_a_row(&counted, 4, cpu), 3);
  EXPECT_EQ(races_in_a_row(&counted, 1, cpu), 1);        // this race settled on depth 1
  EXPECT_EQ(races_in_a_row(&counted, 4, "another"), 1);  // another CPU's
  for (const json& other :
       {json{{"depth", 1}, {"decisive", true}, {"cpu", cpu}}, json{{"depth", 4}, {"decisive", false}, {"cpu", cpu}},
        json{{"depth", "4"}, {"decisive", true}, {"cpu", cpu}}, json("not an entry")})
    EXPECT_EQ(races_in_a_row(&other, 4, cpu), 1) << other.dump();
  json spoilt = sweeps;
  spoilt["races"] = "many";
  EXPECT_EQ(races_in_a_row(&spoilt, 4, cpu), 2);
  EXPECT_GE(kRacesToKeepSweeps, 2);
}

// An undecided race's rounds are decided on again with the next race's: only those of the same CPU,
// depth and team, with as many rounds of each, every rate a positive number; runs counts the races.
TEST(TimeModel, UndecidedRoundsArePooledWithTheNextRace) {
  const std::string cpu = "this CPU";
  const std::vector<std::vector<double>> now = {{100, 101}, {103, 104}};
  const json earlier = {{"depth", 1},
                        {"decisive", false},
                        {"cpu", cpu},
                        {"team", "slabs"},
                        {"raced", 4},
                        {"runs", 2},
                        {"race", {{"rates", {{"1", {90, 91, 92}}, {"4", {95, 96, 97}}}}}}};
  const PooledRace p = pool_race(&earlier, now, 4, "slabs", cpu);
  EXPECT_EQ(p.runs, 3);
  EXPECT_EQ(p.rates[0], (std::vector<double>{90, 91, 92, 100, 101}));
  EXPECT_EQ(p.rates[1], (std::vector<double>{95, 96, 97, 103, 104}));
  auto alone = [&](const json& e) {
    const PooledRace q = pool_race(&e, now, 4, "slabs", cpu);
    EXPECT_EQ(q.runs, 1) << e.dump();
    EXPECT_EQ(q.rates, now) << e.dump();
  };
  alone(json("not an entry"));
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"cpu", "another"}, {"team", "shared"}, {"raced", 6}, {"race", "spoilt"}}) {
    json e = earlier;
    e[field] = value;
    alone(e);
  }
  for (const json& rates :
       {json{{"1", {90, 91}}, {"4", {95}}}, json{{"1", {90}}, {"4", {-1}}}, json{{"1", {90}}, {"4", {"x"}}},
        json{{"1", {90}}}, json{{"1", json::array()}, {"4", json::array()}}}) {
    json e = earlier;
    e["race"]["rates"] = rates;
    alone(e);
  }
  EXPECT_EQ(pool_race(nullptr, now, 4, "slabs", cpu).runs, 1);
  EXPECT_GT(kPooledRoundsToSettle, 2 * decide::rule().rounds_when_unsettled);
}
