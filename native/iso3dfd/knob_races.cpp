// The row kernel's shape and prefetch distance on a CPU whose row of the table of measured choices
// has none for the radius and variant (nor bandwall tune kept one): raced on the run's own steps
// against the choices the table's rows made for the variant (common/knob_race.hpp), and kept.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/isa_choice.hpp"
#include "common/knob_race.hpp"
#include "iso3dfd/measurement.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

namespace {

// The least time a trial of the race runs: shorter ones measure the team's start and end.
constexpr double kKnobTrialSeconds = 0.003;

// What any row of the table chose for variant isa at any radius (every key of the row kernel, key
// and its ".rR" siblings): the `value` of each entry's field. A shape that won on some CPU at some
// radius is a candidate at every radius: which one pays moves with the CPU's L1 as with the radius.
std::vector<json> chosen_anywhere(const std::string& key, const std::string& isa, const char* field,
                                  const char* value) {
  const std::string stem = key.substr(0, key.find(".r"));  // iso3dfd.rows
  std::vector<json> out;
  for (const json& row : isa_choice_table()["rows"]) {
    if (!row.is_object() || !row.contains("kernels") || !row["kernels"].is_object()) continue;
    for (const auto& [k, e] : row["kernels"].items()) {
      if (k != stem && k.rfind(stem + ".r", 0) != 0) continue;
      if (!e.is_object() || !e.contains(field) || !e[field].is_object() || !e[field].contains(isa)) continue;
      const json& sub = e[field][isa];
      if (sub.is_object() && sub.contains(value)) out.push_back(sub[value]);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> Measurement::shape_candidates() const {
  const int r = o_.grid.radius;
  const RowVariant* v = find_row_variant(kernel_isa());
  if (!v) return {};
  if (!o_.shape_candidates.empty()) {  // --row-shape measure:A,B,...: those, by their full names
    std::vector<std::string> named;
    for (const std::string& n : o_.shape_candidates)
      if (const RowShape* shape = find_shape(*v, n, r)) named.push_back(shape_name(*shape));
    return named;
  }
  std::vector<std::string> out{shape_name(v->default_shape(r))};
  std::set<std::string> others;
  for (const json& s : chosen_anywhere(variant_key(), v->isa, "shapes", "shape"))
    if (const RowShape* shape = s.is_string() ? find_shape(*v, s.get<std::string>(), r) : nullptr)
      others.insert(shape_name(*shape));
  for (const std::string& s : others)
    if (s != out[0]) out.push_back(s);
  return out;
}

std::vector<std::string> Measurement::prefetch_candidates() const {
  const std::string def = prefetch_name(default_prefetch(o_.grid.radius));
  std::set<std::string> others;
  for (const json& p : chosen_anywhere(variant_key(), kernel_isa(), "prefetch", "prefetch"))
    if (const std::optional<Prefetch> q = prefetch_of(p)) others.insert(prefetch_name(*q));
  std::vector<std::string> out{def};
  for (const std::string& p : others)
    if (p != def) out.push_back(p);
  return out;
}

std::vector<std::string> Measurement::other_variant_candidates(const std::string& where) {
  // A variant chosen beyond noise at its compiled shape (measured now, or cached; a cached default
  // that stood is within noise), or by the model:
  // another variant with another shape may do better. Within noise the variants' race left the
  // default, and its shapes alone race (fewer candidates: a race that fits more runs).
  const json choice = row_dispatch().choice_json();
  const std::string chosen = kernel_isa(), how = text_field(choice, "how");
  const bool decisive =
      choice.contains("decision") && choice["decision"].is_object() && flag_field(choice["decision"], "decisive");
  const bool confirmed = how == "cached" && choice.contains("source") && choice["source"].is_object() &&
                         text_field(choice["source"], "state") == "confirmed";
  if (how != "model" && !confirmed && !(how == "measured" && decisive)) return {};
  const int r = o_.grid.radius;
  const json file = read_json_file(choice_cache_path("knob-races"));
  const std::string cpu = ChoiceContext::here().cpu_key;
  std::vector<std::string> out;
  for (const RowVariant* w : row_variants()) {
    if (w->isa == chosen || w->lanes <= 1 || !find_row_variant(w->isa)) continue;
    row_dispatch().use(w->isa);
    const bool vector_path = radius_path(o_.grid) == "templated";
    row_dispatch().use(chosen);
    if (!vector_path) continue;
    // a settled race of its own shapes here, else the shape other than its compiled default that the
    // table's rows chose most often for it at the radius, else at any radius (the first by name on a tie)
    std::string shape;
    const json* e = cached_choice(file, variant_key() + " " + w->isa + " shape" + where);
    if (e && flag_field(*e, "settled") && text_field(*e, "cpu") == cpu) shape = text_field(*e, "chosen");
    if (shape.find(' ') != std::string::npos) shape.clear();
    const std::string compiled = shape_name(w->default_shape(r));
    auto most_chosen = [&](const std::vector<json>& names) {
      std::map<std::string, int> votes;
      for (const json& n : names)
        if (n.is_string() && find_shape(*w, n.get<std::string>(), r) &&
            shape_name(*find_shape(*w, n.get<std::string>(), r)) != compiled)
          ++votes[shape_name(*find_shape(*w, n.get<std::string>(), r))];
      std::string best;
      for (const auto& [name, n] : votes)
        if (best.empty() || n > votes[best]) best = name;
      return best;
    };
    if (shape.empty()) {
      std::vector<json> here;
      for (const json& row : isa_choice_table()["rows"]) {
        const json* k =
            row.is_object() ? table_entry(isa_choice_table(), row.value("microarch", ""), variant_key()) : nullptr;
        if (k && k->contains("shapes") && (*k)["shapes"].is_object() && (*k)["shapes"].contains(w->isa) &&
            (*k)["shapes"][w->isa].is_object())
          here.push_back((*k)["shapes"][w->isa].value("shape", json()));
      }
      shape = most_chosen(here);
    }
    if (shape.empty()) shape = most_chosen(chosen_anywhere(variant_key(), w->isa, "shapes", "shape"));
    const RowShape* s = shape.empty() ? nullptr : find_shape(*w, shape, r);
    // its compiled default was timed by the variant's race already
    if (s && s != &w->default_shape(r)) out.push_back(std::string(w->isa) + " " + shape_name(*s));
  }
  return out;
}

void Measurement::race_knobs(int threads) {
  if (o_.kernel != KernelChoice::Optimised || o_.iterations <= 0) return;
  const bool shape_open = o_.shape == "measure" || (o_.shape == "default" && o_.shape_how == "default");
  bool prefetch_open =
      o_.prefetch_request == "measure" || (o_.prefetch_request == "auto" && o_.prefetch_how == "default");
  if (!shape_open && !prefetch_open) return;
  auto none = [](const std::string& why) { return json{{"how", "default"}, {"why", why}}; };
  std::string skip;
  if (radius_path(o_.grid) != "templated")
    skip = "the generic loops run this radius: they have one shape and do not prefetch";
  else if (o_.thread_options.automatic())
    skip = "--threads auto: the threads are chosen step by step, so nothing is raced before";
  if (!skip.empty()) {
    if (shape_open) o_.shape_race = none(skip);
    if (prefetch_open) o_.prefetch_race = none(skip);
    return;
  }
  const std::string isa = kernel_isa(), cpu = ChoiceContext::here().cpu_key;
  const std::string cache = choice_cache_path("knob-races");
  const std::string where = ", " + size_class_ + " data, " + std::to_string(threads) + " threads";
  // Half the run's steps at most. The first, asked for when a race is due, warms up (the first step
  // after the first touch runs slower) and sizes the trials: each runs the steps of at least
  // kKnobTrialSeconds by the warm-up's time. The race's steps advance the run's wavefield and count
  // among its steps.
  const int budget = o_.iterations / 2;
  int per_trial = 0;  // 0: not warmed up yet
  auto trials_left = [&] {
    // no warm-up for a budget that cannot hold the smallest race (two candidates a step each)
    if (per_trial == 0 && budget - knob_steps_ - 1 >= 2 * decide::rule().rounds) {
      const double t0 = omp_get_wtime();
      run(f_, o_.grid, o_.blocks, o_.schedule, threads, 1, c_);
      ++knob_steps_;
      per_trial = std::clamp(static_cast<int>(std::ceil(kKnobTrialSeconds / (omp_get_wtime() - t0))), 1, budget);
    }
    return per_trial ? (budget - knob_steps_) / per_trial : 0;
  };
  auto trial_rate = [&] {
    const double t0 = omp_get_wtime();
    run(f_, o_.grid, o_.blocks, o_.schedule, threads, per_trial, c_);
    knob_steps_ += per_trial;
    return static_cast<double>(o_.grid.interior()) * per_trial / (omp_get_wtime() - t0) / 1e6;
  };
  if (shape_open) {
    // The variant's shapes, and where the variant was chosen by its speed at its compiled shape, one
    // shape of each other vector variant ("avx512 2x4"): a variant's race never timed its other shapes.
    std::vector<std::string> candidates = shape_candidates();
    const std::vector<std::string> others =
        o_.shape_candidates.empty() ? other_variant_candidates(where) : std::vector<std::string>{};
    candidates.insert(candidates.end(), others.begin(), others.end());
    const std::string with = others.empty() ? "" : " and other variants'";
    const KnobRace r{"register shape",
                     variant_key() + " " + isa + with + " shape" + where,
                     candidates,
                     cpu,
                     cache,
                     o_.shape == "measure",
                     trials_left};
    auto pick = [&](const std::string& name) {
      const std::size_t gap = name.find(' ');
      row_dispatch().use(gap == std::string::npos ? isa : name.substr(0, gap));
      select_shape(gap == std::string::npos ? name : name.substr(gap + 1));
      choose_blocks_for_variant(threads, false);
    };
    const KnobOutcome out = race_knob(r, [&](const std::string& name) {
      pick(name);
      return trial_rate();
    });
    pick(out.chosen);
    o_.shape_race = out.record;
    if (out.how != "default") {
      o_.shape_how = out.how;
      o_.shape_from =
          (out.how == "kept" ? "an earlier run's race on this machine among " : "a race on this run's data among ") +
          std::to_string(r.candidates.size()) + " shapes (" + cache + ")";
    }
    if (const std::size_t gap = out.chosen.find(' '); gap != std::string::npos) {
      // another variant won with its shape: it runs, the record says it replaced the one chosen
      const std::string other = out.chosen.substr(0, gap), shape = out.chosen.substr(gap + 1);
      row_dispatch().revise(other, "shape race",
                            "the race of register shapes on the run's steps (" + out.how + ") found " + other +
                                " with " + shape + " faster than the " + isa + " variant's shapes: " + out.why,
                            out.record.value("race", json()));
      select_shape(shape);
      choose_swept_shape();
      choose_prefetch();
      choose_blocks_for_variant(threads, false);
      prefetch_open = o_.prefetch_request == "measure" ||
                      (o_.prefetch_request == "auto" && o_.prefetch_how == "default");  // of that variant
    }
  }
  const std::string run_isa = kernel_isa();
  if (prefetch_open && active_shape(o_.grid.radius).ring) {
    o_.prefetch_race = none("a ring shape prefetches along its column whatever the distance");
  } else if (prefetch_open) {
    const KnobRace r{"prefetch setting",
                     variant_key() + " " + run_isa + " prefetch at " + shape_name(active_shape(o_.grid.radius)) + where,
                     prefetch_candidates(),
                     cpu,
                     cache,
                     o_.prefetch_request == "measure",
                     trials_left};
    const KnobOutcome out = race_knob(r, [&](const std::string& setting) {
      select_prefetch(parse_prefetch(setting));
      return trial_rate();
    });
    o_.prefetch_race = out.record;
    if (out.how != "default") {
      select_prefetch(parse_prefetch(out.chosen));
      o_.prefetch_how = out.how;
      o_.prefetch_from =
          (out.how == "kept" ? "an earlier run's race on this machine among " : "a race on this run's data among ") +
          std::to_string(r.candidates.size()) + " prefetch settings (" + cache + ")";
    } else {
      select_prefetch(std::nullopt);
    }
  }
}

}  // namespace bw::iso3dfd
