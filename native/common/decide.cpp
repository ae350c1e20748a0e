#include "common/decide.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "common/errors.hpp"

namespace bw::decide {

extern const char* const kDecisionJson;  // decision.json, compiled in (decision_data.cpp.in)

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double v) { return fixed(100 * v, v * 100 == std::round(v * 100) ? 0 : 1) + "%"; }

}  // namespace

std::string interval_text(const Interval& i) {
  return fixed(i.median, 3) + "x (" + fixed(i.lo, 3) + " to " + fixed(i.hi, 3) + ")";
}

json Rule::to_json() const {
  return {{"confidence", confidence},
          {"margin", margin},
          {"tolerance", tolerance},
          {"rounds", rounds},
          {"rounds_when_unsettled", rounds_when_unsettled}};
}

const Rule& rule() {
  static const Rule r = [] {
    const json j = json::parse(kDecisionJson, nullptr, false);
    if (j.is_discarded()) throw RunError("the compiled-in decision rule (decision.json) is not JSON");
    Rule out;
    out.confidence = j.at("confidence").get<double>();
    out.margin = j.at("margin").get<double>();
    out.tolerance = j.at("tolerance").get<double>();
    out.rounds = j.at("rounds").get<int>();
    out.rounds_when_unsettled = j.at("rounds_when_unsettled").get<int>();
    out.thresholds = j.value("thresholds", json::object());
    return out;
  }();
  return r;
}

double coverage(int n, int k) {
  if (n <= 0 || k < 1 || 2 * k > n + 1) return 0;
  // P(Bin(n, 1/2) < k) by summing binomial terms in doubles (n is a count of rounds: small).
  double tail = 0, term = std::pow(0.5, n);
  for (int i = 0; i < k; ++i) {
    tail += term;
    term = term * (n - i) / (i + 1);
  }
  return 1 - 2 * tail;
}

json Interval::to_json() const {
  return {{"rounds", rounds}, {"median", median}, {"lo", lo}, {"hi", hi}, {"coverage", coverage}};
}

Interval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, const Rule& r) {
  std::vector<double> q;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i])) q.push_back(a[i] / b[i]);
  Interval out;
  out.rounds = static_cast<int>(q.size());
  if (q.empty()) return out;
  std::sort(q.begin(), q.end());
  const std::size_t n = q.size();
  out.median = n % 2 ? q[n / 2] : 0.5 * (q[n / 2 - 1] + q[n / 2]);
  // The narrowest order-statistic interval whose coverage reaches the confidence (k = 1 when none).
  int k = 1;
  while (coverage(out.rounds, k + 1) >= r.confidence) ++k;
  out.lo = q[static_cast<std::size_t>(k - 1)];
  out.hi = q[n - static_cast<std::size_t>(k)];
  out.coverage = coverage(out.rounds, k);
  out.enough = out.coverage >= r.confidence;
  return out;
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Faster: return "faster";
    case Verdict::Slower: return "slower";
    case Verdict::Same: break;
  }
  return "no difference beyond noise";
}

Verdict verdict(const Interval& i, const Rule& r) {
  if (!i.enough) return Verdict::Same;
  if (i.lo > 1 + r.margin) return Verdict::Faster;
  if (i.hi < 1 / (1 + r.margin)) return Verdict::Slower;
  return Verdict::Same;
}

bool unsettled(const Interval& i, const Rule& r) {
  if (i.rounds == 0 || verdict(i, r) != Verdict::Same) return false;
  return i.median > 1 + r.margin || i.median < 1 / (1 + r.margin);
}

namespace {

json rule_record(const Rule& r, const std::string& unit, std::size_t rounds) {
  json j = r.to_json();
  j["unit"] = unit;
  j["rounds_run"] = rounds;
  return j;
}

std::size_t rounds_of(const std::vector<std::vector<double>>& rates) {
  std::size_t n = 0;
  for (const auto& v : rates) n = std::max(n, v.size());
  return n;
}

}  // namespace

std::vector<std::vector<double>> interleaved_rounds(std::size_t n, int rounds,
                                                    const std::function<double(std::size_t)>& time) {
  std::vector<std::vector<double>> rates(n);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(r)) % n;
      rates[i].push_back(time(i));
    }
  return rates;
}

Choice choose_best(const std::vector<std::string>& names, const std::vector<std::vector<double>>& rates,
                   std::size_t default_index, const std::string& unit, const Rule& r) {
  if (names.empty() || names.size() != rates.size() || default_index >= names.size())
    throw RunError("choice: the candidates and their rates do not match");
  Choice c;
  c.chosen = default_index;
  json comparisons = json::array();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i == default_index) continue;
    const Interval iv = ratio_interval(rates[i], rates[c.chosen], r);
    const Verdict v = verdict(iv, r);
    comparisons.push_back(
        {{"candidate", names[i]}, {"against", names[c.chosen]}, {"ratio", iv.to_json()}, {"verdict", to_string(v)}});
    if (v == Verdict::Faster) c.chosen = i;
  }
  c.decisive = c.chosen != default_index;
  const std::size_t n = rounds_of(rates);
  if (c.decisive) {
    const Interval iv = ratio_interval(rates[c.chosen], rates[default_index], r);
    c.why = names[c.chosen] + " faster than the default " + names[default_index] +
            " beyond noise: " + interval_text(iv) + " over " + std::to_string(iv.rounds) + " paired rounds (" +
            percent(r.confidence) + " interval beyond " + percent(r.margin) + ")";
  } else {
    std::string against;
    for (const json& x : comparisons) {
      const std::string v = x["verdict"];
      against += std::string(against.empty() ? "" : "; ") + x["candidate"].get<std::string>() + " " +
                 (v == "slower" ? "slower beyond noise" : "within noise") + ", " +
                 fixed(x["ratio"]["median"].get<double>(), 2) + "x";
    }
    const bool judged = ratio_interval(rates[0], rates[0], r).enough;
    c.why = names.size() < 2 ? "one candidate: nothing to compare"
            : !judged        ? "too few paired rounds (" + std::to_string(n) + ") for a " + percent(r.confidence) +
                            " interval: the default " + names[default_index] + " stands"
                      : "the default " + names[default_index] + " stands (" + percent(r.margin) + " margin, " +
                            percent(r.confidence) + " interval over " + std::to_string(n) + " rounds): " + against;
  }
  json per = json::object();
  for (std::size_t i = 0; i < names.size(); ++i) per[names[i]] = rates[i];
  c.record = {{"rule", rule_record(r, unit, n)},
              {"default", names[default_index]},
              {"chosen", names[c.chosen]},
              {"decisive", c.decisive},
              {"rates", per},
              {"comparisons", comparisons},
              {"why", c.why}};
  return c;
}

Choice choose_fewest(const std::vector<int>& counts, const std::vector<std::vector<double>>& rates,
                     const std::string& unit, const Rule& r) {
  if (counts.empty() || counts.size() != rates.size()) throw RunError("thread choice: no rates to choose from");
  Choice c;
  const std::size_t last = counts.size() - 1;
  c.chosen = last;
  json comparisons = json::array();
  for (std::size_t i = 0; i < last && c.chosen == last; ++i) {
    bool enough = true;
    for (std::size_t j = 0; j < counts.size(); ++j) {
      if (j == i) continue;
      const Interval iv = ratio_interval(rates[j], rates[i], r);
      const bool within = iv.enough && iv.hi <= 1 + r.tolerance;
      comparisons.push_back(
          {{"threads", counts[i]}, {"against", counts[j]}, {"ratio", iv.to_json()}, {"within_tolerance", within}});
      if (!within) {
        enough = false;
        break;
      }
    }
    if (enough) c.chosen = i;
  }
  c.decisive = c.chosen != last;
  const std::size_t n = rounds_of(rates);
  c.why = c.decisive ? std::to_string(counts[c.chosen]) + " of " + std::to_string(counts[last]) +
                           " threads: no larger team was faster by more than " + percent(r.tolerance) + " (" +
                           percent(r.confidence) + " interval over " + std::to_string(n) + " paired rounds)"
                     : "every thread (" + std::to_string(counts[last]) + "): no smaller team was shown to be within " +
                           percent(r.tolerance) + " of the others (" + percent(r.confidence) + " interval over " +
                           std::to_string(n) + " paired rounds)";
  json per = json::object();
  for (std::size_t i = 0; i < counts.size(); ++i) per[std::to_string(counts[i])] = rates[i];
  c.record = {{"rule", rule_record(r, unit, n)},
              {"default", counts[last]},
              {"chosen", counts[c.chosen]},
              {"decisive", c.decisive},
              {"rates", per},
              {"comparisons", comparisons},
              {"why", c.why}};
  return c;
}

bool is_choice_record(const json& d) {
  auto name = [](const json& v) { return v.is_string() || v.is_number_integer(); };
  if (!d.is_object() || !d.contains("default") || !name(d["default"]) || !d.contains("chosen") || !name(d["chosen"]) ||
      !d.contains("decisive") || !d["decisive"].is_boolean() || !d.contains("why") || !d["why"].is_string() ||
      d["why"].get<std::string>().empty())
    return false;
  if (d.contains("rule")) {
    const json& r = d["rule"];
    auto number = [&](const char* k, double lo, double hi) {
      return r.contains(k) && r[k].is_number() && r[k].get<double>() >= lo && r[k].get<double>() <= hi;
    };
    if (!r.is_object() || !number("confidence", 1e-12, 1) || !number("margin", 0, 1e300) ||
        !number("tolerance", 0, 1e300) || !r.contains("rounds") || !r["rounds"].is_number_integer() ||
        r["rounds"].get<std::int64_t>() < 1)
      return false;
  }
  if (d.contains("comparisons")) {
    if (!d["comparisons"].is_array()) return false;
    for (const json& c : d["comparisons"]) {
      if (!c.is_object() || !c.contains("ratio") || !c["ratio"].is_object()) return false;
      for (const char* k : {"rounds", "median", "lo", "hi", "coverage"})
        if (!c["ratio"].contains(k)) return false;
    }
  }
  return true;
}

}  // namespace bw::decide
