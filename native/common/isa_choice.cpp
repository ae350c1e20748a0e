#include "common/isa_choice.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/topology.hpp"

namespace bw {

extern const char* const kIsaChoicesJson;  // isa_choices.json, compiled in (isa_choices_data.cpp.in)

namespace {

constexpr const char* kAbout =
    "Instruction-set variants bandwall measured on this machine, per kernel and size class (docs: guides/variants): "
    "state confirmed, faster than the default beyond noise in two races in a row; unconfirmed, a first race's "
    "winner the next run races against the default alone; default, the default stood. Delete this file, or run "
    "with --isa measure, to measure again.";

json figure_map(const json& figures) { return figures.is_object() ? figures : json::object(); }

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The candidate with the highest figure among those the figures name, or "".
std::string fastest(const json& figures, const std::vector<std::string>& candidates) {
  std::string best;
  double top = 0;
  for (const std::string& c : candidates) {
    if (!figures.contains(c) || !figures[c].is_number()) continue;
    const double v = figures[c].get<double>();
    if (best.empty() || v > top) best = c, top = v;
  }
  return best;
}

// kernel@size_class, and @max=<ceiling> under a dispatch ceiling: a capped run and an uncapped one
// choose among other candidates, so neither replaces the other's choice. The key is this file's alone:
// each entry also says its kernel, size class and ceiling, which is what readers use.
std::string cache_key(const VariantRequest& r) {
  const std::string ceiling = isa_ceiling();
  return r.key + "@" + (r.size_class.empty() ? "any" : r.size_class) + (ceiling.empty() ? "" : "@max=" + ceiling);
}

// The cached choice of a request, when it was measured on the same CPU among the same candidates.
const json* cached_entry(const json& cache, const VariantRequest& r, const ChoiceContext& m,
                         const std::vector<std::string>& candidates) {
  const json* found = cached_choice(cache, cache_key(r));
  if (!found) return nullptr;
  const json& e = *found;
  if (e.value("candidates", json()) != json(candidates) || text_field(e, "cpu") != m.cpu_key ||
      !has(candidates, text_field(e, "isa")))
    return nullptr;
  return &e;
}

// What a cached entry holds (kCacheStates): a variant faster beyond noise twice in a row (or once,
// written before the confirming race), a first race's winner that the next race must confirm, or
// the default settled (within noise, or faster); "" for an entry that is none of them.
std::string cached_state(const json& e) {
  const std::string state = text_field(e, "state", "");
  if (state.empty()) return flag_field(e, "decisive") ? "confirmed" : "";
  return state == "confirmed" || state == "unconfirmed" || state == "default" ? state : "";
}

json medians(const std::vector<std::string>& names, std::vector<std::vector<double>> rates) {
  json out = json::object();
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto& v = rates[i];
    std::sort(v.begin(), v.end());
    out[names[i]] = v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  return out;
}

double fp_per_cycle(const std::string& isa, const Microarch& m) {
  const int bits = variant_bits(isa);
  const Ports& p = bits > 256 ? m.p512 : m.p256;
  return p.known() ? bits / 32.0 * p.fma : 0.0;
}

}  // namespace

json IsaChoice::to_json(const std::string& key) const {
  json j = {{"isa", isa}, {"how", how}, {"why", why}};
  if (!key.empty()) j["kernel"] = key;
  if (!size_class.empty()) j["size_class"] = size_class;
  if (!figures.empty()) j["figures"] = figures, j["unit"] = unit;
  if (!source.empty()) j["source"] = source;
  if (!decision.is_null()) j["decision"] = decision;
  if (const std::string c = isa_ceiling(); !c.empty()) j["ceiling"] = c;
  return j;
}

const json& isa_choice_table() {
  static const json table = [] {
    const char* path = std::getenv("BANDWALL_ISA_CHOICES");
    json t = path && *path ? read_json_file(path) : json::parse(kIsaChoicesJson, nullptr, false);
    if (!t.is_object() || !t.contains("rows") || !t["rows"].is_array())
      throw UsageError(std::string("BANDWALL_ISA_CHOICES '") + (path ? path : "") +
                       "' is not a table of measured choices (a JSON object with \"rows\")");
    return t;
  }();
  return table;
}

const json* table_row(const json& table, const std::string& microarch) {
  if (microarch.empty()) return nullptr;
  for (const json& row : table["rows"])
    if (row.value("microarch", "") == microarch) return &row;
  return nullptr;
}

const json* table_entry(const json& table, const std::string& microarch, const std::string& key, const char* field) {
  for (const json& row : table["rows"])
    if (!microarch.empty() && row.value("microarch", "") == microarch && row.contains(field) &&
        row[field].is_object() && row[field].contains(key))
      return &row[field][key];
  return nullptr;
}

std::string table_citation(const std::string& microarch, const std::string& what, const json& entry, const json* sub) {
  auto field = [&](const char* name, const char* fallback) {
    const std::string own = entry.value(name, std::string(fallback));
    return sub && sub->is_object() ? sub->value(name, own) : own;
  };
  return "the table of measured choices, " + microarch + ", " + what + " (" + field("measured", "undated") + ": " +
         field("command", "no command") + ")";
}

std::string isa_cache_path() { return choice_cache_path("isa-choices"); }

ChoiceContext ChoiceContext::here() {
  ChoiceContext c;
  c.table = &isa_choice_table();
  c.microarch = this_microarch();
  const CpuId id = cpuid();
  c.cpu_key = c.microarch ? std::string(c.microarch->name)
                          : id.vendor + "-" + std::to_string(id.family) + "-" + std::to_string(id.model);
  c.offered = cpu_isas();
  c.cache_path = isa_cache_path();
  return c;
}

std::string model_default(const std::vector<std::string>& candidates, const Microarch* m, std::string* why) {
  if (candidates.empty()) return "";
  std::string pick = candidates[0], text;
  if (!m) {
    text = "no machine model knows this CPU: the widest variant it runs";
  } else {
    double best = fp_per_cycle(pick, *m);
    for (const std::string& c : candidates)  // widest first: a narrower one only when strictly faster
      if (fp_per_cycle(c, *m) > best) pick = c, best = fp_per_cycle(c, *m);
    text = "the machine model of " + std::string(m->name) + ": " + pick + " executes the most lanes per cycle" +
           (pick == candidates[0] ? " (the widest, as no narrower variant does more)" : "");
  }
  if (why) *why = text;
  return pick;
}

IsaChoice choose_variant(const VariantRequest& r, const IsaMeasure& measure, const ChoiceContext& m) {
  IsaChoice c;
  c.unit = r.unit;
  c.size_class = r.size_class;
  std::vector<std::string> candidates;
  for (const std::string& b : r.built)
    if (has(m.offered, b)) candidates.push_back(b);
  if (r.requested != "auto" && r.requested != "measure") {
    if (has(candidates, r.requested))
      c.isa = r.requested, c.how = "forced", c.why = "--isa " + r.requested + " names it";
    return c;
  }
  if (candidates.empty()) return c;
  if (candidates.size() == 1) {
    c.isa = candidates[0], c.how = "only", c.why = "the only variant built in that this CPU runs";
    return c;
  }
  // The default: the table's entry for this micro-architecture (the fastest of its figures among
  // the candidates when this binary or CPU lacks the variant it names), else the model's prediction.
  const std::string microarch = m.microarch ? std::string(m.microarch->name) : "";
  std::string model_why;
  std::string fallback = model_default(candidates, m.microarch, &model_why);
  const json* e = m.table ? table_entry(*m.table, microarch, r.key) : nullptr;
  if (e) {
    std::string pick = e->value("isa", "");
    if (!has(candidates, pick)) pick = fastest(figure_map(e->value("figures", json::object())), candidates);
    if (!pick.empty()) {
      c.isa = pick, c.how = "table", c.figures = figure_map(e->value("figures", json::object()));
      c.unit = e->value("unit", r.unit);
      c.why = "the table of measured choices (isa_choices.json) for " + microarch;
      c.source = {{"microarch", microarch}};
      const json* row = table_row(*m.table, microarch);
      for (const char* f : {"command", "measured", "cpu"})  // the entry's own, else its row's
        if (e->contains(f))
          c.source[f] = (*e)[f];
        else if (row && row->contains(f))
          c.source[f] = (*row)[f];
      if (e->contains("note")) c.source["note"] = (*e)["note"];
      if (e->contains("decision") && decide::is_choice_record((*e)["decision"])) c.decision = (*e)["decision"];
      if (r.requested == "auto") return c;
      fallback = pick, model_why = c.why;
    }
  }
  const std::string unknown = !m.microarch ? "no machine model knows this CPU"
                              : e          ? "--isa measure"
                                           : "the table has no " + r.key + " entry for " + microarch;
  std::string challenger;  // a first race's winner, which this race confirms or not
  if (r.requested == "auto") {
    json cache = m.cache_path.empty() ? json(nullptr) : read_json_file(m.cache_path);
    const json* ce = cached_entry(cache, r, m, candidates);
    const std::string state = ce ? cached_state(*ce) : "";
    if (state == "confirmed" || (state == "default" && text_field(*ce, "isa") == fallback)) {
      c = {};
      c.isa = text_field(*ce, "isa"), c.how = "cached", c.figures = figure_map(ce->value("figures", json()));
      c.unit = text_field(*ce, "unit", r.unit), c.size_class = r.size_class;
      c.why = unknown +
              (state == "confirmed" ? "; faster beyond noise when measured on this machine before ("
                                    : "; the default stood when every variant was measured on this machine before (") +
              r.size_class + " data)";
      c.source = {{"file", m.cache_path}, {"measured", text_field(*ce, "measured")}, {"state", state}};
      const json decision = ce->value("decision", json());
      if (decide::is_choice_record(decision)) c.decision = decision;
      return c;
    }
    if (state == "unconfirmed" && text_field(*ce, "isa") != fallback) challenger = text_field(*ce, "isa");
    if (!measure) {
      c = {};
      c.isa = fallback, c.how = "model", c.why = unknown + "; not timed at start: " + model_why;
      c.unit = r.unit, c.size_class = r.size_class;
      return c;
    }
  }
  if (!measure) throw UsageError("--isa measure: this kernel cannot time its variants here");
  // Every variant, or the default against a first race's winner alone.
  const std::vector<std::string> raced =
      challenger.empty() ? candidates : std::vector<std::string>{fallback, challenger};
  const auto rates =
      decide::interleaved_rounds(raced.size(), decide::rule().rounds, [&](std::size_t i) { return measure(raced[i]); });
  const std::size_t def = static_cast<std::size_t>(std::find(raced.begin(), raced.end(), fallback) - raced.begin());
  const decide::Choice d = decide::choose_best(raced, rates, def, r.unit);
  c = {};
  c.isa = raced[d.chosen], c.how = "measured", c.unit = r.unit, c.size_class = r.size_class;
  c.figures = medians(raced, rates);
  c.decision = d.record;
  c.decision["default_why"] = model_why;
  c.why =
      unknown +
      (challenger.empty() ? "; every variant timed now on the run's own data ("
                          : "; the default and " + challenger +
                                " (faster in the race before, not yet confirmed) timed now on the run's own data (") +
      r.size_class + "): " + d.why;
  if (!m.cache_path.empty()) {
    // Kept: a winner faster beyond noise in two races in a row (among several variants one passes the
    // rule by chance more often than the rule's 10%), a first winner as unconfirmed, else the default.
    const bool won = d.decisive && c.isa != fallback;
    const std::string state = !won ? "default" : c.isa == challenger ? "confirmed" : "unconfirmed";
    const bool stored = store_choice(m.cache_path, kAbout, cache_key(r),
                                     {{"isa", won ? c.isa : fallback},
                                      {"kernel", r.key},
                                      {"ceiling", isa_ceiling()},
                                      {"decisive", won},
                                      {"state", state},
                                      {"figures", c.figures},
                                      {"unit", r.unit},
                                      {"candidates", candidates},
                                      {"cpu", m.cpu_key},
                                      {"size_class", r.size_class},
                                      {"decision", c.decision},
                                      {"measured", today()}});
    c.source = stored ? json{{"file", m.cache_path}, {"measured", today()}, {"cached", true}, {"state", state}}
                      : json{{"cached", false}, {"why", "the cache file could not be written: " + m.cache_path}};
  }
  return c;
}

}  // namespace bw
