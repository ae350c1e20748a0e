// bandwall-bandit: the bandwidth bandit of `bandwall sensitivity` (sensitivity/bandit.hpp). Alone,
// it reads at --duty on --cpus until SIGTERM or SIGINT (or --seconds) and prints one JSON record
// with the bandwidth it took. With --serve it answers commands on stdin, one JSON line each:
//   run DUTY   start reading at a dose in (0, 1]     -> {"state": "running", "duty": ...}
//   stop       stop, and what was taken since run   -> {"state": "stopped", "GBps": ..., ...}
//   quit (or the end of stdin) ends it.
#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/words.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "sensitivity/bandit.hpp"
#include "sensitivity/serve.hpp"

namespace {

bw::json sample_json(const bw::sensitivity::BanditSample& s) {
  return {{"duty", s.duty}, {"seconds", s.seconds}, {"bytes", s.bytes}, {"GBps", s.gbps()}};
}

}  // namespace

int main(int argc, char** argv) {
  namespace sn = bw::sensitivity;
  std::string cpus_s, buffer_s, duty_s = "1", seconds_s = "0", pattern_s = sn::patterns().front().name;
  bool serve = false;
  return bw::tool_main(
      "bandwall-bandit", "bandwall-bandit: takes memory bandwidth, and next to no cache, on the CPUs given", argc, argv,
      [&](CLI::App& app) {
        app.add_option("--cpus", cpus_s, "the CPUs to read on, one thread each (0-3,8)")->required();
        app.add_option("--buffer", buffer_s,
                       "bytes of each thread's buffer (default: 4 LLCs over the threads, at least 32M)");
        app.add_option("--duty", duty_s, "the dose: the share of each 1 ms period spent reading, in (0, 1]")
            ->capture_default_str();
        app.add_option("--seconds", seconds_s, "stop after this long (0: at SIGTERM or SIGINT)")->capture_default_str();
        app.add_option("--pattern", pattern_s, bw::words_help(sn::patterns()))->capture_default_str();
        app.add_flag("--serve", serve, "answer run/stop/quit commands on stdin (how bandwall drives it)");
      },
      [&] {
        sn::prepare_signals(serve);
        auto& topo = bw::Topology::instance();
        const auto cpus = bw::resolve_cpu_list(cpus_s, topo);
        bw::check_cpus_allowed(cpus);
        const std::uint64_t buffer = buffer_s.empty()
                                         ? sn::bandit_buffer_bytes(topo.llc_bytes(cpus), static_cast<int>(cpus.size()))
                                         : bw::parse_size(buffer_s, "--buffer");
        bw::check_fits_in_memory(buffer * cpus.size(), "the bandit's buffers");
        const double duty = sn::number_word({duty_s}, 0, "--duty");
        const double seconds = sn::seconds_option(seconds_s);
        if (!(duty > 0 && duty <= 1)) throw bw::UsageError("--duty " + duty_s + " must lie in (0, 1]");
        const auto pattern = sn::parse_pattern(pattern_s);
        sn::Bandit bandit(cpus, buffer, pattern);
        bw::json ready = {{"state", "ready"},
                          {"cpus", cpus},
                          {"buffer_bytes_per_thread", bandit.buffer_bytes()},
                          {"line_bytes", sn::kLine},
                          {"pattern", sn::pattern_name(pattern)},
                          {"period_s", sn::kPeriodSeconds}};
        if (serve) {
          std::cout << ready.dump() << std::endl;
          sn::serve([&](const std::vector<std::string>& w) -> bw::json {
            if (w[0] == "run") {
              bandit.start(sn::number_word(w, 1, "run"));
              return {{"state", "running"}, {"duty", sn::number_word(w, 1, "run")}};
            }
            if (w[0] == "stop") {
              auto out = sample_json(bandit.stop());
              out["state"] = "stopped";
              return out;
            }
            throw bw::UsageError("unknown command '" + w[0] + "' (use run DUTY, stop or quit)");
          });
          return 0;
        }
        bandit.start(duty);
        sn::wait_for_stop(seconds);
        auto s = bandit.stop();
        bw::json config = {{"cpus", bw::format_cpu_list(cpus)},
                           {"duty", duty},
                           {"buffer_bytes_per_thread", bandit.buffer_bytes()},
                           {"line_bytes", sn::kLine},
                           {"pattern", sn::pattern_name(pattern)}};
        auto prov = bw::provenance(static_cast<int>(cpus.size()), cpus, "explicit", "first-touch",
                                   {{"buffer", bandit.buffer_bytes() * cpus.size()}}, 1);
        bw::emit(bw::make_record(
            "bandit", config, sample_json(s),
            bw::validation_not_applicable("a load generator: it reads and counts, nothing is compared"), prov));
        return 0;
      });
}
