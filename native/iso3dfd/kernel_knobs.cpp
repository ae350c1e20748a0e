// The row kernel's knobs a run takes by default, each in the same order: the option given, else what
// bandwall tune iso3dfd kept on this machine (the cache folder's iso3dfd-shapes file), else this CPU's
// entry of the table of measured choices for the radius and variant (common/isa_choices.json), else
// the compiled default or the model's choice; the record says which (how) and whence (from).
#include <optional>
#include <string>
#include <utility>

#include "common/choice_cache.hpp"
#include "common/isa_choice.hpp"
#include "iso3dfd/measurement.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd/timemodel.hpp"

namespace bw::iso3dfd {

namespace {

constexpr const char* kShapesCache = "iso3dfd-shapes";

// This CPU's entry of the table under key: its `field` for variant isa (row: an object, else nullptr),
// the words that cite it (cite), and the words that say there is none (missing, to append to the
// default's).
struct TableRow {
  const json* row = nullptr;
  std::string cite, missing;
};

// The row (*entry)[field][isa], or with `sub` the object (*entry)[field][isa][sub] (sweeps_by_llc's
// verdicts).
TableRow table_row(const std::string& key, const std::string& isa, const char* field, const std::string& what,
                   const std::string& cited_as, const char* sub = nullptr) {
  TableRow t;
  const Microarch* m = this_microarch();
  if (!m) {
    t.missing = " (no machine model knows this CPU)";
    return t;
  }
  const std::string cpu(m->name);
  t.missing = ": the table of measured choices has no " + what + " of " + isa + " for " + key + " on " + cpu;
  const json* e = table_entry(isa_choice_table(), cpu, key);
  if (!e || !e->contains(field) || !(*e)[field].contains(isa) || !(*e)[field][isa].is_object()) return t;
  t.row = &(*e)[field][isa];
  if (sub) t.row = t.row->contains(sub) && (*t.row)[sub].is_object() ? &(*t.row)[sub] : nullptr;
  if (!t.row) return t;
  t.cite = table_citation(cpu, key + ", " + isa + cited_as, *e, t.row);
  return t;
}

// What bandwall tune iso3dfd kept on this machine for key and variant isa (null: nothing), and the
// file it is kept in (empty: no cache folder).
std::pair<json, std::string> tuned(const std::string& key, const std::string& isa) {
  const std::string cache = choice_cache_path(kShapesCache);
  if (cache.empty()) return {json(), cache};
  const json file = read_json_file(cache);
  const json* e = cached_choice(file, key + " " + isa);
  return {e ? *e : json(), cache};
}

std::string tuned_words(const json& e, const std::string& cache, bool why) {
  return "bandwall tune iso3dfd on this machine (" + text_field(e, "measured", "undated") + ")" +
         (why ? ": " + text_field(e, "why", "no reason kept") : std::string()) + " (" + cache + ")";
}

}  // namespace

std::optional<Prefetch> prefetch_of(const json& value) {
  if (value.is_number_integer()) return parse_prefetch(std::to_string(value.get<long>()));
  return value.is_string() ? parse_prefetch(value.get<std::string>()) : std::nullopt;
}

void Measurement::choose_shape() {
  // --row-shape: its variant is the one run (options.cpp), so the shape is found in it.
  if (names_a_shape(o_.shape)) {
    select_shape(o_.shape);
    o_.shape_how = "given";
    o_.shape_from = "--row-shape " + o_.shape;
    return;
  }
  select_shape("default");
  const std::string isa = kernel_isa(), key = variant_key();
  o_.shape_how = "default";
  o_.shape_from = "the " + isa + " variant's default at radius " + std::to_string(o_.grid.radius);
  if (o_.shape != "default") {  // compiled, or measure (raced in race_knobs)
    o_.shape_from = "--row-shape " + o_.shape + ": " + o_.shape_from;
    return;
  }
  const RowVariant* v = find_row_variant(isa);
  auto usable = [&](const json& e) {
    const std::string name = text_field(e, "shape");
    return !name.empty() && v && find_shape(*v, name, o_.grid.radius) ? name : std::string();
  };
  if (const auto [e, cache] = tuned(key, isa); e.is_object() && !usable(e).empty()) {
    select_shape(usable(e));
    o_.shape_how = "tuned";
    o_.shape_from = tuned_words(e, cache, true);
    return;
  }
  const TableRow t = table_row(key, isa, "shapes", "shape", "");
  if (!t.row || usable(*t.row).empty()) {
    o_.shape_from += t.missing;
    return;
  }
  select_shape(usable(*t.row));
  o_.shape_how = "table";
  o_.shape_from = t.cite;
}

void Measurement::choose_swept_shape() {
  if (o_.swept_shape == "same") {
    select_swept_shape("same");
    o_.swept_shape_how = "same";
    o_.swept_shape_from = "--swept-shape same: the step shape";
    return;
  }
  if (o_.swept_shape != "auto") {
    select_swept_shape(o_.swept_shape);
    o_.swept_shape_how = "given";
    o_.swept_shape_from = "--swept-shape " + o_.swept_shape;
    return;
  }
  select_swept_shape("same");
  o_.swept_shape_how = "same";
  // A shape given for the steps runs the sweeps too, unless --swept-shape names another.
  if (names_a_shape(o_.shape)) {
    o_.swept_shape_from = "--row-shape " + o_.shape + " runs the sweeps too";
    return;
  }
  const std::string isa = kernel_isa(), key = variant_key();
  const RowVariant* v = find_row_variant(isa);
  auto usable = [&](const json& e, const char* field) {
    const std::string name = text_field(e, field);
    return !name.empty() && v && find_shape(*v, name, o_.grid.radius) ? name : std::string();
  };
  if (const auto [e, cache] = tuned(key, isa); e.is_object() && !usable(e, "swept_shape").empty()) {
    select_swept_shape(usable(e, "swept_shape"));
    o_.swept_shape_how = "tuned";
    o_.swept_shape_from = tuned_words(e, cache, false);
    return;
  }
  o_.swept_shape_from = "the step shape";
  const TableRow t = table_row(key, isa, "swept_shapes", "swept shape", " swept");
  if (!t.row || usable(*t.row, "shape").empty()) {
    o_.swept_shape_from += t.missing;
    return;
  }
  select_swept_shape(usable(*t.row, "shape"));
  o_.swept_shape_how = "table";
  o_.swept_shape_from = t.cite;
}

void Measurement::choose_prefetch() {
  if (o_.prefetch) {
    select_prefetch(o_.prefetch);
    o_.prefetch_how = "given";
    o_.prefetch_from = "--prefetch " + o_.prefetch_given;
    return;
  }
  select_prefetch(std::nullopt);
  const std::string isa = kernel_isa(), key = variant_key();
  o_.prefetch_how = "default";
  o_.prefetch_from = "the compiled default at radius " + std::to_string(o_.grid.radius);
  if (o_.prefetch_request != "auto") {  // compiled, or measure (raced in race_knobs)
    o_.prefetch_from = "--prefetch " + o_.prefetch_request + ": " + o_.prefetch_from;
    return;
  }
  // kept beside the shape
  if (const auto [e, cache] = tuned(key, isa); e.is_object() && prefetch_of(e.value("prefetch", json()))) {
    select_prefetch(prefetch_of(e.value("prefetch", json())));
    o_.prefetch_how = "tuned";
    o_.prefetch_from = tuned_words(e, cache, false);
    return;
  }
  const TableRow t = table_row(key, isa, "prefetch", "prefetch", "");
  if (!t.row || !prefetch_of(t.row->value("prefetch", json()))) {
    o_.prefetch_from += t.missing;
    return;
  }
  select_prefetch(prefetch_of(t.row->value("prefetch", json())));
  o_.prefetch_how = "table";
  o_.prefetch_from = t.cite;
}

std::pair<std::string, std::string> Measurement::table_team() const {
  const TableRow t = table_row(variant_key(), kernel_isa(), "teams", "team", " team");
  const std::string team = t.row ? text_field(*t.row, "team") : "";
  if (team != "slabs" && team != "shared") return {"", "the model's team" + t.missing};
  return {team, t.cite};
}

Measurement::TableSweeps Measurement::table_sweeps(int threads) const {
  TableSweeps s;
  // Where the team's CPUs were probed (measured, or forced by BANDWALL_LLC_PROBE), the entry the
  // bench raced with the same verdict, when the row has one (sweeps_by_llc: the model proposes
  // another team and depth on one last-level cache than on two, and the depth that pays moves with
  // them); else the entry raced with the team free.
  const char* verdict = llc_.ran ? (llc_.shared ? "one" : "two") : nullptr;
  TableRow t;
  if (verdict) {
    t = table_row(variant_key(), kernel_isa(), "sweeps_by_llc", "verdict on sweeps",
                  std::string(" sweeps with ") + verdict + " last-level cache" + (llc_.shared ? "" : "s"), verdict);
    s.by_llc = t.row != nullptr;
  }
  if (!t.row) t = table_row(variant_key(), kernel_isa(), "sweeps", "verdict on sweeps", " sweeps");
  const long depth = t.row ? whole_field(*t.row, "depth", 1, kMaxTimeBlock, 0) : 0;
  if (depth == 0) {
    s.from = t.missing;
    return s;
  }
  // A verdict holds for the team it was measured with: the cores share memory's bandwidth, so
  // whether sweeps pay moves with how many sweep, and a verdict for two threads says nothing
  // measured for one (on the Emerald Rapids guest at radius 5, where the bench measured sweeps
  // slower with two threads, two one-thread runs raced them on their own data: depth 4 1.075x in one,
  // within noise, 0.98x, in the other; bench/results/2026-12-05-emr-every-shape.md). An entry
  // without threads predates the field and holds for any team.
  const long measured = whole_field(*t.row, "threads", 1, 1L << 20, 0);
  if (measured != 0 && measured != threads) {
    s.from = ": " + t.cite + " measured sweeps with " + std::to_string(measured) + " thread(s), this run has " +
             std::to_string(threads);
    s.other_team = {{"depth", depth},
                    {"slower", flag_field(*t.row, "slower")},
                    {"threads", measured},
                    {"applies", false},
                    {"from", s.from.substr(2)}};
    return s;
  }
  s.depth = static_cast<int>(depth);
  s.slower = depth == 1 && flag_field(*t.row, "slower");
  s.proposed = static_cast<int>(whole_field(*t.row, "proposed", 1, kMaxTimeBlock, 0));
  if (depth == 1 && !s.slower) s.undecided = s.proposed > 1 ? s.proposed : 0;
  const std::string cache = depth > 1 ? text_field(*t.row, "tile_cache", "model") : "model";
  s.tile_cache = cache == "L2" || cache == "L3" ? cache : "";
  s.from = t.cite;
  const json decision = t.row->value("decision", json::object());
  s.why = decision.is_object() ? text_field(decision, "why", "") : "";
  // The second race (the first's winner alone against single steps) decides where there was one: a
  // first race's "faster beyond noise" alone reads as the opposite of the depth 1 it left.
  const json second = t.row->value("second_race", json::object());
  if (second.is_object() && second.contains("why"))
    s.why += (s.why.empty() ? std::string() : std::string("; then alone: ")) + text_field(second, "why", "");
  return s;
}

json Measurement::choose_tile_cache(int threads) {
  json out = {{"requested", o_.tile_cache}};
  std::string level = o_.tile_cache == "L2" || o_.tile_cache == "L3" ? o_.tile_cache : "";
  if (o_.tile_cache != "auto") {
    out.update({{"how", "user"}, {"from", "--tile-cache " + o_.tile_cache}});
  } else if (o_.kernel == KernelChoice::Optimised) {
    const TableSweeps t = table_sweeps(threads);
    level = t.tile_cache;
    out.update(
        {{"how", level.empty() ? "model" : "table"},
         {"from",
          !level.empty() ? t.from : "the model's" + (t.depth == 0 ? t.from : ": " + t.from + " names no cache")}});
  } else {
    out.update({{"how", "model"}, {"from", "the reference kernel runs step by step"}});
  }
  caches_.caches.tiles = level == "L2" ? TileCache::L2 : level == "L3" ? TileCache::L3 : TileCache::Model;
  out["used"] = level.empty() ? "model" : level;
  return out;
}

L2Share Measurement::l2_share() const {
  L2Share s;
  if (o_.kernel != KernelChoice::Optimised) return s;
  const TableRow t = table_row(variant_key(), kernel_isa(), "blocks", "L2 share", " blocks");
  const auto it = t.row ? t.row->find("l2_share") : json::const_iterator{};
  if (!t.row || it == t.row->end() || !it->is_number() || !(it->get<double>() > kL2ShareMin) ||
      !(it->get<double>() <= kL2ShareMax)) {
    s.from += t.missing;
    return s;
  }
  s.share = it->get<double>();
  s.how = "table";
  s.from = t.cite;
  return s;
}

}  // namespace bw::iso3dfd
