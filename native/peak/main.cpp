// bandwall-peak: the node's peak flop rate from an FMA-throughput kernel, per core and over all
// cores of the binding, in double and single precision; one JSON record.
#include <CLI/CLI.hpp>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/machine.hpp"
#include "common/isa.hpp"
#include "common/policies.hpp"
#include "common/record.hpp"
#include "peak/fma.hpp"

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-peak", [&] {
    CLI::App app{"bandwall-peak: FMA throughput per core and over all cores"};
    std::string reps_s = "5", seconds_s = "0.2", isa = "auto";
    bw::ThreadOptions thread_options;
    bw::add_thread_options(app, thread_options);
    app.add_option("--reps", reps_s, "repetitions of each measurement (best is kept)")->capture_default_str();
    app.add_option("--seconds", seconds_s, "duration of one repetition")->capture_default_str();
    bw::add_isa_option(app, isa);
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    bw::peak::choose_isa(isa);
    int reps = static_cast<int>(bw::parse_int(reps_s, "--reps", 1, 1000));
    double seconds = 0;
    try {
      std::size_t used = 0;
      seconds = std::stod(seconds_s, &used);
      if (used != seconds_s.size()) throw std::invalid_argument("x");
    } catch (const std::exception&) {
      throw bw::UsageError("--seconds '" + seconds_s + "' is not a number");
    }
    if (!(seconds > 0 && seconds <= 60)) throw bw::UsageError("--seconds '" + seconds_s + "' is out of range (0, 60]");
    bw::Binding binding = thread_options.resolve();
    std::vector<int> seen = bw::apply_binding(binding);

    using bw::peak::Precision;
    bw::json result = {{"threads_ran_on", seen}};
    bool ok = true;
    for (auto [p, tag] : {std::pair{Precision::Double, "dp"}, std::pair{Precision::Single, "sp"}}) {
      auto one = bw::peak::measure(p, 1, seconds, reps);
      auto all = bw::peak::measure(p, binding.threads, seconds, reps);
      ok = ok && one.checksum_ok && all.checksum_ok;
      result[std::string("per_core_gflops_") + tag] = one.gflops;
      result[std::string("total_gflops_") + tag] = all.gflops;
      result[std::string("per_core_gflops_") + tag + "_reps"] = one.rounds;
      result[std::string("total_gflops_") + tag + "_reps"] = all.rounds;
      result[std::string("lanes_") + tag] = bw::peak::lanes(p);
    }
    if (!ok) throw bw::RunError("FMA chain produced a wrong checksum (the kernel is broken)");
    const bw::peak::Variant& v = bw::peak::variant();
    bw::json config = {{"isa", v.isa},
                       {"isa_requested", isa},
                       {"isa_choice", bw::peak::isa_choice_json()},
                       {"vector_bits", v.vector_bits},
                       {"fma_instruction", v.fma},
                       {"accumulators", bw::peak::kAccumulators},
                       {"threads", binding.threads},
                       {"reps", reps},
                       {"seconds_per_rep", seconds},
                       {"microarch", bw::microarch_json()}};
    // The FMAs of this width a core issues per cycle (the machine model's row): with the peak it
    // gives the clock the cores ran at.
    std::string why;
    if (auto ports = bw::ports_at(v.vector_bits, &why))
      config["fma_per_cycle"] = ports->fma;
    else
      config["fma_per_cycle"] = "unavailable: " + why;
    bw::emit(bw::make_record(
        "peak", config, result,
        bw::validation_checked(true, "the accumulators of every FMA chain against the value they converge to (1)"),
        bw::provenance(binding.threads, binding.cpus, binding.policy, "none", bw::json::object(), reps)));
    return 0;
  });
}
