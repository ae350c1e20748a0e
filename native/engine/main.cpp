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
#include "stream/runner.hpp"
#include "stream/stats.hpp"

namespace {

using namespace bw;
using namespace bw::pipeline;

json engine_table() {
  json out = json::array();
  for (const auto& b : engine::backends()) {
    auto a = b.probe();
    out.push_back({{"name", b.name}, {"summary", b.summary}, {"available", a.available}, {"reason", a.reason}});
  }
  return out;
}

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

  std::vector<double> times(static_cast<std::size_t>(s.reps));
  double sum = 0;
  for (auto& secs : times) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      auto [b, e] = stream::chunk(n, t, threads);
      partial[static_cast<std::size_t>(t)] =
          run_chunk(s.plan, x, b, e, lanes[static_cast<std::size_t>(t)], &lane_times[static_cast<std::size_t>(t)]);
    }
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sum = 0;
    for (double p : partial) sum += p;  // in thread order, every repetition alike
  }
  if (std::getenv("BANDWALL_STREAM_INJECT_ERROR")) {  // for tests of the failure path only
    double* w = k.writes == 'a' ? x.a : k.writes == 'b' ? x.b : k.writes == 'c' ? x.c : nullptr;
    if (w)
      w[n / 2] += 1.0;
    else
      sum += 1.0;
  }
  stream::Validation v = stream::validate(k, x, n, s.reps, threads, sum);
  if (!v.passed) throw RunError("validation of pipelined " + std::string(k.name) + " failed: " + v.message);

  const std::size_t dropped = s.reps > 1 ? 1 : 0;
  stream::Stats st = stream::time_stats(times, dropped);
  const double moved = static_cast<double>(n) * k.bytes_per_element;
  const double wa = (!s.plan.nt && k.writes != 0) ? k.write_allocate_bytes_per_element : 0.0;
  const double moved_wa = static_cast<double>(n) * (k.bytes_per_element + wa);
  const double flops = static_cast<double>(n) * k.flops_per_element;

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
                        {"wait_share", total_s > 0 ? q.wait_seconds / (total_s * threads) : 0.0},
                        {"retries", q.retries},
                        {"page_faults", q.page_faults},
                        {"blocks", blocks},
                        {"direct_blocks", direct},
                        {"info", eng->info()}};
  json result = {
      {"best_GBps", stream::giga_per_s(moved, st.best_s)},
      {"median_GBps", stream::giga_per_s(moved, st.median_s)},
      {"avg_GBps", stream::giga_per_s(moved, st.avg_s)},
      {"min_GBps", stream::giga_per_s(moved, st.worst_s)},
      {"max_GBps", stream::giga_per_s(moved, st.best_s)},
      {"best_GFlops", stream::giga_per_s(flops, st.best_s)},
      {"times_s", times},
      {"dropped_reps", dropped},
      {"bytes_per_element", k.bytes_per_element},
      {"flops_per_element", k.flops_per_element},
      {"write_allocate_bytes_per_element", k.write_allocate_bytes_per_element},
      {"traffic",
       {{"write_allocate_counted_in_GBps", false},
        {"write_allocate_occurs", wa > 0},
        {"without_write_allocate", {{"bytes_per_rep", moved}, {"best_GBps", stream::giga_per_s(moved, st.best_s)}}},
        {"with_write_allocate",
         {{"bytes_per_rep", moved_wa}, {"best_GBps", stream::giga_per_s(moved_wa, st.best_s)}}}}},
      {"threads_ran_on", seen},
      {"engine", engine_result}};
  json config = {{"kernel", k.name},
                 {"formula", k.formula},
                 {"size_per_array_bytes", bytes},
                 {"elements", n},
                 {"arrays", arrays},
                 {"stores", s.plan.nt ? "nt" : "regular"},
                 {"stores_requested", o.stores},
                 {"reps", s.reps},
                 {"threads", threads},
                 {"isa", stream::isa()},
                 {"size_default", o.size.empty()},
                 {"pipelined", true},
                 {"engine", o.engine},
                 {"engine_cpus", s.engine_cpus},
                 {"engine_mode", s.engine_mode},
                 {"engine_inputs", std::string(eng_inputs.begin(), eng_inputs.end())},
                 {"strategy", s.plan.strategy == Strategy::Split ? "split" : "all"},
                 {"queue_depth", s.plan.depth},
                 {"queue_depth_default", s.depth_default},
                 {"block_bytes", s.plan.block_elems * sizeof(double)}};
  json checks = json::object();
  for (auto& a : v.arrays)
    checks[std::string(1, a.name)] = {{"expected", a.expected}, {"avg_rel_error", a.avg_rel_error}, {"wrong", a.wrong}};
  json validation = validation_checked(
      true, "every element of the written array (dot: the sum) against its exact value, relative error below epsilon");
  validation["epsilon"] = stream::kEpsilon;
  validation["arrays"] = checks;
  if (k.writes == 0)
    validation["dot"] = {{"expected", v.dot_expected}, {"got", v.dot_got}, {"rel_error", v.dot_rel_error}};
  json page_maps = json::object(), sizes = json::object(), huge = json::object();
  for (auto& [name, buf] : buffers) {
    page_maps[std::string(1, name)] = page_map(buf.data(), buf.bytes(), 4096);
    huge[std::string(1, name)] = huge_page_share(buf.data(), buf.bytes());
    sizes[std::string(1, name)] = bytes;
  }
  auto rec = make_record("stream", config, result, validation,
                         provenance(threads, s.binding.cpus, s.binding.policy, placement.str(), sizes, s.reps));
  rec["placement"] = {{"policy", placement.str()},
                      {"pages", to_string(placement.pages)},
                      {"huge_page_share", huge},
                      {"page_map", page_maps}};
  emit(rec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-pipeline", [&] {
    CLI::App app{"bandwall-pipeline: a STREAM kernel pipelined with a copy engine, one JSON record"};
    Options o;
    app.add_option("--kernel", o.kernel, "copy, scale, add, triad or dot")->capture_default_str();
    bw::add_thread_options(app, o.threads);
    app.add_option("--engine", o.engine, "copy engine: dsa, dsa-model, helper, memcpy or none")->capture_default_str();
    app.add_option("--engine-cpus", o.engine_cpus,
                   std::string("helper CPUs (default: the allowed CPUs that do not compute); ") + bw::cpus_help());
    app.add_option("--engine-mode", o.engine_mode, "copy (into a cached ring) or touch (loads only); default copy");
    app.add_option("--queue-depth", o.depth, "blocks in flight per thread and input (default 2 for triad, else 4)");
    app.add_option("--block", o.block, "block size, a multiple of 4 KiB")->capture_default_str();
    app.add_option("--strategy", o.strategy, "all (the engine fetches every input) or split (src1 by the CPU)")
        ->capture_default_str();
    app.add_option("--stores", o.stores, "nt (non-temporal) or regular")->capture_default_str();
    app.add_option("--size", o.size, "bytes per array with units; default 4x the LLC of the compute CPUs");
    app.add_option("--reps", o.reps, "repetitions; the first is dropped when there are several")->capture_default_str();
    bw::add_memory_options(app, o.memory);
    app.add_flag("--list-engines", o.list_engines, "print the engines and whether each is available (JSON)");
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      throw bw::UsageError(e.what());
    }
    bw::refuse_empty_options(app);
    if (o.list_engines) {
      bw::emit(engine_table());
      return 0;
    }
    return run(o);
  });
}
