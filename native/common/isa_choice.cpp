#include "common/isa_choice.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/topology.hpp"

namespace bw {

extern const char* const kIsaChoicesJson;  // isa_choices.json, compiled in (isa_choices_data.cpp.in)

namespace {

// Rounds of the short measurement, in alternated order (the median of each variant's rounds).
constexpr int kRounds = 3;

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str(), nullptr, false);  // discarded (is_discarded) when not JSON
}

json figure_map(const json& figures) { return figures.is_object() ? figures : json::object(); }

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

// The cached choice of key, when it was measured among the same candidates.
const json* cached_entry(const json& cache, const std::string& key, const std::vector<std::string>& candidates) {
  if (!cache.is_object() || !cache.contains("choices") || !cache["choices"].contains(key)) return nullptr;
  const json& e = cache["choices"][key];
  if (!e.contains("candidates") || e["candidates"] != json(candidates)) return nullptr;
  return &e;
}

void write_cache(const std::string& path, const std::string& key, const json& entry) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  json cache = read_json_file(path);
  if (!cache.is_object()) cache = json::object();
  const CpuId id = cpuid();
  cache["cpu"] = {{"vendor", id.vendor}, {"family", id.family}, {"model", id.model}};
  cache["choices"][key] = entry;
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;  // an unwritable cache only costs a measurement next time
    out << cache.dump(1) << "\n";
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

// Times every candidate kRounds times in alternated order; the median of each.
json measure_all(const IsaMeasure& measure, const std::vector<std::string>& candidates) {
  std::map<std::string, std::vector<double>> runs;
  for (int r = 0; r < kRounds; ++r)
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const std::string& c = candidates[r % 2 == 0 ? i : candidates.size() - 1 - i];
      runs[c].push_back(measure(c));
    }
  json figures = json::object();
  for (auto& [c, v] : runs) {
    std::sort(v.begin(), v.end());
    figures[c] = v[v.size() / 2];
  }
  return figures;
}

}  // namespace

json IsaChoice::to_json(const std::string& key) const {
  json j = {{"isa", isa}, {"how", how}, {"why", why}};
  if (!key.empty()) j["kernel"] = key;
  if (!figures.empty()) j["figures"] = figures, j["unit"] = unit;
  if (!source.empty()) j["source"] = source;
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

const json* table_entry(const json& table, const std::string& microarch, const std::string& key) {
  if (microarch.empty()) return nullptr;
  for (const json& row : table["rows"])
    if (row.value("microarch", "") == microarch && row.contains("kernels") && row["kernels"].contains(key))
      return &row["kernels"][key];
  return nullptr;
}

std::string isa_cache_path() {
  std::string dir;
  if (const char* d = std::getenv("BANDWALL_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::string(x) + "/bandwall";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::string(h) + "/.cache/bandwall";
  else
    return "";
  return dir + "/isa-choices-" + Topology::instance().digest() + ".json";
}

IsaChoice choose_variant(const std::string& requested, const std::string& key, const std::vector<std::string>& built,
                         const IsaMeasure& measure, const std::string& unit, const json& table,
                         const std::string& microarch, const std::vector<std::string>& offered,
                         const std::string& cache_path) {
  IsaChoice c;
  c.unit = unit;
  std::vector<std::string> candidates;
  for (const std::string& b : built)
    if (std::find(offered.begin(), offered.end(), b) != offered.end()) candidates.push_back(b);
  if (requested != "auto") {
    if (std::find(candidates.begin(), candidates.end(), requested) != candidates.end())
      c = {requested, "forced", "--isa " + requested + " names it", json::object(), unit, json::object()};
    return c;
  }
  if (candidates.empty()) return c;
  if (candidates.size() == 1) {
    c.isa = candidates[0], c.how = "only", c.why = "the only variant built in that this CPU runs";
    return c;
  }
  // The table's row for this micro-architecture: its choice, or the fastest by its figures among
  // the candidates when this binary or CPU lacks the variant it names.
  if (const json* e = table_entry(table, microarch, key)) {
    const json figures = figure_map((*e).value("figures", json::object()));
    std::string pick = e->value("isa", "");
    if (std::find(candidates.begin(), candidates.end(), pick) == candidates.end()) pick = fastest(figures, candidates);
    if (!pick.empty()) {
      const json* row = nullptr;
      for (const json& r : table["rows"])
        if (r.value("microarch", "") == microarch) row = &r;
      c.isa = pick, c.how = "table", c.figures = figures, c.unit = e->value("unit", unit);
      c.why = "fastest on " + microarch + " in the table of measured choices (isa_choices.json)";
      c.source = {{"microarch", microarch}};
      for (const char* f : {"command", "measured", "cpu"})  // the entry's own, else its row's
        if (e->contains(f))
          c.source[f] = (*e)[f];
        else if (row && row->contains(f))
          c.source[f] = (*row)[f];
      if (e->contains("note")) c.source["note"] = (*e)["note"];
      return c;
    }
  }
  const std::string unknown =
      microarch.empty() ? "no machine model knows this CPU" : "the table has no " + key + " entry for " + microarch;
  json cache = cache_path.empty() ? json(nullptr) : read_json_file(cache_path);
  if (const json* e = cached_entry(cache, key, candidates)) {
    const std::string pick = fastest(figure_map(e->value("figures", json::object())), candidates);
    if (!pick.empty()) {
      c.isa = pick, c.how = "cached", c.figures = (*e)["figures"], c.unit = e->value("unit", unit);
      c.why = unknown + "; measured on this machine before";
      c.source = {{"file", cache_path}, {"measured", e->value("measured", "")}};
      return c;
    }
  }
  if (!measure) {
    c.isa = candidates[0], c.how = "capability";
    c.why = unknown + ", and this kernel is not timed at start: the widest variant this CPU runs";
    return c;
  }
  c.figures = measure_all(measure, candidates);
  c.isa = fastest(c.figures, candidates);
  if (c.isa.empty()) c.isa = candidates[0];
  c.how = "measured";
  c.why = unknown + "; each variant timed now (median of " + std::to_string(kRounds) + " alternated rounds)";
  if (!cache_path.empty()) {
    write_cache(cache_path, key,
                {{"figures", c.figures}, {"unit", unit}, {"candidates", candidates}, {"measured", today()}});
    c.source = {{"file", cache_path}, {"measured", today()}};
  }
  return c;
}

IsaChoice choose_variant(const std::string& requested, const std::string& key, const std::vector<std::string>& built,
                         const IsaMeasure& measure, const std::string& unit) {
  const Microarch* m = this_microarch();
  return choose_variant(requested, key, built, measure, unit, isa_choice_table(), m ? std::string(m->name) : "",
                        cpu_isas(), requested == "auto" ? isa_cache_path() : "");
}

}  // namespace bw
