#include "iso3dfd/timemodel.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "common/args.hpp"
#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/errors.hpp"
#include "iso3dfd/timeblock.hpp"

namespace bw::iso3dfd {

json TimeBlockModel::to_json() const {
  return {{"depth", depth},
          {"team", shared ? "shared" : "slabs"},
          {"tile_rows", tile_rows},
          {"tiles", tiles},
          {"chunk_planes", chunk},
          {"window_bytes", window_bytes},
          {"level", level},
          {"memory_bytes_per_point", memory_bytes_per_point},
          {"llc_bytes_per_point", llc_bytes_per_point},
          {"llc_over_memory", llc_over_memory},
          {"cost_bytes_per_point", cost()},
          {"shared_face_share", shared_face_share},
          {"rereads_from", tiles > 1 ? (rereads_in_llc ? "last-level cache" : "memory") : "none"},
          {"redundant_flops_share", 0.0},
          {"why", why}};
}

TimeBlockModel time_block_model(const Grid& g, int depth, std::size_t rows, int threads, const Caches& caches,
                                std::size_t chunk, bool shared) {
  const std::uint64_t l2 = caches.l2, l3 = caches.l3;
  TimeBlockModel m;
  m.llc_over_memory = caches.llc_over_memory;
  m.depth = depth;
  m.shared = shared && threads > 1;
  m.chunk = chunk;
  const std::size_t interior_rows = g.n2 - 2 * g.halo(), planes = g.n3 - 2 * g.halo();
  m.tile_rows = tile_rows_for(g, rows, depth);
  m.tiles = (interior_rows + m.tile_rows - 1) / m.tile_rows;
  if (depth <= 1) {
    m.llc_bytes_per_point = 12.0 + 4.0 * (128.0 + 2 * g.radius) / 128.0;  // blocks of 128 planes
    m.level = "none";
    m.why = "one time step per sweep: every step crosses memory";
    return m;
  }
  const double d = depth, r = static_cast<double>(m.tile_rows), h = g.radius;
  // The planes in flight: level d's 2R+1-plane window, R (d - 1) planes behind level 1's chunk; the
  // rows: the tile's and the R d rows its levels reach back into the tile before, plus R ahead.
  const double window_planes = h * (d - 1) + static_cast<double>(chunk) + 2 * h;
  const double window_rows = std::min(r + h * (d + 1), static_cast<double>(g.n2));
  m.window_bytes = window_planes * window_rows * static_cast<double>(g.pitch()) * 3 * sizeof(float);
  const double team = std::max(threads, 1);
  const double windows = m.shared ? 1 : team;  // in the last-level cache at once
  if (l2 && m.window_bytes <= static_cast<double>(l2))
    m.level = "L2";
  else if (l3 && windows * m.window_bytes <= 0.5 * static_cast<double>(l3))
    m.level = "L3";
  else
    m.level = "memory";
  // A sweep reads prev, next and vel once and writes prev and next back once: 20 bytes a point for
  // d steps. A tile reads again the R (d + 1) rows of the tile before it that its levels reach, and
  // the triangles about shared faces are read again after the trapezoids. The tile before read those
  // rows one tile sweep ago (every plane of the interior, the team's slabs together, on its rows and
  // those it reaches): where half the last-level cache holds that, they come from it, not memory.
  const double reach = m.tiles > 1 ? (r + h * (d + 1)) / r : 1.0;
  const double tile_sweep_bytes =
      static_cast<double>(planes) * window_rows * static_cast<double>(g.pitch()) * 3 * sizeof(float);
  m.rereads_in_llc = m.tiles > 1 && l3 && tile_sweep_bytes <= 0.5 * static_cast<double>(l3);
  m.shared_face_share = m.shared ? 0.0 : (team - 1) * 2 * h * (d - 1) / static_cast<double>(planes);
  m.shared_face_share = std::min(m.shared_face_share, 1.0);
  // Into L2, a level's box of `chunk` planes reads prev with its 2R halo planes, and next and vel,
  // and writes next back.
  m.llc_bytes_per_point = 12.0 + 4.0 * (static_cast<double>(chunk) + 2 * h) / static_cast<double>(chunk);
  if (m.level == "memory") {
    m.memory_bytes_per_point = kBytesPerPoint;
    m.why = "the wavefront's window fits no cache: every step crosses memory";
  } else {
    const double swept = 20.0 / d * (1 + m.shared_face_share);
    m.memory_bytes_per_point = m.rereads_in_llc ? swept : swept * reach;
    // A window L2 holds re-reads its halo planes from L2: what enters it is what crosses memory and
    // the rows re-read from the last-level cache.
    if (m.level == "L2") m.llc_bytes_per_point = swept * reach;
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "%d steps a sweep%s on tiles of %zu rows in chunks of %zu planes held in %s: %.1f bytes a point "
                  "and step from memory, %.1f into L2%s",
                  depth, m.shared ? " by the team together" : "", m.tile_rows, chunk, m.level.c_str(),
                  m.memory_bytes_per_point, m.llc_bytes_per_point,
                  m.rereads_in_llc ? " (the rows re-read from the tile before from the last-level cache)" : "");
    m.why = buf;
  }
  return m;
}

double TimeBlockModel::cost() const { return memory_bytes_per_point + llc_bytes_per_point / llc_over_memory; }

double TimeBlockModel::memory_equivalent_bytes() const {
  return memory_bytes_per_point + std::max(llc_bytes_per_point - memory_bytes_per_point, 0.0) / llc_over_memory;
}

namespace {
// The level caches.tiles asks for (nullptr: the model's).
const char* wanted_level(const Caches& caches) {
  return caches.tiles == TileCache::L2 ? "L2" : caches.tiles == TileCache::L3 ? "L3" : nullptr;
}
}  // namespace

bool tiles_allowed(const TimeBlockModel& m, const Caches& caches) {
  const char* w = wanted_level(caches);
  return m.level != "memory" && (!w || m.level == w);
}

TimeBlockModel fit_time_block(const Grid& g, int depth, int threads, const Caches& caches, Teams teams) {
  const std::size_t interior_rows = g.n2 - 2 * g.halo();
  std::vector<bool> modes;
  if (teams != Teams::Shared && depth <= max_depth(g, threads)) modes.push_back(false);
  if (teams != Teams::Slabs && threads > 1) modes.push_back(true);
  if (modes.empty()) modes.push_back(false);  // slabs beyond their depth: the caller refuses it
  std::vector<TimeBlockModel> fits;           // the best of each mode, slabs first
  for (bool shared : modes) {
    const char* w = wanted_level(caches);
    std::optional<TimeBlockModel> best, in_wanted;
    auto consider = [&](const TimeBlockModel& m) {
      if (!best || (best->level == "memory" && m.level != "memory") || (m.level != "memory" && m.cost() < best->cost()))
        best = m;
      if (w && m.level == w && (!in_wanted || m.cost() < in_wanted->cost())) in_wanted = m;
    };
    for (std::size_t chunk : {128, 64, 32, 16, 8, 4, 2}) {
      if (chunk < caches.shape_planes && chunk < 8) continue;
      // The largest tile whose window a cache holds (the whole interior, else a multiple of 8 rows),
      // and the largest whose window L2 holds: smaller tiles re-read more rows from memory, but
      // re-read their halo planes from L2 instead of the last-level cache.
      TimeBlockModel m = time_block_model(g, depth, 0, threads, caches, chunk, shared);
      bool in_l2 = m.level == "L2";
      consider(m);
      for (std::size_t rows = (interior_rows / 8) * 8; !in_l2 && rows >= 8; rows -= 8) {
        const TimeBlockModel t = time_block_model(g, depth, rows, threads, caches, chunk, shared);
        if (t.level == "memory" || (t.level == m.level && m.level != "memory")) continue;
        m = t;
        in_l2 = t.level == "L2";
        consider(t);
      }
    }
    fits.push_back(in_wanted ? *in_wanted : *best);
  }
  // Slabs unless the team together saves a fifth of their cost (or only it holds its window in a
  // cache): slabs keep each thread on the planes it first touched and need no barrier a box.
  if (fits.size() == 2) {
    const TimeBlockModel &slab = fits[0], &team = fits[1];
    if (const char* w = wanted_level(caches); w && (slab.level == w) != (team.level == w))
      return slab.level == w ? slab : team;
    if (team.level != "memory" && (slab.level == "memory" || team.cost() < kTeamSaves * slab.cost())) return team;
    return slab;
  }
  return fits[0];
}

TimeBlockModel propose_time_block(const Grid& g, int threads, int max_depth, const Caches& caches, Teams teams) {
  const std::uint64_t l2 = caches.l2;
  TimeBlockModel best = time_block_model(g, 1, 0, threads, caches);
  const double arrays = 3.0 * static_cast<double>(g.points()) * sizeof(float);
  if (l2 && arrays <= 0.5 * static_cast<double>(l2) * std::max(threads, 1)) {
    best.why = "the grid's three arrays fit the team's L2: no memory traffic to spare";
    return best;
  }
  TimeBlockModel found = best;
  for (int d = 2; d <= std::min(max_depth, 8); ++d) {
    const TimeBlockModel m = fit_time_block(g, d, threads, caches, teams);
    if (!tiles_allowed(m, caches)) continue;
    if (found.depth == 1 || m.cost() < 0.95 * found.cost()) found = m;
  }
  if (found.depth > 1 && found.memory_bytes_per_point <= 0.8 * kBytesPerPoint && found.cost() < best.cost())
    return found;
  best.why = found.depth > 1 ? "no depth saves a fifth of the memory traffic: " + found.why
                             : "no depth's wavefront fits a cache, or the slabs allow none";
  return best;
}

json calibrated_prediction(const Grid& g, int threads, int max_depth, const Caches& caches, double rate1,
                           const TimeBlockModel& raced, double rate_d, Teams teams) {
  const double t1 = 1.0 / rate1, td = 1.0 / rate_d;
  const double b1 = time_block_model(g, 1, 0, threads, caches).memory_equivalent_bytes();
  const double bd = raced.memory_equivalent_bytes() / b1;
  // t1 = tc + m and td = tc + m * bd: the in-cache time tc and the transfer part m of depth 1 (what
  // only the last-level cache moves counted at its bandwidth, in bytes of memory's).
  double tc = bd < 1.0 ? (td - t1 * bd) / (1.0 - bd) : t1;
  tc = std::clamp(tc, 0.25 * t1, t1);  // a race's noise must not make memory more than 3/4 of the time
  const double mem = t1 - tc;
  json predicted = json::array();
  int best = 1;
  double best_rate = rate1;
  for (int d = 1; d <= std::min(max_depth, 8); ++d) {
    const TimeBlockModel m =
        d == 1 ? time_block_model(g, 1, 0, threads, caches) : fit_time_block(g, d, threads, caches, teams);
    if (d > 1 && !tiles_allowed(m, caches)) continue;
    const double rate = 1.0 / (tc + mem * m.memory_equivalent_bytes() / b1);
    predicted.push_back({{"depth", d},
                         {"mpoints_per_s", rate},
                         {"memory_bytes_per_point", m.memory_bytes_per_point},
                         {"memory_equivalent_bytes_per_point", m.memory_equivalent_bytes()}});
    best_rate = std::max(best_rate, rate);
  }
  // The shallowest depth within the decision rule's margin of the fastest prediction.
  const double top = best_rate;
  for (const auto& p : predicted)
    if (p["mpoints_per_s"].get<double>() * (1 + decide::rule().margin) >= top) {
      best = p["depth"].get<int>(), best_rate = p["mpoints_per_s"].get<double>();
      break;
    }
  return {{"from", "the race's medians: depth 1 and depth " + std::to_string(raced.depth)},
          {"in_cache_mpoints_per_s", 1.0 / tc},
          {"memory_share_step_by_step", mem / t1},
          {"predicted", predicted},
          {"best_depth", best},
          {"best_mpoints_per_s", best_rate}};
}

namespace {
// The steps a race may take: three quarters of the run's, less the warm-up step.
int race_budget(int iterations) { return static_cast<int>(std::max(iterations, 0) * 3L / 4) - 1; }
}  // namespace

int race_rounds(const RacePlan& plan, const std::vector<std::vector<double>>& rates,
                const std::function<void(int)>& leg) {
  const decide::Rule& rule = decide::rule();
  auto round = [&](int r) {
    for (int k = 0; k < 2; ++k) leg((k + r) % 2);
  };
  int ran = 0;
  for (; ran < rule.rounds; ++ran) round(ran);
  if (plan.may_add && decide::unsettled(decide::ratio_interval(rates[1], rates[0])))
    for (; ran < plan.most_rounds; ++ran) round(ran);
  return ran;
}

RacePlan plan_race(int proposed, int iterations, int rounds, int most_rounds) {
  RacePlan p;
  rounds = std::max(rounds, 1);
  const int per_round = std::max(race_budget(iterations), 0) / rounds;
  p.depth = std::max(std::min(proposed, per_round - 1), 0);
  p.singles = std::clamp(per_round - p.depth, 1, std::max(p.depth, 1));
  p.most_rounds = std::max(most_rounds, rounds);
  p.may_add = p.depth >= 2 && p.most_rounds * (p.depth + p.singles) <= race_budget(iterations);
  p.fewest_steps = 1;
  while (race_budget(p.fewest_steps) / rounds < 3) ++p.fewest_steps;
  return p;
}

RaceOutcome race_depth(const RacePlan& plan, double points, const std::function<void()>& warm,
                       const std::function<double(int n, bool sweep)>& seconds) {
  RaceOutcome out;
  out.rates.resize(2);
  warm();
  out.steps = 1;
  const int ran = race_rounds(plan, out.rates, [&](int c) {
    const int n = c == 0 ? plan.singles : plan.depth;
    out.rates[static_cast<std::size_t>(c)].push_back(points * n / seconds(n, c == 1) / 1e6);
    out.steps += n;
  });
  out.rounds_added = ran - decide::rule().rounds;
  out.choice = decide::choose_best({"1", std::to_string(plan.depth)}, out.rates, 0, "MPoints/s");
  out.depth = out.choice.chosen == 1 ? plan.depth : 1;
  return out;
}

json RaceOutcome::record(const RacePlan& plan, const std::string& note) const {
  return {{"depth", depth},
          {"how", "race"},
          {"why", choice.why},
          {"race", choice.record},
          {"race_steps", steps},
          {"race_single_steps", plan.singles},
          {"race_rounds_added", rounds_added},
          {"note", note}};
}

int races_in_a_row(const json* earlier, int depth, const std::string& cpu) {
  if (depth <= 1 || earlier == nullptr || !earlier->is_object()) return 1;
  const json& e = *earlier;
  if (!flag_field(e, "decisive") || text_field(e, "cpu") != cpu || whole_field(e, "depth", 1, kMaxTimeBlock, 0) < 2)
    return 1;
  return static_cast<int>(whole_field(e, "races", 1, 1000, 1)) + 1;
}

PooledRace pool_race(const json* earlier, const std::vector<std::vector<double>>& rates, int depth,
                     const std::string& team, const std::string& cpu) {
  PooledRace out{rates, 1};
  if (earlier == nullptr || !earlier->is_object()) return out;
  const json& e = *earlier;
  if (text_field(e, "cpu") != cpu || text_field(e, "team") != team ||
      whole_field(e, "raced", 1, kMaxTimeBlock, 0) != depth)
    return out;
  const json race = e.value("race", json());
  if (!race.is_object() || !race.contains("rates") || !race["rates"].is_object()) return out;
  const json& per = race["rates"];
  const std::string names[2] = {"1", std::to_string(depth)};
  std::vector<std::vector<double>> kept(2);
  for (std::size_t c = 0; c < 2; ++c) {
    if (!per.contains(names[c]) || !per[names[c]].is_array()) return out;
    for (const json& v : per[names[c]]) {
      if (!v.is_number() || !(v.get<double>() > 0)) return out;
      kept[c].push_back(v.get<double>());
    }
  }
  if (kept[0].size() != kept[1].size() || kept[0].empty()) return out;
  for (std::size_t c = 0; c < 2; ++c) out.rates[c].insert(out.rates[c].begin(), kept[c].begin(), kept[c].end());
  out.runs = static_cast<int>(whole_field(e, "runs", 1, 1000, 1)) + 1;
  return out;
}

TimeBlockRequest parse_time_block(const std::string& text) {
  TimeBlockRequest r;
  r.text = text;
  if (text == "auto" || text == "measure") {
    r.measure = text == "measure";
    return r;
  }
  try {
    r.depth = static_cast<int>(parse_int(text, "--time-block", 1, kMaxTimeBlock));
  } catch (const UsageError&) {
    throw UsageError("--time-block '" + text + "' must be auto, measure or a whole number from 1 to " +
                     std::to_string(kMaxTimeBlock));
  }
  return r;
}

json time_block_grammar() {
  return {{"words", {"auto", "measure"}},
          {"max", kMaxTimeBlock},
          {"syntax", "auto, measure or a whole number from 1 to " + std::to_string(kMaxTimeBlock)}};
}

json deeper_by_model(const json& calibrated, int raced, double rate_raced) {
  if (raced <= 1 || !calibrated.contains("best_depth")) return nullptr;
  const int best = calibrated["best_depth"].get<int>();
  const double predicted = calibrated["best_mpoints_per_s"].get<double>();
  const double margin = decide::rule().margin;
  if (best <= raced || predicted <= rate_raced * (1 + margin)) return nullptr;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "the model calibrated by the race predicts depth %d at %.0f MPoints/s, beyond the %.0f%% margin over "
                "depth %d's measured %.0f (%.2fx): depth %d",
                best, predicted, 100 * margin, raced, rate_raced, predicted / rate_raced, best);
  return {{"from", raced},
          {"to", best},
          {"predicted_mpoints_per_s", predicted},
          {"measured_mpoints_per_s", rate_raced},
          {"why", buf}};
}

}  // namespace bw::iso3dfd
