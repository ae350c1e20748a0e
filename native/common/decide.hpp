// The one rule by which bandwall chooses by itself (common/decision.json, compiled in; the front
// end applies the same rule from the manifest, python/bandwall/core/decide.py, and both are held to
// one table of cases, tests/fixtures/decision_cases.json).
//
// Candidates run in interleaved rounds. For two candidates, each round gives the paired ratio of
// their rates (higher is better); the interval of the median ratio comes from the order statistics
// of the ratios (the sign test's distribution-free interval) at the rule's confidence. A candidate
// is chosen over the default only when the whole interval lies beyond the margin; otherwise the
// result is "no difference beyond noise" and the default stands. With too few rounds for the
// confidence (fewer than 5 at 90%) nothing is decided. A comparison left unsettled (its median
// beyond the margin, its interval not) may be given rounds_when_unsettled rounds in
// all, by a caller whose budget allows: then one disturbed round no longer decides.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/record.hpp"

namespace bw::decide {

struct Rule {
  double confidence = 0.9;        // of the interval of the median paired ratio
  double margin = 0.02;           // a ratio beyond 1 + margin (or below 1 / (1 + margin)) is a difference
  double tolerance = 0.03;        // fewest threads: a larger team may be up to this much faster
  int rounds = 5;                 // rounds a measured choice runs by default
  int rounds_when_unsettled = 8;  // rounds in all a caller may run when the first leave it unsettled
  // Named thresholds of the front end's verdicts, each {"value", "why"} (decision.json's "thresholds"),
  // passed through the manifest (not in to_json, which every decision record carries) so that every
  // figure bandwall judges by is written in one file.
  json thresholds = json::object();
  json to_json() const;
};

// The rule of common/decision.json.
const Rule& rule();

// Coverage of the interval [q(k), q(n+1-k)] of the median of n paired ratios: 1 - 2 P(Bin(n, 1/2) < k).
double coverage(int n, int k);

struct Interval {
  int rounds = 0;  // paired rounds (those where both rates are positive)
  double median = 0, lo = 0, hi = 0;
  double coverage = 0;   // of [lo, hi]; below the rule's confidence: too few rounds to decide
  bool enough = false;   // coverage reaches the rule's confidence
  json to_json() const;  // {rounds, median, lo, hi, coverage}
};

// The interval of the median of a[i] / b[i] over the rounds i (rates, higher is better).
Interval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, const Rule& r = rule());

// "1.104x (0.951 to 1.302)": the median ratio and its interval.
std::string interval_text(const Interval& i);

enum class Verdict { Faster, Slower, Same };
const char* to_string(Verdict v);  // "faster", "slower", "no difference beyond noise"

// a against b: faster when the interval lies above 1 + margin, slower below 1 / (1 + margin),
// else the same (as well when there are too few rounds).
Verdict verdict(const Interval& i, const Rule& r = rule());

// No verdict (too few rounds, or an interval across the margin) while the median ratio lies beyond
// the margin either way: more rounds may settle it.
bool unsettled(const Interval& i, const Rule& r = rule());

// What a choice among candidates decided, for a record: the chosen index, whether it differs from
// the default because the rounds showed a difference beyond noise, and every comparison made.
struct Choice {
  std::size_t chosen = 0;
  bool decisive = false;
  std::string why;  // one line
  json record;      // {rule, rounds, default, chosen, decisive, comparisons: [...], why}
};

// Whether d has the shape of a Choice's record (its required fields, of their types): what a
// decision read back from a file must have before a record carries it again.
bool is_choice_record(const json& d);

// rounds interleaved rounds of n candidates, the first rotating from round to round: rates[c] holds
// time(c), the candidate's rate (higher is better), for every round.
std::vector<std::vector<double>> interleaved_rounds(std::size_t n, int rounds,
                                                    const std::function<double(std::size_t)>& time);

// The candidate to run, default first: starting from the default, each other candidate in the
// given order replaces the current one when it is faster beyond noise. rates[c] holds candidate c's
// rate in every round (the same rounds for all).
Choice choose_best(const std::vector<std::string>& names, const std::vector<std::vector<double>>& rates,
                   std::size_t default_index, const std::string& unit, const Rule& r = rule());

// The fewest threads (counts ascending) that no other count beats by more than the tolerance, with
// the rule's confidence; the default (the largest count) when no count is shown to be enough.
Choice choose_fewest(const std::vector<int>& counts, const std::vector<std::vector<double>>& rates,
                     const std::string& unit, const Rule& r = rule());

}  // namespace bw::decide
