// bandwall-pipeline: one STREAM kernel pipelined with a copy engine (seed 002), through the
// measuring driver (common/driver.hpp). The engine brings the next blocks of the inputs into the
// cache while the bound OpenMP threads compute the current ones with the stream kernels' chunk
// functions and non-temporal stores. Prints one stream record (tool "stream", with config.engine,
// engine_cpus, strategy, queue_depth) validated as bandwall-stream validates; a failed validation
// exits 1 and prints no record.
#include <CLI/CLI.hpp>

#include "common/driver.hpp"
#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/policies.hpp"
#include "common/record.hpp"
#include "engine/measurement.hpp"
#include "engine/options.hpp"

namespace {

using namespace bw;
using namespace bw::pipeline;

int run(const Options& o) {
  Setup s = resolve(o);
  driver::Request r;
  r.threads = o.threads, r.binding = s.binding, r.placement = o.memory.resolve(), r.reps = s.reps;
  Measurement m(o, std::move(s));
  emit(driver::run(m, r));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  auto add = [&](CLI::App& app) {
    bw::stream::add_run_options(app, o);
    app.add_option("--engine", o.engine, "copy engine: " + engine::names())->capture_default_str();
    app.add_option("--engine-cpus", o.engine_cpus,
                   std::string("helper CPUs (default: the allowed CPUs that do not compute); ") + bw::cpus_help());
    app.add_option("--engine-mode", o.engine_mode, "copy (into a cached ring) or touch (loads only); default copy");
    app.add_option("--queue-depth", o.depth, "blocks in flight per thread and input (default 2 for triad, else 4)");
    app.add_option("--block", o.block, "block size, a multiple of 4 KiB")->capture_default_str();
    std::string help;
    for (const auto& r : strategies()) help += (help.empty() ? "" : "; ") + std::string(r.name) + ": " + r.help;
    app.add_option("--strategy", o.strategy, help)->capture_default_str();
    app.add_flag("--list-engines", o.list_engines, "print the engines and whether each is available (JSON)");
  };
  const char* about = "bandwall-pipeline: a STREAM kernel pipelined with a copy engine, one JSON record";
  return bw::tool_main("bandwall-pipeline", about, argc, argv, add, [&] {
    if (!o.list_engines) return run(o);
    bw::emit(engine::backends_json());
    return 0;
  });
}
