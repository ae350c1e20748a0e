// bandwall-iso3dfd: the ISO3DFD of Intel's NUMA 3DFD article with its command line and output lines, or (--json) one
// record with throughput, the roofline inputs, the norm, the validation and the page map.
#include <omp.h>

#include <sys/resource.h>

#include <cstdio>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/harness.hpp"
#include "common/errors.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "iso3dfd/autoblocks.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/options.hpp"
#include "iso3dfd/output.hpp"
#include "iso3dfd/selfcheck.hpp"

using namespace bw::iso3dfd;
using bw::json;

namespace {

// CPU time of the whole process (every thread), user and system.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// The optimised run must match the plain reference to float rounding; rounding differences grow
// with the number of steps.
double tolerance(int steps) { return std::max(1e-5, 2e-6 * steps); }

Outcome verify(const Options& o, const Fields& result, const float* vel) {
  const Grid& g = o.grid;
  bw::Buffer prev(g.points() * sizeof(float), o.placement), next(g.points() * sizeof(float), o.placement);
  Fields ref{prev.as<float>(), next.as<float>(), const_cast<float*>(vel)};
  std::fill(ref.prev, ref.prev + g.points(), 0.0f);
  std::fill(ref.next, ref.next + g.points(), 0.0f);
  add_source(ref.prev, g);
  run_reference(ref, g, o.iterations, coefficients());
  Difference d = compare(result.prev, ref.prev, g.points());
  Outcome v;
  v.checked = true;
  v.max_abs = d.max_abs;
  v.max_rel = d.max_rel;
  v.tolerance = tolerance(o.iterations);
  v.passed = d.max_rel <= v.tolerance;
  return v;
}

// Rounds of trials --threads auto can afford: two when the steps leave at least one timed step
// after them, else one; a run too short even for one is refused.
int auto_rounds(const Options& o, int candidates) {
  if (o.kernel != KernelChoice::Optimised)
    throw bw::UsageError("--threads auto chooses the optimised kernel's threads; the reference kernel is serial");
  if (o.iterations > 2 * candidates) return 2;
  if (o.iterations > candidates) return 1;
  throw bw::UsageError("--threads auto times one step per candidate thread count: nb_iter must be at least " +
                       std::to_string(candidates + 1) + " here, got " + std::to_string(o.iterations));
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-iso3dfd", [&] {
    Options o;
    if (!parse_options(argc, argv, o)) return 0;
    select_isa(o.isa);
    bw::check_fits_in_memory(o.bytes_needed(), "grid " + std::to_string(o.grid.n1) + "x" + std::to_string(o.grid.n2) +
                                                   "x" + std::to_string(o.grid.n3) +
                                                   (o.verify ? " with --verify" : ""));
    bw::Binding binding = o.thread_options.resolve();
    const auto candidates =
        o.thread_options.automatic() ? o.thread_options.candidates(binding.threads) : std::vector<bw::Binding>{};
    std::vector<int> cpus = bw::apply_binding(binding);
    int threads = binding.threads;
    const int rounds =  // refused here, before anything is allocated, when the steps are too few
        o.thread_options.automatic() ? auto_rounds(o, static_cast<int>(bw::thread_candidates(threads).size())) : 0;
    const Blocks& r = o.blocks_requested;
    json blocks_choice = {{"how", "user"}, {"why", "given on the command line"}};
    const int first_cpu = cpus.empty() || cpus[0] < 0 ? bw::allowed_cpus().front() : cpus[0];
    o.l1d_bytes = bw::Topology::instance().cache_bytes(1, first_cpu);
    o.l2_bytes = bw::Topology::instance().cache_bytes(2, first_cpu);
    if (!r.b1 || !r.b2 || !r.b3) {
      BlockChoice bc = choose_blocks(o.grid, r, o.schedule, o.placement, threads, first_cpu,
                                     o.block_search && o.kernel == KernelChoice::Optimised && o.iterations > 0);
      o.blocks = bc.blocks;
      blocks_choice = bc.record;
    }

    const std::size_t bytes = o.grid.points() * sizeof(float);
    bw::Buffer prev(bytes, o.placement), next(bytes, o.placement), vel(bytes, o.placement);
    Fields f{prev.as<float>(), next.as<float>(), vel.as<float>()};
    const bw::PageSplit split = initialise(f, o.grid, o.blocks, o.serial_init, threads);
    bw::json page_map = {{"prev", bw::page_map(f.prev, bytes)},
                         {"next", bw::page_map(f.next, bytes)},
                         {"vel", bw::page_map(f.vel, bytes)}};
    bw::json huge = {{"prev", bw::huge_page_share(f.prev, bytes)},
                     {"next", bw::huge_page_share(f.next, bytes)},
                     {"vel", bw::huge_page_share(f.vel, bytes)}};
    if (!o.json) print_header(o, threads, 3 * bytes);

    Coefficients c = coefficients();
    if (o.fault) c[1] *= 1.01f;
    auto advance = [&](int steps) {
      if (o.kernel == KernelChoice::Optimised)
        run(f, o.grid, o.blocks, o.schedule, threads, steps, c);
      else
        run_reference(f, o.grid, steps, c);
    };
    // --isa auto: the row kernel fastest on this CPU; a CPU the table of measured choices does not
    // know times one step of each variant on this grid, which is then initialised again.
    if (o.kernel == KernelChoice::Optimised) {
      bool timed = false;
      choose_isa(o.isa, [&] {
        timed = true;
        const double t0 = omp_get_wtime();
        run(f, o.grid, o.blocks, o.schedule, threads, 1, c);
        return static_cast<double>(o.grid.interior()) / (omp_get_wtime() - t0) / 1e6;
      });
      if (timed) initialise(f, o.grid, o.blocks, o.serial_init, threads);
    }
    bw::json threads_choice;
    if (o.thread_options.automatic()) {
      bw::ThreadChoice tc = bw::choose_threads(
          candidates,
          [&](int t) {
            const double t0 = omp_get_wtime();
            run(f, o.grid, o.blocks, o.schedule, t, 1, c);
            return static_cast<double>(o.grid.interior()) / (omp_get_wtime() - t0) / 1e6;
          },
          "MPoints/s", rounds,
          "the grid was placed by the largest team before the trials; each trial is one time step");
      binding = tc.binding, cpus = tc.seen, threads = tc.binding.threads, o.trial_steps = tc.trials;
      threads_choice = tc.record;
    }
    SelfCheck check(o.grid, o.blocks);
    const double c0 = cpu_seconds();
    const double t0 = omp_get_wtime();
    advance(o.iterations > o.trial_steps ? o.iterations - o.trial_steps - 1 : 0);
    const double kept0 = omp_get_wtime();
    const bool last = o.iterations > o.trial_steps;  // a step left after the trials
    if (last) check.before_last_step(f);             // a few hundred loads, left out of the time
    const double kept = omp_get_wtime() - kept0;
    if (last) advance(1);
    const double seconds = omp_get_wtime() - t0 - kept;
    const double cpu = cpu_seconds() - c0;
    const double norm = l2_norm(f.prev, o.grid.points());

    Outcome v;
    if (o.verify) {
      v = verify(o, f, f.vel);
      if (!v.passed) throw bw::RunError(failure_message(v));
    }
    if (!check.after_last_step(f, coefficients())) throw bw::RunError(check.failure_message());
    if (o.json) {
      bw::json rec = make_iso_record(o, threads, cpus, binding.policy, seconds, cpu, norm, v, page_map, huge);
      if (!v.checked && check.checked())
        rec["validation"] = bw::validation_checked(
            check.passed(), "self-check: sampled points of the last step recomputed with the scalar formula");
      rec["validation"]["self_check"] = check.to_json();
      rec["placement"]["page_split"] = split.to_json();
      rec["config"]["blocks"] = json::array({o.blocks.b1, o.blocks.b2, o.blocks.b3});
      rec["config"]["blocks_choice"] = blocks_choice;
      if (!threads_choice.is_null()) rec["config"]["threads_choice"] = threads_choice;
      bw::emit(rec);
    } else
      print_result(o, seconds, v);
    return 0;
  });
}
