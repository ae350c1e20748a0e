// bandwall-manifest: every word the front end offers, from the native tables where each is defined
// once, as one JSON document: the measurements (STREAM's table with its store kinds, the pipeline
// with its strategies, iso3dfd, peak), each with its facts (tool, unit, figure of merit, arrays,
// helper CPUs: common/driver.hpp) and the instruction-set variants built into it; the page sizes; the
// decision rule (common/decide.hpp); the placement and binding policies with their argument's type, the
// copy engines with what each takes, the instruction sets (known, offered by this CPU) and the
// CPU-list grammar. The front end builds its choices and help from it (python/bandwall/core/manifest.py).
#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/choice_cache.hpp"
#include "common/cpulist.h"
#include "common/decide.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/isa.hpp"
#include "common/isa_choice.hpp"
#include "common/machine.hpp"
#include "common/policies.hpp"
#include "common/record.hpp"
#include "common/words.hpp"
#include "common/driver.hpp"
#include "common/placement.hpp"
#include "engine/engine.hpp"
#include "engine/options.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd/measurement.hpp"
#include "iso3dfd/timemodel.hpp"
#include "iso3dfd/words.hpp"
#include "mpi/words.hpp"
#include "peak/measurement.hpp"
#include "sensitivity/bandit.hpp"
#include "stream/kernels.hpp"
#include "stream/measurement.hpp"
#include "stream/record.hpp"

namespace {

constexpr int kVersion = 1;

template <class Variants>
bw::json names(const Variants& variants) {
  bw::json out = bw::json::array();
  for (const auto* v : variants) out.push_back(v->isa);
  return out;
}

// A measurement's facts (common/driver.hpp) with the variants built into its executable.
bw::json measurement(bw::driver::Facts f, const bw::json& isas) {
  bw::json j = f.to_json();
  j["isa_built"] = isas;
  return j;
}

bw::json kernels() {
  const bw::json stream_isas = names(bw::stream::variants());
  bw::driver::Facts stream = bw::stream::facts_of(bw::stream::find_kernel("triad"));
  stream.arrays.clear();  // per kernel: each row's "arrays"
  bw::json rows = bw::stream::kernels_json();
  for (bw::json& r : rows) {
    bw::json arrays = bw::json::array();
    for (const auto& a : bw::stream::array_roles(bw::stream::find_kernel(r["name"].get<std::string>())))
      arrays.push_back({{"name", a.name}, {"read", a.read}, {"written", a.written}});
    r["arrays"] = arrays;
  }
  bw::json stores = bw::json::array();
  for (const auto& k : bw::stream::store_kinds()) stores.push_back({{"name", k.name}, {"nt", k.nt}, {"help", k.help}});
  bw::json strategies = bw::json::array();
  for (const auto& r : bw::pipeline::strategies())
    strategies.push_back({{"name", r.name}, {"cpu_streams_first_input", r.cpu_streams_first_input}, {"help", r.help}});
  bw::driver::Facts pipeline = stream;
  pipeline.executable = "bandwall-pipeline", pipeline.helper_cpus = true;
  bw::json s = measurement(stream, stream_isas);
  s["rows"] = rows;
  s["stores"] = stores;
  bw::json p = measurement(pipeline, stream_isas);
  p["strategies"] = strategies;
  bw::json iso = measurement(bw::iso3dfd::facts(), names(bw::iso3dfd::row_dispatch().variants()));
  // The register shapes of each variant (--row-shape), the default (the first) first.
  bw::json shapes = bw::json::object();
  for (const auto* v : bw::iso3dfd::row_dispatch().variants()) {
    bw::json list = bw::json::array();
    for (const auto& sh : v->shape_list())
      list.push_back({{"name", bw::iso3dfd::shape_name(sh)},
                      {"planes", sh.planes},
                      {"vectors", sh.vectors},
                      {"split", sh.split},
                      {"ring", sh.ring},
                      {"x_loads", sh.x_loads}});
    shapes[v->isa] = list;
  }
  iso["row_shapes"] = shapes;
  iso["time_block"] = bw::iso3dfd::time_block_grammar();
  // The words of its options, and how a depth of sweep is settled (raced: by a race under the rule).
  bw::json hows = bw::json::array();
  for (const auto& h : bw::iso3dfd::depth_hows())
    hows.push_back({{"name", h.name}, {"raced", h.raced}, {"help", h.help}});
  iso["words"] = {{"init", bw::words_json(bw::iso3dfd::inits())},
                  {"schedule", bw::words_json(bw::iso3dfd::schedules())},
                  {"sweep_team", bw::words_json(bw::iso3dfd::sweep_teams())},
                  {"tile_cache", bw::words_json(bw::iso3dfd::tile_caches())},
                  {"kernel", bw::words_json(bw::iso3dfd::kernel_choices())},
                  {"depth_how", hows}};
  // The stencil: the radii it takes, those the vector kernels are compiled for, and what a point
  // and step costs at each (flops, compulsory bytes, halo, space order).
  namespace iso3 = bw::iso3dfd;
  bw::json per_radius = bw::json::object();
  for (int r = 1; r <= iso3::kMaxRadius; ++r)
    per_radius[std::to_string(r)] = {{"space_order", 2 * r},
                                     {"halo", r},
                                     {"flops_per_point", iso3::flops_per_point(r)},
                                     {"bytes_per_point", iso3::kBytesPerPoint},
                                     {"min_dimension", iso3::min_dim(r)},
                                     {"templated", iso3::kernel_radius_index(r) >= 0}};
  iso["stencil"] = {{"radius_default", iso3::kSeedRadius},
                    {"radius_min", 1},
                    {"radius_max", iso3::kMaxRadius},
                    {"kernel_radii", iso3::kKernelRadii},
                    {"radii", per_radius}};
  return {{"stream", s},
          {"pipeline", p},
          {"iso3dfd", iso},
          {"peak", measurement(bw::peak::PeakMeasurement(0.1, 1).facts(), names(bw::peak::variants()))}};
}

// The MPI tools' words: the rank bindings (each tool's default beside them) and the scalings.
bw::json mpi_words() {
  bw::json defaults = bw::json::object();
  for (const auto& d : bw::mpi::rank_binding_defaults()) defaults[d.tool] = d.binding;
  return {{"rank_bindings", bw::words_json(bw::mpi::rank_bindings())},
          {"rank_binding_defaults", defaults},
          {"scalings", bw::words_json(bw::mpi::scalings())}};
}

// The co-runners of bandwall sensitivity: the bandit's patterns (the default first; bandit: a dose
// of bandwidth, not a co-runner for calibration).
bw::json sensitivity_words() {
  bw::json rows = bw::json::array();
  for (const auto& p : bw::sensitivity::patterns())
    rows.push_back({{"name", p.name}, {"bandit", p.bandit}, {"help", p.help}});
  return {{"bandit_patterns", rows}, {"bandit_pattern_default", bw::sensitivity::patterns().front().name}};
}

// The decision rule, with the front end's named thresholds beside it (decision.json).
bw::json decision() {
  bw::json d = bw::decide::rule().to_json();
  d["thresholds"] = bw::decide::rule().thresholds;
  return d;
}

bw::json pages() {
  bw::json out = bw::json::array();
  for (const auto& k : bw::page_kinds()) out.push_back({{"name", k.name}, {"help", k.help}});
  return out;
}

bw::json isa() {
  bw::json choices = bw::json::array({"auto", "measure"});
  for (const std::string& n : bw::isa_names()) choices.push_back(n);
  std::string why;
  const std::string fallback = bw::model_default(bw::cpu_isas(), bw::this_microarch(), &why);
  const bw::json isa = bw::isa_json();
  return {{"names", bw::isa_names()},           {"choices", choices},
          {"offered", bw::cpu_isas()},          {"cpu_offered", isa["cpu_offered"]},
          {"ceiling", isa["ceiling"]},          {"model_default", {{"isa", fallback}, {"why", why}}},
          {"microarch", bw::microarch_json()},  {"microarchs", bw::microarch_names()},
          {"cache_path", bw::isa_cache_path()}, {"help", bw::isa_syntax()}};
}

bw::json cpu_lists() {
  std::size_t n = 0;
  const bw_cpulist_form* forms = bw_cpulist_forms(&n);
  bw::json rows = bw::json::array();
  for (std::size_t i = 0; i < n; ++i)
    rows.push_back({{"name", forms[i].name},
                    {"syntax", forms[i].syntax},
                    {"example", forms[i].example},
                    {"meaning", forms[i].meaning},
                    {"needs_topology", forms[i].needs_topology != 0}});
  bw::json domains = bw::json::array();
  for (const char* const* d = bw_cpulist_domains(); *d; d += 2) domains.push_back({{"letter", d[0]}, {"what", d[1]}});
  return {{"forms", rows}, {"domains", domains}, {"help", bw::cpus_help()}};
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-manifest", [&] {
    CLI::App app{"bandwall-manifest: the kernels, policies, engines, instruction sets and CPU-list grammar (JSON)"};
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    bw::emit({{"manifest_version", kVersion},
              {"kernels", kernels()},
              {"policies", bw::policies_json()},
              {"engines", bw::engine::backends_json()},
              {"isa", isa()},
              {"cpu_lists", cpu_lists()},
              {"pages", pages()},
              {"mpi", mpi_words()},
              {"sensitivity", sensitivity_words()},
              {"decision", decision()},
              {"caches",
               {{"isa_choices", bw::isa_cache_path()},
                {"time_blocks", bw::choice_cache_path("time-blocks")},
                {"iso3dfd_shapes", bw::choice_cache_path("iso3dfd-shapes")},
                {"knob_races", bw::choice_cache_path("knob-races")}}}});
    return 0;
  });
}
