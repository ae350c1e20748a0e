// A knob of a kernel (a register shape, a prefetch distance) that a CPU without its own row in the
// table of measured choices (common/isa_choice.hpp) races on the run's own data: the default against
// the candidates the table's rows chose, in interleaved rounds under the decision rule
// (common/decide.hpp). What a race settles is kept for the next runs on this machine
// (common/choice_cache.hpp, knob-races-<digest>.json), per kernel key, knob, variant, data size
// class and threads.
//
// - The default faster, or no difference beyond noise: the default stands, kept. A candidate left
//   unsettled above the default (its median beyond the margin, its interval not) runs the rounds the
//   rule allows when unsettled, if the budget holds them; still unsettled, the rounds are kept and
//   the next race like it decides on them and its own, until kKnobPooledRounds rounds leave the
//   default standing.
// - Another candidate faster beyond noise: it runs at once, kept unconfirmed. The next run like this
//   one races the default against it alone; it stands (kept, taken without a race from then on) only
//   when that race settles on it too (its rounds pooled with the next such race's while it stays
//   unsettled above the default), else the default stands, kept. Among several candidates one may
//   pass the rule by chance: the second race keeps such a chance from flipping later runs.
// - A run whose budget of trials cannot hold the race races nothing and takes the default.
// - measure: races afresh whatever is kept, and keeps what it settles.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/record.hpp"

namespace bw {

struct KnobRace {
  std::string knob;                     // what is raced, for the record's words: "register shape"
  std::string key;                      // the cache key: kernel key, variant, knob, size class, threads
  std::vector<std::string> candidates;  // the default first
  std::string cpu;                      // the cache's name of this CPU (ChoiceContext::cpu_key)
  std::string cache_path;               // "" for no cache
  bool measure = false;                 // race whatever is kept
  // The trials this run may spend, asked only when a race is due (a caller may then warm up and
  // size its trials).
  std::function<int()> budget = [] { return 0; };
  std::string unit = "MPoints/s";
};

struct KnobOutcome {
  std::string chosen;
  // "kept" (settled by earlier races on this machine), "raced" (this run's race), "default" (no race:
  // one candidate, or a budget too small)
  std::string how;
  std::string why;  // one line
  int trials = 0;   // the trials spent
  json record;      // {candidates, how, why, race: decision record, kept: the cache entry's state, file}
};

// One trial of a candidate on the run's data: its rate, higher is better.
using KnobTrial = std::function<double(const std::string&)>;

// Rounds of undecided races after which the default stands, settled.
inline constexpr int kKnobPooledRounds = 20;

// What the file of kept knob races says of itself.
extern const char* const kKnobRacesAbout;

// The choice of r's knob; trial times one candidate (called trials times in all).
KnobOutcome race_knob(const KnobRace& r, const KnobTrial& trial);

}  // namespace bw
