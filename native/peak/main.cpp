// bandwall-peak: the node's peak flop rate from an FMA-throughput kernel, per core and over all
// cores of the binding, in double and single precision, through the measuring driver
// (common/driver.hpp); one JSON record.
#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/driver.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/isa.hpp"
#include "common/record.hpp"
#include "peak/measurement.hpp"

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
    bw::peak::select_isa(isa);  // refuses an isa the binary or CPU lacks
    const int reps = static_cast<int>(bw::parse_int(reps_s, "--reps", 1, 1000));
    double seconds = 0;
    try {
      std::size_t used = 0;
      seconds = std::stod(seconds_s, &used);
      if (used != seconds_s.size()) throw std::invalid_argument("x");
    } catch (const std::exception&) {
      throw bw::UsageError("--seconds '" + seconds_s + "' is not a number");
    }
    if (!(seconds > 0 && seconds <= 60)) throw bw::UsageError("--seconds '" + seconds_s + "' is out of range (0, 60]");
    bw::peak::PeakMeasurement m(seconds, reps);
    bw::driver::Request r;
    r.threads = thread_options, r.isa = isa, r.reps = reps;
    bw::emit(bw::driver::run(m, r));
    return 0;
  });
}
