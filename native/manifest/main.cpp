// bandwall-manifest: every word the front end offers, from the native tables where each is defined
// once, as one JSON document: the kernels (STREAM's table, iso3dfd, peak) with the instruction-set
// variants built into each, the placement and binding policies with their argument's type, the
// copy engines with what each takes, the instruction sets (known, offered by this CPU) and the
// CPU-list grammar. The front end builds its choices and help from it (python/bandwall/core/manifest.py).
#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/cpulist.h"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/isa.hpp"
#include "common/policies.hpp"
#include "common/record.hpp"
#include "engine/engine.hpp"
#include "iso3dfd/rows.hpp"
#include "peak/fma.hpp"
#include "stream/kernels.hpp"
#include "stream/record.hpp"

namespace {

constexpr int kVersion = 1;

template <class Variants>
bw::json names(const Variants& variants) {
  bw::json out = bw::json::array();
  for (const auto* v : variants) out.push_back(v->isa);
  return out;
}

bw::json kernels() {
  const bw::json stream_isas = names(bw::stream::variants());
  return {
      {"stream", {{"executable", "bandwall-stream"}, {"isa_built", stream_isas}, {"rows", bw::stream::kernels_json()}}},
      {"pipeline", {{"executable", "bandwall-pipeline"}, {"isa_built", stream_isas}}},
      {"iso3dfd", {{"executable", "bandwall-iso3dfd"}, {"isa_built", names(bw::iso3dfd::row_dispatch().variants())}}},
      {"peak", {{"executable", "bandwall-peak"}, {"isa_built", names(bw::peak::variants())}}}};
}

bw::json isa() {
  bw::json choices = bw::json::array({"auto"});
  for (const std::string& n : bw::isa_names()) choices.push_back(n);
  return {{"names", bw::isa_names()}, {"choices", choices}, {"offered", bw::cpu_isas()}, {"help", bw::isa_syntax()}};
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
              {"cpu_lists", cpu_lists()}});
    return 0;
  });
}
