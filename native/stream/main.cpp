// bandwall-stream: one STREAM kernel of the table (stream/kernels.cpp) on bound OpenMP threads with a
// placement policy, through the measuring driver (common/driver.hpp); prints one JSON record with
// bandwidth statistics, traffic accounting, validation and the page map of every array. A failed
// validation exits 1 and prints no record.
#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/driver.hpp"
#include "common/harness.hpp"
#include "common/record.hpp"
#include "stream/measurement.hpp"

namespace {

struct Options : bw::stream::RunOptions {
  std::string isa = "auto";
  bool list = false;
};

bw::json run(const Options& o) {
  bw::stream::select_isa(o.isa);  // refuses an isa the binary or CPU lacks before anything is allocated
  bw::driver::Request r;
  r.threads = o.threads, r.placement = o.memory.resolve(), r.isa = o.isa;
  const bw::Binding b = o.threads.resolve();
  bw::stream::Measurement m(o, b.cpus.empty() ? bw::allowed_cpus() : b.cpus);
  r.reps = m.reps();
  return bw::driver::run(m, r);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  auto add = [&](CLI::App& app) {
    bw::stream::add_run_options(app, o);
    bw::add_isa_option(app, o.isa);
    app.add_flag("--list-kernels", o.list, "print the kernel table (JSON) and exit");
  };
  return bw::tool_main("bandwall-stream", "bandwall-stream: one STREAM kernel, one JSON record", argc, argv, add, [&] {
    bw::emit(o.list ? bw::stream::kernels_json() : run(o));
    return 0;
  });
}
