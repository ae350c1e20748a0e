#include "common/knob_race.hpp"

#include <algorithm>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"

namespace bw {

const char* const kKnobRacesAbout =
    "Kernel knobs (register shapes, prefetch distances) that bandwall raced on this machine, a CPU without its own "
    "row in the table of measured choices, per kernel, variant, size class and threads (docs: guides/iso3dfd). "
    "settled: later runs take `chosen` without racing; unsettled: the next run races it against the default "
    "again. Delete this file, or run with --row-shape measure or --prefetch measure, to race again.";

namespace {

// The entry kept under r.key when it was raced on this CPU among the same candidates, else nullptr.
const json* kept_entry(const json& file, const KnobRace& r) {
  const json* e = cached_choice(file, r.key);
  if (!e || text_field(*e, "cpu") != r.cpu || e->value("candidates", json()) != json(r.candidates)) return nullptr;
  const std::string chosen = text_field(*e, "chosen");
  return std::find(r.candidates.begin(), r.candidates.end(), chosen) == r.candidates.end() ? nullptr : e;
}

// Some candidate against the default (rates[0]) has a median beyond the margin above it and an
// interval that is not: more rounds may make it the choice. (One unsettled below the default could
// only leave the default standing, as it stands already.)
bool any_unsettled(const std::vector<std::vector<double>>& rates) {
  const decide::Rule& rule = decide::rule();
  for (std::size_t i = 1; i < rates.size(); ++i) {
    const decide::Interval v = decide::ratio_interval(rates[i], rates[0]);
    if (decide::unsettled(v) && v.median > 1 + rule.margin) return true;
  }
  return false;
}

// The rounds an undecided race kept per candidate (the same number for each), else none.
std::vector<std::vector<double>> earlier_rounds(const json& e, const std::vector<std::string>& names) {
  std::vector<std::vector<double>> out(names.size());
  const json rounds = e.value("rounds", json::object());
  if (!rounds.is_object()) return std::vector<std::vector<double>>(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const json v = rounds.value(names[i], json::array());
    if (!v.is_array()) return std::vector<std::vector<double>>(names.size());
    for (const json& x : v)
      if (x.is_number() && x.get<double>() > 0) out[i].push_back(x.get<double>());
    if (out[i].size() != out[0].size()) return std::vector<std::vector<double>>(names.size());
  }
  return out;
}

KnobOutcome with(const KnobRace& r, const std::string& chosen, const std::string& how, const std::string& why) {
  KnobOutcome o;
  o.chosen = chosen, o.how = how, o.why = why;
  o.record = {{"candidates", r.candidates}, {"how", how}, {"why", why}, {"key", r.key}};
  return o;
}

}  // namespace

KnobOutcome race_knob(const KnobRace& r, const KnobTrial& trial) {
  const std::string def = r.candidates.empty() ? "" : r.candidates[0];
  if (r.candidates.size() < 2)
    return with(r, def, "default", "no row of the table of measured choices names another " + r.knob);
  const json file = r.cache_path.empty() ? json() : read_json_file(r.cache_path);
  const json* kept = r.measure ? nullptr : kept_entry(file, r);
  if (kept && flag_field(*kept, "settled")) {
    KnobOutcome o = with(r, text_field(*kept, "chosen"), "kept",
                         "an earlier run's race on this machine (" + text_field(*kept, "measured", "undated") +
                             "): " + text_field(*kept, "why", "no reason kept"));
    o.record["file"] = r.cache_path;
    return o;
  }
  // A winner of one race awaits a second against the default alone; else every candidate races,
  // with the rounds of the earlier races like it that could not decide.
  const bool confirming = kept && text_field(*kept, "chosen") != def;
  const std::vector<std::string> names =
      confirming ? std::vector<std::string>{def, text_field(*kept, "chosen")} : r.candidates;
  std::vector<std::vector<double>> pooled =
      kept ? earlier_rounds(*kept, names) : std::vector<std::vector<double>>(names.size());
  const decide::Rule& rule = decide::rule();
  const int n = static_cast<int>(names.size()), needed = rule.rounds * n, budget = r.budget ? r.budget() : 0;
  if (needed > budget) {
    const std::string waits =
        confirming ? "the " + r.knob + " " + names[1] + ", faster in one race, awaits a second; " : "";
    return with(r, def, "default",
                waits + "the run is too short to race " + std::to_string(n) + " candidates (" + std::to_string(needed) +
                    " trials, " + std::to_string(budget) + " allowed): the default stands");
  }
  auto time = [&](std::size_t i) { return trial(names[i]); };
  auto rates = decide::interleaved_rounds(names.size(), rule.rounds, time);
  int trials = needed;
  // Unsettled after the rule's rounds (a median beyond the margin, its interval not): the rounds the
  // rule allows in all, when the budget holds them.
  if (any_unsettled(rates) && rule.rounds_when_unsettled * n <= budget) {
    const auto more = decide::interleaved_rounds(names.size(), rule.rounds_when_unsettled - rule.rounds, time);
    for (std::size_t i = 0; i < rates.size(); ++i) rates[i].insert(rates[i].end(), more[i].begin(), more[i].end());
    trials = rule.rounds_when_unsettled * n;
  }
  for (std::size_t i = 0; i < rates.size(); ++i) pooled[i].insert(pooled[i].end(), rates[i].begin(), rates[i].end());
  const decide::Choice d = decide::choose_best(names, pooled, 0, r.unit);
  const std::string chosen = names[d.chosen];
  const std::size_t rounds = pooled[0].size();
  // The default with a candidate still unsettled above it, over fewer than kKnobPooledRounds rounds:
  // the rounds are kept for the next race like it (a confirming race's too: the winner still
  // awaits). The default otherwise, or a confirmed winner: settled. Another the first time: kept to
  // be confirmed.
  const bool pooling = chosen == def && any_unsettled(pooled) && rounds < static_cast<std::size_t>(kKnobPooledRounds);
  const bool settles = !pooling && (confirming || chosen == def);
  const std::string over =
      rounds > rates[0].size() ? " (" + std::to_string(rounds) + " rounds with earlier races')" : "";
  std::string why = d.why + over;
  if (confirming && pooling)
    why = "a second race could not yet confirm the " + r.knob + " " + names[1] + ": " + d.why + over +
          "; the next run like this one races them again and decides on these rounds and its own";
  else if (confirming && chosen == def)
    why = "a second race did not confirm the " + r.knob + " " + names[1] + ": " + d.why + over + "; the default stands";
  else if (confirming)
    why = "a second race confirmed it: " + d.why + over;
  else if (chosen != def)
    why += "; the next run like this one races it against the default again before keeping it";
  else if (pooling)
    why += "; undecided: the next race like this one decides on these rounds and its own";
  KnobOutcome o = with(r, chosen, "raced", why);
  o.trials = trials;
  o.record["race"] = d.record;
  if (r.cache_path.empty()) return o;
  // a winner awaiting its confirmation stays the entry's choice while the rounds pool
  json entry = {{"chosen", confirming && pooling ? names[1] : chosen},
                {"default", def},
                {"settled", settles},
                {"knob", r.knob},
                {"candidates", r.candidates},
                {"cpu", r.cpu},
                {"why", why},
                {"race", d.record},
                {"measured", today()}};
  if (pooling) {
    entry["rounds"] = json::object();
    for (std::size_t i = 0; i < names.size(); ++i) entry["rounds"][names[i]] = pooled[i];
  }
  const bool stored = store_choice(r.cache_path, kKnobRacesAbout, r.key, entry);
  o.record["kept"] =
      stored ? json{{"file", r.cache_path}, {"settled", settles}}
             : json{{"file", r.cache_path}, {"settled", false}, {"why", "the cache file could not be written"}};
  return o;
}

}  // namespace bw
