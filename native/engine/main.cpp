// bandwall-pipeline: one STREAM kernel pipelined with a copy engine (seed 002). The engine brings
// the next blocks of the inputs into the cache while the bound OpenMP threads compute the current
// ones with the stream kernels' chunk functions and non-temporal stores. Prints one stream record
// (tool "stream", with config.engine, engine_cpus, strategy, queue_depth) validated as
// bandwall-stream validates; a failed validation exits 1 and prints no record.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <map>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/policies.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "engine/options.hpp"
#include "stream/record.hpp"
#include "stream/runner.hpp"

namespace {

using namespace bw;
using namespace bw::pipeline;

int run(const Options& o) {
  Setup s = resolve(o);
  const stream::Kernel& k = *s.plan.kernel;
  const int threads = s.binding.threads;
  Placement placement = o.memory.resolve();
  const int arrays = int(k.uses_a) + int(k.uses_b) + int(k.uses_c);
  const std::size_t n = s.n, bytes = n * sizeof(double);
  check_fits_in_memory(
      static_cast<std::uint64_t>(arrays) * bytes,
      "kernel " + std::string(k.name) + " with " + std::to_string(arrays) + " arrays of " + format_bytes(bytes));

  const auto candidates = o.threads.automatic() ? o.threads.candidates(threads) : std::vector<Binding>{};
  std::vector<int> seen = apply_binding(s.binding);
  std::map<char, Buffer> buffers;
  stream::Arrays x;
  if (k.uses_a) x.a = (buffers['a'] = Buffer(bytes, placement)).as<double>();
  if (k.uses_b) x.b = (buffers['b'] = Buffer(bytes, placement)).as<double>();
  if (k.uses_c) x.c = (buffers['c'] = Buffer(bytes, placement)).as<double>();
  stream::initialise(k, x, n, threads, placement.serial_init());

  const auto eng_inputs = engine_inputs(k, s.plan.strategy);
  const int per_thread = static_cast<int>(eng_inputs.size());
  engine::Config cfg{s.engine_cpus, threads * per_thread, s.plan.depth, s.engine_mode};
  std::unique_ptr<engine::Engine> eng = engine::make(o.engine, cfg);
  if (!eng->supports(s.plan.kind)) throw UsageError("engine " + o.engine + " has no " + s.engine_mode + " mode");
  std::vector<Lane> lanes(static_cast<std::size_t>(threads));
  std::vector<LaneTimes> lane_times(static_cast<std::size_t>(threads));
  std::vector<double> partial(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num();
#pragma omp critical
    open_lane(lanes[static_cast<std::size_t>(t)], *eng, s.plan, t * per_thread);
  }

  // One repetition on the first `team` lanes: its seconds, and the dot sum in thread order.
  auto repetition = [&](int team, double* sum) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(team)
    {
      const int t = omp_get_thread_num();
      auto [b, e] = stream::chunk(n, t, team);
      partial[static_cast<std::size_t>(t)] =
          run_chunk(s.plan, x, b, e, lanes[static_cast<std::size_t>(t)], &lane_times[static_cast<std::size_t>(t)]);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    *sum = 0;
    for (int t = 0; t < team; ++t) *sum += partial[static_cast<std::size_t>(t)];
    return secs;
  };
  json threads_choice;
  int team = threads, trial_reps = 0;  // validation replays the trials of --threads auto too
  double sum = 0;
  if (o.threads.automatic()) {
    const double moved = static_cast<double>(n) * k.bytes_per_element;
    ThreadChoice c = choose_threads(
        candidates, [&](int t) { return moved / repetition(t, &sum) / 1e9; }, "GB/s", 2,
        "the arrays were placed and the engine's queues opened for the largest team before the trials");
    s.binding = c.binding, seen = c.seen, team = c.binding.threads, trial_reps = c.trials;
    threads_choice = c.record;
  }
  std::vector<double> times(static_cast<std::size_t>(s.reps));
  for (auto& secs : times) secs = repetition(team, &sum);
  stream::inject_error_for_tests(k, x, n, sum);
  stream::Validation v = stream::validate(k, x, n, s.reps + trial_reps, team, sum);
  if (!v.passed) throw RunError("validation of pipelined " + std::string(k.name) + " failed: " + v.message);

  engine::QueueStats q;
  std::size_t blocks = 0, direct = 0;
  for (std::size_t t = 0; t < lanes.size(); ++t) {
    for (auto& qu : lanes[t].queues) {
      const auto& a = qu->stats();
      q.requests += a.requests, q.bytes += a.bytes, q.waits += a.waits, q.wait_seconds += a.wait_seconds;
      q.retries += a.retries, q.page_faults += a.page_faults;
    }
    blocks += lane_times[t].blocks, direct += lane_times[t].direct_blocks;
  }
  double total_s = 0;
  for (double t : times) total_s += t;
  json engine_result = {{"requests", q.requests},
                        {"bytes", q.bytes},
                        {"waits", q.waits},
                        {"wait_seconds", q.wait_seconds},
                        {"wait_share", total_s > 0 ? q.wait_seconds / (total_s * team) : 0.0},
                        {"retries", q.retries},
                        {"page_faults", q.page_faults},
                        {"blocks", blocks},
                        {"direct_blocks", direct},
                        {"info", eng->info()}};
  json result = stream::bandwidth_result(k, n, times, s.reps > 1 ? 1 : 0, s.plan.nt, seen);
  result["engine"] = engine_result;
  json config = stream::kernel_config(k, n, arrays, s.plan.nt, o.stores, s.reps, team, o.size.empty());
  if (!threads_choice.is_null()) config["threads_choice"] = threads_choice;
  config.update({{"pipelined", true},
                 {"engine", o.engine},
                 {"engine_cpus", s.engine_cpus},
                 {"engine_mode", s.engine_mode},
                 {"engine_inputs", std::string(eng_inputs.begin(), eng_inputs.end())},
                 {"strategy", s.plan.strategy == Strategy::Split ? "split" : "all"},
                 {"queue_depth", s.plan.depth},
                 {"queue_depth_default", s.depth_default},
                 {"block_bytes", s.plan.block_elems * sizeof(double)}});
  emit(
      stream::make_stream_record(config, result, stream::validation_json(k, v), buffers, s.binding, placement, s.reps));
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
    app.add_option("--strategy", o.strategy, "all (the engine fetches every input) or split (src1 by the CPU)")
        ->capture_default_str();
    app.add_flag("--list-engines", o.list_engines, "print the engines and whether each is available (JSON)");
  };
  const char* about = "bandwall-pipeline: a STREAM kernel pipelined with a copy engine, one JSON record";
  return bw::tool_main("bandwall-pipeline", about, argc, argv, add, [&] {
    if (!o.list_engines) return run(o);
    bw::emit(engine::backends_json());
    return 0;
  });
}
