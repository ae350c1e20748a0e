#include "iso3dfd/measurement.hpp"

#include <omp.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/errors.hpp"
#include "common/isa_choice.hpp"
#include "common/llc_probe.hpp"
#include "common/topology.hpp"
#include "iso3dfd/autoblocks.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CPU time of the whole process (every thread), user and system.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// The optimised run must match the plain reference to float rounding; rounding differences grow
// with the number of steps.
double tolerance(int steps) { return std::max(1e-5, 2e-6 * steps); }

Outcome verify(const Options& o, const Fields& result, int steps) {
  const Grid& g = o.grid;
  Buffer prev(g.points() * sizeof(float), o.placement), next(g.points() * sizeof(float), o.placement);
  Fields ref{prev.as<float>(), next.as<float>(), result.vel};
  std::fill(ref.prev, ref.prev + g.points(), 0.0f);
  std::fill(ref.next, ref.next + g.points(), 0.0f);
  add_source(ref.prev, g);
  run_reference(ref, g, steps, coefficients(g.radius));
  Difference d = compare(result.prev, ref.prev, g.points());
  Outcome v;
  v.checked = true;
  v.max_abs = d.max_abs;
  v.max_rel = d.max_rel;
  v.tolerance = tolerance(steps);
  v.passed = d.max_rel <= v.tolerance;
  return v;
}

bool optimised(const Options& o) { return o.kernel == KernelChoice::Optimised; }

}  // namespace

driver::Facts facts() {
  driver::Facts f;
  f.tool = "iso3dfd";
  f.executable = "bandwall-iso3dfd";
  f.unit = "MPoints/s";
  f.unit_scale = 1e6;
  f.figure = "mpoints_per_s";
  f.arrays = {{"prev", true, true}, {"next", true, true}, {"vel", true, false}};
  f.steps_are_reps = true;
  f.variant_key = "iso3dfd.rows";
  return f;
}

Measurement::Measurement(Options& o, int cpu)
    : facts_(iso3dfd::facts()), o_(o), cpu_(cpu), c_(coefficients(o.grid.radius)) {
  o_.l1d_bytes = Topology::instance().cache_bytes(1, cpu);
  o_.l2_bytes = Topology::instance().cache_bytes(2, cpu);
  o_.l3_bytes = Topology::instance().cache_bytes(3, cpu);
  caches_ = machine_caches(cpu);
  blocks_choice_ = {{"how", "user"}, {"why", "given on the command line"}};
  if (o_.fault) c_[1] *= 1.01f;
}

Measurement::~Measurement() = default;

// A variant measured at one radius says nothing of another: the seed's radius keeps the key of the
// table of measured choices (common/isa_choices.json), any other has one of its own (".r1", ...).
std::string Measurement::variant_key() const {
  if (!optimised(o_)) return "";
  return o_.grid.radius == kSeedRadius ? facts_.variant_key
                                       : facts_.variant_key + ".r" + std::to_string(o_.grid.radius);
}

std::string Measurement::choose_variant(const VariantRequest& r,
                                        const std::function<double(const std::string&)>& trial) {
  size_class_ = r.size_class;
  return driver::choose_with(row_dispatch(), r, trial);
}

void Measurement::variant_changed(int threads, bool final) {
  if (optimised(o_)) {
    choose_shape();
    choose_swept_shape();
    choose_prefetch();
  }
  if (final) race_knobs(threads);
  choose_blocks_for_variant(threads, final);
  if (final) choose_time_block(threads);
}

void Measurement::choose_blocks_for_variant(int threads, bool final) {
  const Blocks& r = o_.blocks_requested;
  if (r.b1 && r.b2 && r.b3) return;
  // The blocks of the row kernel now active: its register shape decides the model's window.
  const bool search = final && o_.block_search && optimised(o_) && o_.iterations > 0;
  BlockChoice bc = choose_blocks(o_.grid, r, o_.schedule, o_.placement, threads, cpu_, search, l2_share());
  o_.blocks = bc.blocks;
  blocks_choice_ = bc.record;
  if (optimised(o_)) blocks_choice_["isa"] = kernel_isa();
}

void Measurement::choose_time_block(int threads) {
  // The team sweeps one wavefront together only within one NUMA node unless told to: there every
  // thread reads planes another thread first touched.
  const bool one_node = Topology::instance().numa_nodes() <= 1;
  // --sweep-team auto on one node: the table's team for this CPU, radius and variant, else the model's
  const auto [table_team, team_from] =
      one_node && o_.sweep_team == "auto" && optimised(o_) ? this->table_team() : std::pair<std::string, std::string>{};
  const std::string team = table_team.empty() ? o_.sweep_team : table_team;
  Teams teams = team == "slabs"    ? Teams::Slabs
                : team == "shared" ? Teams::Shared
                : one_node         ? Teams::Either
                                   : Teams::Slabs;
  // The team together keeps one window in the last-level cache: only where its CPUs share one by
  // measurement, whatever hwloc reports (a virtual machine's host may split them; common/llc_probe.hpp).
  llc_ = LlcProbe{};
  if (teams == Teams::Either && optimised(o_) && threads > 1) {
    llc_ = probe_team_llc(threads);
    if (llc_.ran && !llc_.shared) teams = Teams::Slabs;
  }
  const int deepest = max_depth(o_.grid, threads, teams != Teams::Slabs);
  const json tile_cache = choose_tile_cache(threads);
  caches_.caches.shape_planes = static_cast<std::size_t>(swept_shape(o_.grid.radius).planes);
  const Caches& caches = caches_.caches;
  model_ = propose_time_block(o_.grid, threads, deepest, caches, teams);
  // The table's entry is matched by the depth the model proposes with the team free, as where the
  // bench raced (every depth from 2 up to it): two caches measured leave it slabs only, whose
  // proposal is shallower, and the run would race again what the table decided. An entry raced
  // with the probe's verdict is matched by the run's own proposal.
  table_proposal_ =
      llc_.ran && !llc_.shared && !table_sweeps(threads).by_llc
          ? propose_time_block(o_.grid, threads, max_depth(o_.grid, threads, true), caches, Teams::Either).depth
          : model_.depth;
  // The table's depth where the model proposes sweeps, on the tiles for it, when the slabs and the
  // cache allow it: where the table sizes the tiles for a cache (the bench raced each depth with such
  // a tile; the model's tie between depths within 5% of each other takes the shallower), or where
  // the run's model proposes the depth it proposed where the bench raced (the same grid and knobs:
  // the bench raced the shallower depths down to half of it too, and the model's cost misses what a
  // deeper window costs in a last-level cache other tenants share).
  if (model_.depth > 1) {
    const TableSweeps t = table_sweeps(threads);
    if (t.depth > 1 && t.depth <= deepest &&
        (tile_cache.value("how", "") == "table" || t.proposed == table_proposal_)) {
      const TimeBlockModel m = fit_time_block(o_.grid, t.depth, threads, caches, teams);
      if (tiles_allowed(m, caches)) model_ = m;
    }
  }
  tiles_ = TimeTiles{1, 0, model_.chunk};
  time_block_ = {{"requested", o_.time_block ? json(o_.time_block) : json(o_.time_block_measure ? "measure" : "auto")},
                 {"max_depth", std::min(deepest, 64)},
                 {"team_requested", o_.sweep_team},
                 {"teams_considered", teams == Teams::Slabs    ? "slabs"
                                      : teams == Teams::Shared ? "shared"
                                                               : "slabs or shared"},
                 {"caches", caches_.record},
                 {"tile_cache", tile_cache}};
  if (!table_team.empty())
    time_block_.update({{"team_how", "table"}, {"team_from", team_from}});
  else if (!team_from.empty())
    time_block_.update({{"team_how", "model"}, {"team_from", team_from}});
  if (o_.sweep_team == "auto" && !one_node)
    time_block_["team_why"] = "several NUMA nodes: a slab a thread keeps each thread on the planes it first touched";
  if (!llc_.why.empty()) time_block_["llc_probe"] = llc_.to_json();
  if (llc_.ran && !llc_.shared)
    time_block_["team_why"] = "the team's CPUs do not share a last-level cache by measurement (" + llc_.why +
                              "): a slab a thread, each thread's window in its own cache";
  if (!optimised(o_)) {
    model_ = time_block_model(o_.grid, 1, 0, threads, caches);
    time_block_.update({{"depth", 1}, {"how", "reference"}, {"why", "the reference kernel runs step by step"}});
    return;
  }
  if (o_.time_block > 0) {
    if (o_.time_block > deepest)
      throw UsageError("--time-block " + std::to_string(o_.time_block) + " needs thicker slabs than " +
                       std::to_string(threads) + " threads have in " + std::to_string(o_.grid.n3 - 2 * o_.grid.halo()) +
                       " interior planes (at most " + std::to_string(deepest) +
                       " here; the team sweeping together, --sweep-team shared, takes any depth)");
    model_ = fit_time_block(o_.grid, o_.time_block, threads, caches, teams);
    tiles_ = TimeTiles{o_.time_block, model_.tile_rows, model_.chunk, model_.shared};
    time_block_.update({{"depth", o_.time_block}, {"how", "user"}, {"why", "given on the command line"}});
    if (model_.shared && o_.sweep_team != "shared")
      time_block_["team_why"] = o_.time_block > max_depth(o_.grid, threads)
                                    ? "the slabs of " + std::to_string(threads) + " threads hold at most depth " +
                                          std::to_string(max_depth(o_.grid, threads)) + ": the team sweeps together"
                                    : "the team's one window saves a fifth of the slabs' cost";
    return;
  }
  time_block_["proposal"] = model_.to_json();
  const int rounds = decide::rule().rounds;
  const RacePlan plan = plan_race(model_.depth, steps_left(), rounds, decide::rule().rounds_when_unsettled);
  // An earlier run's race on this machine, for a run like this one, that chose beyond noise: its
  // depth, without racing again (--time-block measure races whatever; with --threads auto the
  // threads are not known yet, and nothing is raced or kept).
  const std::string cache = o_.thread_options.automatic() ? std::string() : choice_cache_path("time-blocks");
  const std::string key = time_block_key(threads, one_node);
  time_block_["cache_key"] = key;
  if (!o_.time_block_measure && !cache.empty())
    if (use_cached_time_block(cache, key, threads, teams, plan.depth)) return;
  // This CPU's table entry at the radius and variant (the model's proposal raced single steps on a
  // whole grid under the decision rule, twice, a bench's rounds): where the sweeps were slower,
  // depth 1 without a race, which would cost the run what its slower side takes; where the depth the
  // run's model proposes is the one that paid there, that depth from the first step (a race would
  // spend single steps; not with --threads auto, whose threads are chosen step by step); where the
  // races there could not tell the depth the run's model proposes from single steps, depth 1
  // stands without a race (the run's own race, of fewer rounds, would only decide by chance what
  // those could not, and cost the run its steps). Another proposal races as before;
  // --time-block measure races whatever the table says.
  const TableSweeps table = model_.depth > 1 && !o_.time_block_measure ? table_sweeps(threads) : TableSweeps{};
  const bool undecided = table.undecided > 1 && table.undecided == table_proposal_;
  if (table.slower || undecided || (table.depth > 1 && table.depth == model_.depth && !o_.thread_options.automatic())) {
    const bool sweeps = table.depth > 1;
    if (sweeps)
      tiles_ = TimeTiles{model_.depth, model_.tile_rows, model_.chunk, model_.shared};
    else
      model_ = time_block_model(o_.grid, 1, 0, threads, caches);
    time_block_.update({{"depth", table.depth},
                        {"how", "table"},
                        {"why", (sweeps      ? "sweeps of this depth measured faster than single steps here, by "
                                 : undecided ? "sweeps of the depth the model proposes not told from single steps here "
                                               "(depth 1 stands), by "
                                             : "sweeps measured slower than single steps here, by ") +
                                    table.from + (table.why.empty() ? "" : ": " + table.why)}});
    if (sweeps && !cache.empty()) check_table_depth(cache, key, threads);
    return;
  }
  if (table.depth > 0) time_block_["table"] = {{"depth", table.depth}, {"slower", table.slower}, {"from", table.from}};
  if (!table.other_team.is_null()) time_block_["table"] = table.other_team;
  std::string skip;
  if (model_.depth == 1)
    skip = model_.why;
  else if (o_.thread_options.automatic())
    skip = "--threads auto: the threads are chosen step by step, so the depth is not raced";
  else if (plan.depth < 2)
    skip = "the run is too short to race a depth against single steps (" + std::to_string(plan.fewest_steps) +
           " steps at least)";
  if (!skip.empty()) {
    model_ = time_block_model(o_.grid, 1, 0, threads, caches);
    time_block_.update({{"depth", 1}, {"how", "model"}, {"why", skip}});
    return;
  }
  // The race, on the run's data (its steps count as the run's): one single step to warm the caches
  // and the team (the first step after the first touch ran about 5% slower), then per round one
  // sweep of depth d (the proposal's, at most what the run affords) by the proposal's team, and
  // plan.singles single steps, the first alternating; rates in interior points and steps a second.
  // What the race measures holds for that team only, so the model it calibrates says how deep for
  // it alone.
  const Teams mode = model_.shared ? Teams::Shared : Teams::Slabs;
  const int deepest_mode = max_depth(o_.grid, threads, model_.shared);
  const TimeBlockModel raced = fit_time_block(o_.grid, plan.depth, threads, caches, mode);
  const TimeTiles proposal{plan.depth, raced.tile_rows, raced.chunk, raced.shared};
  // Unsettled after 5 rounds (the median beyond the margin, the interval not: one disturbed round
  // of five does that), all the rounds the rule allows, when the run affords them.
  const RaceOutcome raced_out = race_depth(
      plan, static_cast<double>(o_.grid.interior()), [&] { run(f_, o_.grid, o_.blocks, o_.schedule, threads, 1, c_); },
      [&](int n, bool sweep) {
        const double t0 = omp_get_wtime();
        if (sweep)
          run_time_blocked(f_, o_.grid, o_.blocks, proposal, threads, n, c_);
        else
          run(f_, o_.grid, o_.blocks, o_.schedule, threads, n, c_);
        return omp_get_wtime() - t0;
      });
  race_steps_ = raced_out.steps;
  const std::vector<std::vector<double>>& rates = raced_out.rates;
  // The choice on this race's rounds and those of the earlier undecided races like it (not for
  // --time-block measure, which races afresh).
  const std::string cpu = ChoiceContext::here().cpu_key;
  const std::string raced_team = proposal.shared ? "shared" : "slabs";
  const json earlier_file = cache.empty() ? json() : read_json_file(cache);
  const json* kept = cached_choice(earlier_file, key);
  const json* earlier = o_.time_block_measure ? nullptr : kept;
  const PooledRace pooled = pool_race(earlier, rates, proposal.depth, raced_team, cpu);
  const decide::Choice ch =
      pooled.runs > 1 ? decide::choose_best({"1", std::to_string(proposal.depth)}, pooled.rates, 0, "MPoints/s")
                      : raced_out.choice;
  const std::size_t pooled_rounds = pooled.rates[0].size();
  const json calibrated =
      calibrated_prediction(o_.grid, threads, deepest_mode, caches, median(rates[0]), raced, median(rates[1]), mode);
  time_block_["calibrated"] = calibrated;
  // Sweeps faster beyond noise, on a run too short to race the depth the model calibrated by the
  // race predicts best: that depth (the measurement says sweeps pay, the model how deep).
  const json deeper = ch.chosen == 1 ? deeper_by_model(calibrated, proposal.depth, median(rates[1])) : json();
  std::string how = "race", why = ch.why;
  if (!deeper.is_null()) {
    const int d = deeper["to"].get<int>();
    model_ = fit_time_block(o_.grid, d, threads, caches, mode);
    tiles_ = TimeTiles{d, model_.tile_rows, model_.chunk, model_.shared};
    time_block_["deeper"] = deeper;
    how = "race and model";
    why = ch.why + "; " + deeper["why"].get<std::string>();
  } else if (ch.chosen == 1) {
    tiles_ = proposal;
    model_ = raced;
  } else {
    model_ = time_block_model(o_.grid, 1, 0, threads, caches);
  }
  // Beyond noise either way (sweeps faster, or slower), or undecided over kPooledRoundsToSettle
  // rounds: kept for the next runs like this one, with the depth raced (a later run that can race
  // deeper races again). Within noise before that: the rounds are kept undecided, in place of
  // whatever was kept under the key (a --time-block measure race then no longer confirms it).
  const json comparisons = ch.record.value("comparisons", json::array());
  const std::string verdict = comparisons.empty() ? "" : text_field(comparisons[0], "verdict");
  const bool beyond_noise =
      verdict == decide::to_string(decide::Verdict::Faster) || verdict == decide::to_string(decide::Verdict::Slower);
  // Undecided over kPooledRoundsToSettle rounds: depth 1 stands, settled.
  const bool settled = beyond_noise || pooled_rounds >= static_cast<std::size_t>(kPooledRoundsToSettle);
  if (pooled.runs > 1) {
    time_block_["pooled"] = {{"rounds", pooled_rounds},
                             {"runs", pooled.runs},
                             {"this_run_rounds", rates[0].size()},
                             {"this_run_race", raced_out.choice.record}};
    if (!beyond_noise && settled)
      why = ch.why + "; " + std::to_string(pooled_rounds) + " rounds over " + std::to_string(pooled.runs) +
            " races could not tell sweeps from single steps: depth 1 stands";
  }
  if (!cache.empty()) {
    const int races = races_in_a_row(kept, tiles_.depth, cpu);
    json entry = {{"depth", tiles_.depth},
                  {"team", raced_team},
                  {"raced", proposal.depth},
                  {"decisive", settled},
                  {"races", races},
                  {"runs", pooled.runs},
                  {"cpu", cpu},
                  {"how", how},
                  {"why", settled ? why
                                  : "undecided over " + std::to_string(pooled_rounds) + " rounds of " +
                                        std::to_string(pooled.runs) +
                                        " race(s): the next race like it decides on "
                                        "them and its own, until " +
                                        std::to_string(kPooledRoundsToSettle) + " rounds leave depth 1 standing"},
                  {"race", ch.record},
                  {"measured", today()}};
    const bool stored = store_choice(cache, kTimeBlocksAbout, key, entry);
    if (!stored)
      time_block_["source"] = {{"cached", false}, {"why", "the cache file could not be written"}};
    else if (settled)
      time_block_["source"] = {{"file", cache},
                               {"cached", true},
                               {"races_in_a_row", races},
                               {"why", tiles_.depth > 1 && races < kRacesToKeepSweeps
                                           ? "sweeps are taken without racing once a second race in a row settles "
                                             "on sweeps: the next run like this one races again"
                                           : "the next run like this one takes this depth without racing"}};
    else
      time_block_["source"] = {{"file", cache},
                               {"cached", false},
                               {"why",
                                "within noise: the race's rounds are kept, undecided, for the next race like "
                                "it to decide on with its own"}};
  }
  time_block_.update(
      raced_out.record(plan, "the race's steps advanced the run's wavefield and count among its steps, untimed"));
  time_block_.update({{"depth", tiles_.depth}, {"how", how}, {"why", why}, {"race", ch.record}});
}

namespace {
std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}
}  // namespace

std::string Measurement::time_block_key(int threads, bool one_node) const {
  const Grid& g = o_.grid;
  const Blocks& b = o_.blocks;
  const ThreadOptions& t = o_.thread_options;
  auto dims = [](std::size_t a, std::size_t b2, std::size_t c) {
    return std::to_string(a) + "x" + std::to_string(b2) + "x" + std::to_string(c);
  };
  // the seed's radius keeps the key it always had (races kept before --radius stay valid)
  const std::string radius = g.radius == kSeedRadius ? "" : " radius " + std::to_string(g.radius);
  // sweeps of another shape than the steps' are another race (a key without one stays as it was)
  const RowShape& step_shape = active_shape(g.radius);
  const std::string swept = &swept_shape(g.radius) == &step_shape ? "" : " swept " + shape_name(swept_shape(g.radius));
  // a padded row pitch is another layout: another race (a packed one keeps the key it always had)
  const std::string pitch = g.pitch() == g.n1 ? "" : " pitch " + std::to_string(g.pitch());
  // and so is a padded plane (a packed one keeps the key)
  const std::string plane = g.plane() == g.pitch() * g.n2 ? "" : " plane " + std::to_string(g.plane());
  // and so are arrays offset from one another (none keeps the key)
  const std::string offset = g.offset == 0 ? "" : " offset " + std::to_string(g.offset);
  return "iso3dfd " + dims(g.n1, g.n2, g.n3) + pitch + plane + offset + radius + ", " + std::to_string(threads) +
         " threads " + (t.cpus.empty() ? "bound " + t.bind : "on CPUs " + t.cpus) + ", " + kernel_isa() + " " +
         shape_name(active_shape(g.radius)) + swept + ", blocks " + dims(b.b1, b.b2, b.b3) + ", " +
         (o_.schedule == Schedule::Dynamic ? "dynamic" : "static") + ", " + o_.init + " " + o_.placement.str() + ", " +
         to_string(o_.placement.pages) + " pages, team " + o_.sweep_team +
         (llc_.ran && !llc_.shared ? " (two last-level caches measured)" : "") +
         (one_node ? ", one NUMA node" : ", several NUMA nodes") +
         // the model weighs the last-level cache's bytes by this CPU's measured ratio: another is another race
         ", last-level cache " + ratio_text(caches_.caches.llc_over_memory) + "x memory" +
         // tiles sized for L2 are another proposal: another race (the model's keep the key)
         (caches_.caches.tiles == TileCache::L2   ? ", tiles in L2"
          : caches_.caches.tiles == TileCache::L3 ? ", tiles in L3"
                                                  : "") +
         // the model's proposal follows the caches: a race under other sizes is another race
         (Topology::instance().forced_caches().empty() ? "" : ", " + Topology::instance().forced_caches());
}

bool Measurement::use_cached_time_block(const std::string& cache, const std::string& key, int threads, Teams teams,
                                        int would_race) {
  const Caches& caches = caches_.caches;
  const json file = read_json_file(cache);
  const json* found = cached_choice(file, key);
  if (!found) return false;
  const json& e = *found;
  const std::string team = text_field(e, "team");
  const int d = static_cast<int>(whole_field(e, "depth", 1, 64, 0));
  // settled beyond noise on this CPU, by a race at least as deep as this run would race
  if (!flag_field(e, "decisive") || text_field(e, "cpu") != ChoiceContext::here().cpu_key || d == 0 ||
      whole_field(e, "raced", 1, 64, 0) < would_race)
    return false;
  if (team != "slabs" && team != "shared") return false;
  const bool shared = team == "shared";
  // the team this run allows (--sweep-team, the NUMA nodes), and a depth its slabs hold
  if (d > 1 && ((shared && teams == Teams::Slabs) || (!shared && teams == Teams::Shared))) return false;
  if (d > max_depth(o_.grid, threads, shared)) return false;
  const long races = whole_field(e, "races", 1, 1000, 1);
  if (d > 1 && races < kRacesToKeepSweeps) {
    time_block_["kept_unconfirmed"] = {
        {"depth", d},
        {"races_in_a_row", races},
        {"why", "sweeps one race settled on are raced again until " + std::to_string(kRacesToKeepSweeps) +
                    " races in a row settle on sweeps"}};
    return false;
  }
  if (d == 1) {
    model_ = time_block_model(o_.grid, 1, 0, threads, caches);
  } else {
    model_ = fit_time_block(o_.grid, d, threads, caches, shared ? Teams::Shared : Teams::Slabs);
    tiles_ = TimeTiles{d, model_.tile_rows, model_.chunk, model_.shared};
  }
  const std::string measured = text_field(e, "measured", "?");
  time_block_.update({{"depth", d},
                      {"how", "cached"},
                      {"why", "an earlier run's race on this machine (" + measured + "): " + text_field(e, "why", "?")},
                      {"source", {{"file", cache}, {"measured", measured}}}});
  const json race = e.value("race", json());
  if (decide::is_choice_record(race)) time_block_["cached_race"] = race;
  return true;
}

void Measurement::advance(int n, int threads) {
  if (!optimised(o_))
    run_reference(f_, o_.grid, n, c_);
  else if (tiles_.depth > 1 && n > 1)
    run_time_blocked(f_, o_.grid, o_.blocks, tiles_, threads, n, c_);
  else
    run(f_, o_.grid, o_.blocks, o_.schedule, threads, n, c_);
}

void Measurement::allocate(const Placement& p, int) {
  const Grid& g = o_.grid;
  prev_ = Buffer(array_bytes(g, 0), p), next_ = Buffer(array_bytes(g, 1), p), vel_ = Buffer(array_bytes(g, 2), p);
  f_ = fields_in(prev_, next_, vel_, o_.grid);
  // Blocks before the first touch: those of the variant active at start (the widest), which the
  // choice of the variant may change.
  if (!o_.blocks.b1 || !o_.blocks.b2 || !o_.blocks.b3) variant_changed(0, false);
}

void Measurement::initialise(int threads) {
  split_ = iso3dfd::initialise(f_, o_.grid, o_.blocks, o_.serial_init, threads);
}

std::vector<std::pair<std::string, const Buffer*>> Measurement::buffers() const {
  return {{"prev", &prev_}, {"next", &next_}, {"vel", &vel_}};
}

void Measurement::ready(int threads) {
  check_ = std::make_unique<SelfCheck>(o_.grid, o_.blocks);
  if (!o_.json) print_header(o_, threads, arrays_bytes(o_.grid));
}

driver::Done Measurement::step(const driver::Step& s) {
  const bool timed = s.phase == driver::Phase::Timed;
  const int n = std::max(s.count, 1);
  double secs = 0;
  // The self-check samples the last step alone: the steps before it, then (left out of the time, a
  // few hundred loads) its samples, then the last step.
  const int before = timed && s.last && check_ ? n - 1 : n;
  const double c0 = timed ? cpu_seconds() : 0;
  if (before > 0) {
    const double t0 = omp_get_wtime();
    advance(before, s.threads);
    secs += omp_get_wtime() - t0;
  }
  if (before < n) {
    check_->before_last_step(f_);
    const double t0 = omp_get_wtime();
    advance(1, s.threads);
    secs += omp_get_wtime() - t0;
  }
  if (timed) cpu_s_ += cpu_seconds() - c0;
  return {secs, static_cast<double>(o_.grid.interior()) * n};
}

json Measurement::validate(int steps, int) {
  norm_ = l2_norm(f_.prev, o_.grid.points());
  Outcome v;
  if (o_.verify && steps > 0) {
    v = verify(o_, f_, steps);
    if (!v.passed) throw RunError(failure_message(v));
  }
  const bool checked = check_ && steps > 0 && check_->after_last_step(f_, coefficients(o_.grid.radius));
  if (check_ && steps > 0 && !checked) throw RunError(check_->failure_message());
  json validation = verify_validation(v);
  if (!v.checked && check_ && check_->checked())
    validation = validation_checked(check_->passed(),
                                    "self-check: sampled points of the last step recomputed with the scalar formula");
  if (check_) validation["self_check"] = check_->to_json();
  return validation;
}

json Measurement::config() const {
  json c = iso_config(o_);
  c["blocks_choice"] = blocks_choice_;
  c["time_block"] = time_block_;
  return c;
}

json Measurement::result(const std::vector<driver::Timing>& t) const {
  double secs = 0;
  for (double s : t[0].seconds) secs += s;
  double points = 0;
  for (double a : t[0].amounts) points += a;
  const int steps = static_cast<int>(points / static_cast<double>(o_.grid.interior()) + 0.5);
  json r = iso_result(o_, steps, secs, cpu_s_, norm_, model_);
  if (steps > 0) {
    std::vector<double> rates = t[0].rates();
    std::sort(rates.begin(), rates.end());
    r["step_mpoints_per_s"] = {{"median", rates[rates.size() / 2]}, {"min", rates.front()}, {"max", rates.back()}};
    const json check = recheck_kept_depth(rates);
    if (!check.is_null()) r["time_block_check"] = check;
  }
  return r;
}

json Measurement::recheck_kept_depth(const std::vector<double>& sorted_rates) const {
  if (text_field(time_block_, "how") != "cached" || tiles_.depth <= 1 || !time_block_.contains("cached_race"))
    return nullptr;
  const json& race = time_block_["cached_race"];
  const json singles = race.contains("rates") && race["rates"].contains("1") ? race["rates"]["1"] : json();
  if (!singles.is_array() || singles.empty()) return nullptr;
  std::vector<double> kept;
  for (const json& v : singles)
    if (v.is_number()) kept.push_back(v.get<double>());
  if (kept.empty()) return nullptr;
  std::sort(kept.begin(), kept.end());
  const double fastest = sorted_rates.back(), slowest_kept = kept.front();
  json out = {{"depth", tiles_.depth},
              {"run_mpoints_per_s", {{"min", sorted_rates.front()}, {"max", fastest}}},
              {"kept_race_single_steps_mpoints_per_s", {{"min", slowest_kept}, {"max", kept.back()}}}};
  // Contradicted: every timed call of the kept depth ran slower than every single step of the race
  // that kept it. The kept depth is then forgotten, so the next run like this one races again.
  if (fastest >= slowest_kept) {
    out["contradicted"] = false;
    out["why"] = "the kept depth ran within or above the range of the single steps of the race that kept it";
    return out;
  }
  const std::string file = time_block_.contains("source") ? text_field(time_block_["source"], "file") : "";
  const bool forgot =
      !file.empty() && store_choice(file, kTimeBlocksAbout, text_field(time_block_, "cache_key"), json());
  out["contradicted"] = true;
  out["forgotten"] = forgot;
  out["why"] = "every timed call of the kept depth " + std::to_string(tiles_.depth) +
               " ran slower than every single step of the race that kept it: " +
               (forgot ? "the kept depth is forgotten, and the next run like this one races again"
                       : "the kept depth could not be forgotten (the cache file could not be written)");
  return out;
}

json Measurement::placement_extra() const {
  return {{"init", o_.serial_init ? "serial" : "first-touch"}, {"page_split", split_.to_json()}};
}

}  // namespace bw::iso3dfd
