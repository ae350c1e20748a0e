// bandwall-pirate: the cache pirate of `bandwall sensitivity` (sensitivity/pirate.hpp). Alone, it
// holds --size on --cpu until SIGTERM or SIGINT (or --seconds) and prints one JSON record with its
// time per access alone and while holding. With --serve it answers commands on stdin:
//   hold BYTES        build, warm, time alone and hold    -> {"state": "holding", "alone_ns": ...}
//   stop              stop holding                        -> {"state": "stopped", "ns_per_access": ...}
//   probe CPU BYTES   does CPU share the pirate's cache?  -> {"own_ns", "shared_ns", "flushed_ns"}
//   quit (or the end of stdin) ends it.
#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/record.hpp"
#include "sensitivity/pirate.hpp"
#include "sensitivity/serve.hpp"

int main(int argc, char** argv) {
  namespace sn = bw::sensitivity;
  std::string size_s, max_s, seconds_s = "0";
  int cpu = -1;
  bool serve = false;
  return bw::tool_main(
      "bandwall-pirate", "bandwall-pirate: keeps its own lines in the cache it shares, and times them", argc, argv,
      [&](CLI::App& app) {
        app.add_option("--cpu", cpu, "the CPU it runs on")->required()->check(CLI::NonNegativeNumber);
        app.add_option("--size", size_s, "bytes to hold (alone; with --serve, the hold command says)");
        app.add_option("--max", max_s, "bytes it may ever hold (default: --size)");
        app.add_option("--seconds", seconds_s, "stop after this long (0: at SIGTERM or SIGINT)")->capture_default_str();
        app.add_flag("--serve", serve, "answer hold/stop/probe/quit commands on stdin (how bandwall drives it)");
      },
      [&] {
        sn::prepare_signals(serve);
        bw::check_cpus_allowed({cpu});
        const std::uint64_t size = size_s.empty() ? 0 : bw::parse_size(size_s, "--size");
        const std::uint64_t max = max_s.empty() ? size : bw::parse_size(max_s, "--max");
        const double seconds = sn::seconds_option(seconds_s);
        if (max < size) throw bw::UsageError("--max " + max_s + " is below --size " + size_s);
        if (!serve && size == 0) throw bw::UsageError("--size: give the bytes to hold");
        if (max == 0) throw bw::UsageError("--max: give the most bytes it will hold");
        bw::check_fits_in_memory(max, "the pirate's lines");
        sn::Pirate pirate(cpu, max);
        if (serve) {
          std::cout << bw::json{{"state", "ready"},
                                {"cpu", cpu},
                                {"max_bytes", pirate.max_bytes()},
                                {"chains", sn::kChains}}
                           .dump()
                    << std::endl;
          sn::serve([&](const std::vector<std::string>& w) -> bw::json {
            if (w[0] == "hold") {
              const auto bytes = sn::bytes_word(w, 1, "hold");
              return {{"state", "holding"}, {"bytes", bytes}, {"alone_ns", pirate.hold(bytes)}};
            }
            if (w[0] == "stop") {
              auto s = pirate.stop();
              return {{"state", "stopped"},
                      {"seconds", s.seconds},
                      {"accesses", s.accesses},
                      {"ns_per_access", s.ns_per_access()}};
            }
            if (w[0] == "probe") {
              const int other = sn::cpu_word(w, 1, "probe");
              bw::check_cpus_allowed({other});
              auto r = pirate.probe(other, sn::bytes_word(w, 2, "probe"));
              return {{"state", "probed"},
                      {"cpu", other},
                      {"own_ns", r.own_ns},
                      {"shared_ns", r.shared_ns},
                      {"flushed_ns", r.flushed_ns}};
            }
            throw bw::UsageError("unknown command '" + w[0] + "' (use hold BYTES, stop, probe CPU BYTES or quit)");
          });
          return 0;
        }
        const double alone = pirate.hold(size);
        sn::wait_for_stop(seconds);
        auto s = pirate.stop();
        bw::json config = {{"cpu", cpu}, {"bytes", size}, {"chains", sn::kChains}};
        bw::json result = {{"alone_ns", alone},
                           {"ns_per_access", s.ns_per_access()},
                           {"seconds", s.seconds},
                           {"accesses", s.accesses}};
        auto prov = bw::provenance(1, {cpu}, "explicit", "first-touch", {{"lines", size}}, 1);
        bw::emit(bw::make_record(
            "pirate", config, result,
            bw::validation_not_applicable("a cache occupant: it chases and times, nothing is compared"), prov));
        return 0;
      });
}
