// The check of a depth the table of measured choices gave a run (Measurement::check_table_depth): the
// table's races ran on a bench's grid and day, so each run that takes its depth spends one round of a
// race on its own steps until the rounds of the runs like it settle, under the decision rule, whether
// the depth pays on this machine.
#include <omp.h>

#include <string>
#include <vector>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/isa_choice.hpp"
#include "iso3dfd/measurement.hpp"
#include "iso3dfd/timemodel.hpp"

namespace bw::iso3dfd {

namespace {
// A check's round costs the run what its single steps lose to the sweeps (at radius 1 on Zen 4, 40
// steps at depth 7: a sixth of the whole run): it runs only where the round takes at most this share
// of the run's steps, so that a short run takes the table's depth as the bench measured it.
constexpr int kCheckShareOfSteps = 4;  // a quarter
}  // namespace

void Measurement::check_table_depth(const std::string& cache, const std::string& key, int threads) {
  const int depth = tiles_.depth;
  // one round: a warm-up step, a sweep and as many single steps, in a quarter of the run's steps
  const RacePlan plan = plan_race(depth, steps_left(), 1, 1);
  if (plan.depth != depth || plan.singles != depth || (1 + 2 * depth) * kCheckShareOfSteps > steps_left()) {
    time_block_["check"] = {
        {"ran", false},
        {"why", "the run is too short for a round of the check (a warm-up step, a sweep of " + std::to_string(depth) +
                    " steps and as many single steps, " + std::to_string(1 + 2 * depth) +
                    " steps, in a quarter of its " + std::to_string(steps_left()) +
                    "): the table's depth as the bench measured it"}};
    return;
  }
  const std::string cpu = ChoiceContext::here().cpu_key;
  const std::string team = tiles_.shared ? "shared" : "slabs";
  const json file = read_json_file(cache);
  const json* kept = cached_choice(file, key);
  const long runs_before = kept ? whole_field(*kept, "runs", 1, 1000000, 0) : 0;
  const double points = static_cast<double>(o_.grid.interior());
  run(f_, o_.grid, o_.blocks, o_.schedule, threads, 1, c_);  // the first step after the first touch runs slower
  std::vector<std::vector<double>> rates(2);
  auto leg = [&](int c) {
    const double t0 = omp_get_wtime();
    if (c == 1)
      run_time_blocked(f_, o_.grid, o_.blocks, tiles_, threads, depth, c_);
    else
      run(f_, o_.grid, o_.blocks, o_.schedule, threads, depth, c_);
    rates[static_cast<std::size_t>(c)].push_back(points * depth / (omp_get_wtime() - t0) / 1e6);
  };
  const int first = static_cast<int>(runs_before % 2);
  leg(first);
  leg(1 - first);
  race_steps_ = 1 + 2 * depth;

  const PooledRace pooled = pool_race(kept, rates, depth, team, cpu);
  const decide::Choice ch = decide::choose_best({"1", std::to_string(depth)}, pooled.rates, 0, "MPoints/s");
  const std::size_t rounds = pooled.rates[0].size();
  const json comparisons = ch.record.value("comparisons", json::array());
  const std::string verdict = comparisons.empty() ? "" : text_field(comparisons[0], "verdict");
  const bool faster = verdict == decide::to_string(decide::Verdict::Faster);
  const bool slower = verdict == decide::to_string(decide::Verdict::Slower);
  const bool settled = faster || slower || rounds >= static_cast<std::size_t>(kPooledRoundsToSettle);
  const std::string over = std::to_string(rounds) + " round(s) of " + std::to_string(pooled.runs) + " run(s)";
  std::string why;
  if (faster)
    why = "sweeps of the table's depth faster than single steps on this machine: " + ch.why +
          "; kept, and later runs like this one take it without a check";
  else if (settled)
    why = (slower ? "sweeps of the table's depth slower than single steps on this machine beyond noise over "
                  : "sweeps of the table's depth not told from single steps over ") +
          over + ": depth 1 from here on, and for later runs like this one";
  else
    why = "sweeps of the table's depth not told from single steps yet: " +
          decide::interval_text(decide::ratio_interval(pooled.rates[1], pooled.rates[0])) + " over " + over +
          "; the depth stands, and the next run like this one checks again, until " +
          std::to_string(kPooledRoundsToSettle) + " rounds leave depth 1 standing";
  if (settled && !faster) {
    model_ = time_block_model(o_.grid, 1, 0, threads, caches_.caches);
    tiles_ = TimeTiles{};
    time_block_["depth"] = 1;
    time_block_["why"] = text_field(time_block_, "why") + "; then " + why;
  }
  json entry = {{"depth", settled && !faster ? 1 : depth},
                {"team", team},
                {"raced", depth},
                {"decisive", settled},
                {"races", faster ? kRacesToKeepSweeps : 1},
                {"runs", pooled.runs},
                {"cpu", cpu},
                {"how", "table checked"},
                {"why", why},
                {"race", ch.record},
                {"measured", today()}};
  const bool stored = store_choice(cache, kTimeBlocksAbout, key, entry);
  time_block_["check"] = {
      {"ran", true},         {"rounds", rounds},
      {"runs", pooled.runs}, {"this_run", {{"1", rates[0][0]}, {std::to_string(depth), rates[1][0]}}},
      {"settled", settled},  {"stored", stored},
      {"race", ch.record},   {"why", why}};
}

}  // namespace bw::iso3dfd
