// bandwall-topo: the machine (or a synthetic/XML one) as one JSON record; with --order, the CPUs a
// binding policy picks; with --list-policies, the placement and binding tables for the front end;
// with --llc-probe, whether two CPUs share a last-level cache by a cache line's measured round trip.
#include <CLI/CLI.hpp>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/policies.hpp"
#include "common/isa.hpp"
#include "common/llc_probe.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "engine/engine.hpp"

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-topo", [&] {
    CLI::App app{"bandwall-topo: machine topology as a JSON record"};
    std::string source, order, cpus;
    std::string probe;
    int threads = 0, samples = 3;
    bool list = false;
    app.add_option("--topology", source, "hwloc synthetic description or XML file instead of this machine");
    app.add_option("--order", order, "print the CPUs a binding policy picks: " + bw::binding_syntax());
    app.add_option("--threads", threads, "how many CPUs --order picks, or the first of --cpus (0: all)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--cpus", cpus, "print the CPUs a CPU list names, thread by thread (0-3,8, S0:0-3, E:N:4:1:2)");
    app.add_option("--llc-probe", probe,
                   "time a cache line's round trip between two CPUs (A,B): whether they share a last-level cache, "
                   "measured (a virtual machine's host may split what its topology reports)");
    app.add_option("--llc-samples", samples, "samples of 256 round trips --llc-probe takes the median of")
        ->check(CLI::Range(1, 1000));
    app.add_flag("--list-policies", list, "print the placement and binding policy tables (JSON) and exit");
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    if (list) {
      bw::emit(bw::policies_json());
      return 0;
    }
    if (!source.empty()) setenv("BANDWALL_TOPOLOGY", source.c_str(), 1);
    auto& topo = bw::Topology::instance();
    bw::json result = topo.to_json();
    if (topo.is_this_machine()) {
      bw::json engines = bw::json::object();  // copy engines: "available" or "unavailable: <reason>"
      for (const auto& b : bw::engine::backends()) {
        if (b.hidden) continue;  // test-only engines stay out of what users see
        auto a = b.probe();
        engines[std::string(b.name)] = a.available ? "available" : "unavailable: " + a.reason;
      }
      result["engines"] = engines;
    }
    bw::json config = {{"topology", topo.source()}};
    // The instruction sets are this CPU's, so they are left out for a synthetic or XML machine.
    if (topo.is_this_machine()) result["isa"] = bw::isa_json();
    if (!order.empty()) {
      auto allowed = topo.is_this_machine() ? bw::allowed_cpus() : std::vector<int>{};
      result["order"] = topo.order(order, threads, allowed);
      config["order"] = order;
      config["threads"] = threads;
    }
    if (!cpus.empty()) {  // as likwid-pin -p: what a list means here, before anything runs on it
      if (!order.empty()) throw bw::UsageError("--cpus and --order exclude each other");
      result["order"] = bw::cap_cpu_list(bw::resolve_cpu_list(cpus, topo), threads, cpus);
      config["cpus"] = cpus;
      config["threads"] = threads;
    }
    if (!probe.empty()) {
      if (!topo.is_this_machine()) throw bw::UsageError("--llc-probe times this machine: leave out --topology");
      const std::vector<int> two = bw::resolve_cpu_list(probe, topo);
      if (two.size() != 2 || two[0] == two[1])
        throw bw::UsageError("--llc-probe takes two different CPUs (A,B), not '" + probe + "'");
      bw::check_cpus_allowed(two);
      const bw::LlcProbe p = bw::probe_cpus_llc(two[0], two[1], samples);
      if (!p.ran) throw bw::RunError("--llc-probe: " + p.why);
      result["llc_probe"] = p.to_json();
      config["llc_probe"] = bw::json{two[0], two[1]};
      config["llc_samples"] = samples;
    }
    auto prov = bw::provenance(0, topo.all_cpus(), "none", "none", bw::json::object(), 0);
    bw::emit(bw::make_record("topo", config, result,
                             bw::validation_not_applicable("a description of the machine: nothing is compared"), prov));
    return 0;
  });
}
