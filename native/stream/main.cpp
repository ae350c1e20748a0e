// bandwall-stream: one STREAM kernel of the table (stream/kernels.cpp) on bound OpenMP threads with a
// placement policy; prints one JSON record with bandwidth statistics, traffic accounting,
// validation and the page map of every array. A failed validation exits 1 and prints no record.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/isa.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "stream/kernels.hpp"
#include "stream/record.hpp"
#include "stream/runner.hpp"

namespace {

struct Options : bw::stream::RunOptions {
  std::string isa = "auto";
  bool list = false;
};

// The run's record (main prints it).
bw::json run(const Options& o) {
  using namespace bw::stream;
  select_isa(o.isa);  // refuses an isa the binary or CPU lacks before anything is allocated
  const Kernel& k0 = find_kernel(o.kernel);
  if (o.stores != "nt" && o.stores != "regular")
    throw bw::UsageError("unknown store kind '" + o.stores + "' (use nt or regular)");
  const bool nt = o.stores == "nt" && k0.writes != 0;
  int reps = static_cast<int>(bw::parse_int(o.reps, "--reps", 1, 1 << 24));
  bw::Placement placement = o.memory.resolve();
  bw::Binding binding = o.threads.resolve();
  std::vector<int> cpus = binding.cpus.empty() ? bw::allowed_cpus() : binding.cpus;

  const int arrays = int(k0.uses_a) + int(k0.uses_b) + int(k0.uses_c);
  std::uint64_t size = o.size.empty() ? 4 * bw::Topology::instance().llc_bytes(cpus) : bw::parse_size(o.size, "--size");
  if (size < sizeof(double)) throw bw::UsageError("--size '" + o.size + "' is smaller than one double (8 bytes)");
  const std::size_t n = size / sizeof(double);
  const std::size_t bytes = n * sizeof(double);
  bw::check_fits_in_memory(
      static_cast<std::uint64_t>(arrays) * bytes,
      "kernel " + std::string(k0.name) + " with " + std::to_string(arrays) + " arrays of " + bw::format_bytes(bytes));

  const auto candidates = o.threads.automatic() ? o.threads.candidates(binding.threads) : std::vector<bw::Binding>{};
  std::vector<int> seen = bw::apply_binding(binding);
  std::map<char, bw::Buffer> buffers;
  Arrays x;
  if (k0.uses_a) x.a = (buffers['a'] = bw::Buffer(bytes, placement)).as<double>();
  if (k0.uses_b) x.b = (buffers['b'] = bw::Buffer(bytes, placement)).as<double>();
  if (k0.uses_c) x.c = (buffers['c'] = bw::Buffer(bytes, placement)).as<double>();
  initialise(k0, x, n, binding.threads, placement.serial_init());

  // --isa auto: the variant fastest for this kernel and store kind on this CPU; a CPU the table of
  // measured choices does not know times each variant on these arrays (then filled again).
  bool timed = false;
  const std::size_t row = static_cast<std::size_t>(&k0 - kernels().data());
  choose_isa(o.isa, k0.name, nt ? "nt" : "regular", [&](const Variant& v) {
    timed = true;
    const Kernel& kv = v.table[row];
    double best = 0, secs = 0;
    for (int r = 0; r < 2; ++r) {
      run_once(kv, x, n, binding.threads, nt, &secs);
      best = std::max(best, static_cast<double>(n) * kv.bytes_per_element / secs / 1e9);
    }
    return best;
  });
  if (timed) initialise(k0, x, n, binding.threads, placement.serial_init());
  const Kernel& k = find_kernel(o.kernel);

  bw::json threads_choice;
  int trial_reps = 0;  // repetitions the choice of --threads auto ran: validation replays them too
  if (o.threads.automatic()) {
    const double moved = static_cast<double>(n) * k.bytes_per_element;
    bw::ThreadChoice c = bw::choose_threads(
        candidates,
        [&](int t) {
          double secs = 0;
          run_once(k, x, n, t, nt, &secs);
          return moved / secs / 1e9;
        },
        "GB/s", 2, "the arrays were placed by the largest team before the trials");
    binding = c.binding, seen = c.seen, trial_reps = c.trials, threads_choice = c.record;
  }

  std::vector<double> times(static_cast<std::size_t>(reps));
  double sum = 0;
  for (auto& t : times) sum = run_once(k, x, n, binding.threads, nt, &t);
  inject_error_for_tests(k, x, n, sum);
  Validation v = validate(k, x, n, reps + trial_reps, binding.threads, sum);
  if (!v.passed) throw bw::RunError("validation of " + std::string(k.name) + " failed: " + v.message);

  bw::json config = kernel_config(k, n, arrays, nt, o.stores, reps, binding.threads, o.size.empty());
  config["isa_requested"] = o.isa;
  config["isa_choice"] = isa_choice_json();
  if (!threads_choice.is_null()) config["threads_choice"] = threads_choice;
  bw::json result = bandwidth_result(k, n, times, reps > 1 ? 1 : 0, nt, seen);
  return make_stream_record(config, result, validation_json(k, v), buffers, binding, placement, reps);
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
