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
  const bool settled = kept && flag_field(*kept, "settled");
  if (settled) {
    KnobOutcome o = with(r, text_field(*kept, "chosen"), "kept",
                         "an earlier run's race on this machine (" + text_field(*kept, "measured", "undated") +
                             "): " + text_field(*kept, "why", "no reason kept"));
    o.record["file"] = r.cache_path;
    return o;
  }
  // a winner of one race awaits a second against the default alone; else every candidate races
  const std::vector<std::string> names =
      kept ? std::vector<std::string>{def, text_field(*kept, "chosen")} : r.candidates;
  const int rounds = decide::rule().rounds;
  const int needed = rounds * static_cast<int>(names.size()), budget = r.budget ? r.budget() : 0;
  if (needed > budget) {
    const std::string waits = kept ? "the " + r.knob + " " + names[1] + ", faster in one race, awaits a second; " : "";
    return with(r, def, "default",
                waits + "the run is too short to race " + std::to_string(names.size()) + " candidates (" +
                    std::to_string(needed) + " trials, " + std::to_string(budget) + " allowed): the default stands");
  }
  const auto rates = decide::interleaved_rounds(names.size(), rounds, [&](std::size_t i) { return trial(names[i]); });
  const decide::Choice d = decide::choose_best(names, rates, 0, r.unit);
  const std::string chosen = names[d.chosen];
  // the default: settled; another the first time: unsettled until a second race agrees
  const bool settles = chosen == def || kept;
  std::string why = d.why;
  if (kept && chosen == def)
    why = "a second race did not confirm the " + r.knob + " " + names[1] + ": " + d.why + "; the default stands";
  else if (kept)
    why = "a second race confirmed it: " + d.why;
  else if (chosen != def)
    why = d.why + "; the next run like this one races it against the default again before keeping it";
  KnobOutcome o = with(r, chosen, "raced", why);
  o.trials = needed;
  o.record["race"] = d.record;
  if (r.cache_path.empty()) return o;
  const json entry = {{"chosen", chosen},           {"default", def}, {"settled", settles}, {"knob", r.knob},
                      {"candidates", r.candidates}, {"cpu", r.cpu},   {"why", why},         {"race", d.record},
                      {"measured", today()}};
  const bool stored = store_choice(r.cache_path, kKnobRacesAbout, r.key, entry);
  o.record["kept"] =
      stored ? json{{"file", r.cache_path}, {"settled", settles}}
             : json{{"file", r.cache_path}, {"settled", false}, {"why", "the cache file could not be written"}};
  return o;
}

}  // namespace bw
