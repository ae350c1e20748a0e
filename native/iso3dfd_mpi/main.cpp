// bandwall-iso3dfd-mpi: ISO3DFD over a 3-D grid of MPI ranks (z-slabs by default), MPI+OpenMP. Every
// rank binds its threads (one rank per NUMA node by default), first-touches its own part, and times
// its compute, its waits for the halo and the exchange alone; rank 0 prints one JSON record with
// every rank's part.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd_mpi/options.hpp"
#include "iso3dfd_mpi/part.hpp"
#include "mpi/ranks.hpp"

using namespace bw::iso3dfd;
using namespace bw::iso3dfd::mpi;

namespace {

double tolerance(int steps) { return std::max(1e-5, 2e-6 * steps); }

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// Gathers the wavefield on rank 0 and compares it with one process running the whole grid.
bw::json verify(const Options& o, const Part& part, MPI_Comm cart, int threads) {
  const Grid& g = o.global;
  const bool root = bw::mpi::rank(cart) == 0;
  const int n = bw::mpi::size(cart);
  long long box[6] = {0, 0, 0, 0, 0, 0};
  for (int d = 0; d < 3; ++d)
    box[d] = static_cast<long long>(part.origin()[d]), box[3 + d] = static_cast<long long>(part.extent()[d]);
  std::vector<long long> boxes(root ? 6 * static_cast<std::size_t>(n) : 0);
  MPI_Gather(box, 6, MPI_LONG_LONG, boxes.data(), 6, MPI_LONG_LONG, 0, cart);
  const std::vector<float> mine = part.owned();
  std::vector<int> counts(root ? n : 0), offsets(root ? n : 0);
  if (root)
    for (int r = 0, at = 0; r < n; ++r) {
      const long long* bx = &boxes[6 * static_cast<std::size_t>(r)];
      counts[r] = static_cast<int>(bx[3] * bx[4] * bx[5]);
      offsets[r] = at;
      at += counts[r];
    }
  std::vector<float> all(root ? g.interior() : 0);
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(), counts.data(), offsets.data(),
              MPI_FLOAT, 0, cart);
  int passed = 1;
  bw::json out;
  if (root) {
    std::vector<float> whole(g.points(), 0.0f);
    for (int r = 0; r < n; ++r) {
      const long long* bx = &boxes[6 * static_cast<std::size_t>(r)];
      const float* src = all.data() + offsets[r];
      for (long long z = 0; z < bx[5]; ++z)
        for (long long y = 0; y < bx[4]; ++y) {
          float* row = whole.data() + g.index(static_cast<std::size_t>(bx[0]), static_cast<std::size_t>(bx[1] + y),
                                              static_cast<std::size_t>(bx[2] + z));
          std::copy(src, src + bx[3], row);
          src += bx[3];
        }
    }
    const std::size_t bytes = g.points() * sizeof(float);
    bw::Buffer prev(bytes, o.placement), next(bytes, o.placement), vel(bytes, o.placement);
    Fields f{prev.as<float>(), next.as<float>(), vel.as<float>()};
    initialise(f, g, o.blocks, false, threads);
    run(f, g, o.blocks, Schedule::Static, threads, o.iterations, coefficients(g.radius));
    Difference d = compare(whole.data(), f.prev, g.points());
    passed = d.max_rel <= tolerance(o.iterations);
    out = bw::validation_checked(passed != 0, "the gathered wavefield against one process's, same grid and steps");
    out.update({{"max_abs_error", d.max_abs},
                {"max_rel_error", d.max_rel},
                {"tolerance", tolerance(o.iterations)},
                {"single_process_norm", l2_norm(f.prev, g.points())}});
  }
  MPI_Bcast(&passed, 1, MPI_INT, 0, cart);
  if (!passed) throw bw::mpi::SharedRunError("the distributed wavefield differs from one process's (see --verify)");
  return out;
}

bw::json rank_part(const Part& part, int rank, const std::vector<int>& cpus, const std::vector<int>& seen,
                   double seconds, const Timers& t, double alone_s, int steps, int exchanges,
                   const bw::Topology& topo) {
  const Fields& f = part.fields();
  const Grid& l = part.local();
  // the page maps of the whole local arrays (the part's own points and its halo)
  const std::size_t bytes = l.points() * sizeof(float);
  std::vector<int> nodes;
  for (int c : seen) nodes.push_back(topo.node_of_cpu(c));
  // an exchange within the run (one a step, or one a sweep), against one alone
  const double exchange = exchanges > 0 ? (t.post_s + t.wait_s) / exchanges : 0.0;
  return {{"rank", rank},
          {"host", hostname()},
          {"origin", part.origin()},
          {"extent", part.extent()},
          {"z0", part.origin()[2]},
          {"planes", part.extent()[2]},
          {"neighbours", part.neighbours()},
          {"halo_bytes_per_step", part.halo_bytes()},
          {"exchange_bytes", part.exchange_bytes()},
          {"redundant_share", part.redundant_share(steps)},
          {"cpus", bw::format_cpu_list(cpus)},
          {"thread_cpus", seen},
          {"thread_nodes", nodes},
          {"time_s", seconds},
          {"compute_s", t.compute_s},
          {"post_s", t.post_s},
          {"wait_s", t.wait_s},
          {"exchange_alone_s", alone_s},
          {"exchange_in_steps_s", exchange},
          {"hidden_share", alone_s > 0 ? std::clamp(1.0 - exchange / alone_s, 0.0, 1.0) : 0.0},
          {"comm_share", seconds > 0 ? (t.wait_s + t.post_s) / seconds : 0.0},
          {"page_map",
           {{"prev", bw::page_map(f.prev, bytes)},
            {"next", bw::page_map(f.next, bytes)},
            {"vel", bw::page_map(f.vel, bytes)}}}};
}

}  // namespace

int main(int argc, char** argv) {
  if (wants_plan(argc, argv))  // the decomposition alone: no MPI, no allocation
    return bw::guarded_main("bandwall-iso3dfd-mpi", [&] {
      Options o;
      if (parse_options(argc, argv, 1, o)) bw::emit(plan_json(o));
      return 0;
    });
  return bw::mpi::guarded_mpi_main("bandwall-iso3dfd-mpi", argc, argv, [&] {
    Options o;
    if (!parse_options(argc, argv, bw::mpi::size(), o)) return 0;
    const bw::mpi::Local local = bw::mpi::local_ranks();
    std::size_t largest = 0;  // points of the largest part with its halo
    {
      std::size_t e[3];
      for (int d = 0; d < 3; ++d) {
        e[d] = 0;
        for (std::size_t i = 0; i + 1 < o.cuts[d].size(); ++i) e[d] = std::max(e[d], o.cuts[d][i + 1] - o.cuts[d][i]);
      }
      const std::size_t h = o.global.halo();
      largest = (e[0] + 2 * h) * (e[1] + 2 * h) * (e[2] + 2 * h);
    }
    const std::uint64_t part_bytes = 3ull * largest * sizeof(float);
    const std::uint64_t verify_bytes = o.verify ? 5ull * o.global.points() * sizeof(float) : 0;
    bw::check_fits_in_memory(
        part_bytes * static_cast<std::uint64_t>(local.size) + verify_bytes,
        std::to_string(local.size) + " parts of the grid" + (o.verify ? " and the whole grid for --verify" : ""));

    const std::vector<int> cpus = bw::mpi::rank_cpus(o.bind, o.cpus);
    const bw::Binding binding = o.bind == "none" && o.cpus.empty()
                                    ? bw::resolve_binding(o.threads, "", "none")
                                    : bw::resolve_binding(o.threads, bw::format_cpu_list(cpus), "");
    const std::vector<int> seen = bw::apply_binding(binding);
    const int threads = binding.threads;

    MPI_Comm cart;
    int dims[3] = {o.dims[2], o.dims[1], o.dims[0]}, periods[3] = {0, 0, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    Part part(o, cart, threads, seen.empty() ? 0 : seen.front());

    // auto: the race's steps first (they advance the wavefield, untimed), then the rest timed
    const int raced = part.race();
    const int timed = o.iterations - raced;
    Timers t;
    MPI_Barrier(cart);
    const double t0 = MPI_Wtime();
    part.advance(timed, t);
    const double seconds = MPI_Wtime() - t0;
    // The exchange alone, without the update to hide behind: the median of a few.
    std::vector<double> alone;
    for (int k = 0; k < 5; ++k) alone.push_back(part.exchange_alone());
    std::sort(alone.begin(), alone.end());
    const double alone_s = alone[alone.size() / 2];
    double times[2] = {seconds, 0}, worst[2] = {0, 0};
    times[1] = t.wait_s + t.post_s;
    MPI_Reduce(times, worst, 2, MPI_DOUBLE, MPI_MAX, 0, cart);
    double sq = part.local_sum_of_squares(), total_sq = 0;
    MPI_Allreduce(&sq, &total_sq, 1, MPI_DOUBLE, MPI_SUM, cart);

    bw::json validation =
        bw::validation_not_applicable("the distributed wavefield is compared with one process's only with --verify");
    if (o.verify) validation = verify(o, part, cart, threads);
    const bw::Topology& topo = bw::Topology::instance();
    auto parts = bw::mpi::gather(
        rank_part(part, bw::mpi::rank(cart), cpus, seen, seconds, t, alone_s, timed, part.exchanges(), topo), 0, cart);
    const bw::json sweep = part.sweep_record();  // rank 0's
    MPI_Comm_free(&cart);
    if (bw::mpi::rank() != 0) return 0;

    const Grid& g = o.global;
    const double points = static_cast<double>(g.interior()) * timed;
    const bool overlap = o.overlap && part.depth() == 1;
    const double mpoints = worst[0] > 0 ? points / worst[0] / 1e6 : 0.0;
    double mean_share = 0, halo_max = 0, halo_mean = 0, hidden_mean = 0;
    std::vector<int> all_cpus;
    for (const auto& p : parts) {
      const double n = static_cast<double>(parts.size());
      mean_share += p["comm_share"].get<double>() / n;
      halo_max = std::max(halo_max, p["halo_bytes_per_step"].get<double>());
      halo_mean += p["halo_bytes_per_step"].get<double>() / n;
      hidden_mean += p["hidden_share"].get<double>() / n;
      for (int c : p["thread_cpus"]) all_cpus.push_back(c);
    }
    std::sort(all_cpus.begin(), all_cpus.end());
    all_cpus.erase(std::unique(all_cpus.begin(), all_cpus.end()), all_cpus.end());
    bw::json time_block = {{"depth", part.depth()},
                           {"how", o.time_block_how},
                           {"requested", o.time_block_requested},
                           {"halo_layers", g.radius * part.halo_depth()},
                           {"exchanges", part.exchanges()}};
    if (const std::string& forced = bw::Topology::instance().forced_caches(); !forced.empty())
      time_block["caches_forced"] = forced;  // the sizes the model read
    if (!part.choice().is_null()) {
      time_block.update(part.choice());  // depth, how (race or model), why, the proposal and the race
      if (o.time_block_requested == "measure")
        time_block["measure_note"] = "over ranks no race is kept, so measure races as auto does";
    } else if (o.time_block > 1)
      time_block["why"] =
          "given on the command line: halos " + std::to_string(g.radius * o.time_block) +
          " layers deep exchanged before each sweep (edges included), each rank sweeping its part and the halo " +
          std::to_string(o.time_block - 1) + " steps deep again; the exchange is not overlapped";
    else
      time_block["why"] = (o.time_block_how == "user" ? "given on the command line: the halo of "
                                                      : "step by step (the default): the halo of ") +
                          std::to_string(g.radius) + " exchanged every step";
    if (part.depth() > 1) time_block["sweep"] = sweep;
    if (!part.llc().why.empty()) time_block["llc_probe"] = part.llc().to_json();  // rank 0's
    bw::json config = {{"n1", g.n1},
                       {"n2", g.n2},
                       {"n3", g.n3},
                       {"nb_iter", o.iterations},
                       {"radius", g.radius},
                       {"space_order", 2 * g.radius},
                       // rank 0's part (the parts' rows differ by one point at most)
                       {"radius_path", radius_path(part.local())},
                       {"n1_block", o.blocks.b1},
                       {"n2_block", o.blocks.b2},
                       {"n3_block", o.blocks.b3},
                       {"ranks", o.ranks},
                       {"threads_per_rank", threads},
                       {"bind", o.bind},
                       {"cpus", o.cpus.empty() ? bw::json(nullptr) : bw::json(o.cpus)},
                       {"scaling", o.scaling == Scaling::Strong ? "strong" : "weak"},
                       {"decomposition", o.dims[0] == 1 && o.dims[1] == 1 ? "z-slabs" : "3-D"},
                       {"dims", o.dims},
                       {"dims_how", o.dims_how},
                       {"planes_per_rank", o.cuts[2][1] - o.cuts[2][0]},
                       {"overlap", overlap},
                       {"time_block", time_block},
                       {"isa", kernel_isa()},
                       {"isa_ceiling", bw::isa_json()["ceiling"]},
                       {"mpi_library", bw::mpi::library_version()}};
    bw::json result = {{"time_s", worst[0]},
                       {"mpoints_per_s", mpoints},
                       {"gflops", mpoints * flops_per_point(g.radius) / 1e3},
                       {"norm", std::sqrt(total_sq)},
                       {"comm_time_s", worst[1]},
                       {"comm_share", worst[0] > 0 ? worst[1] / worst[0] : 0.0},
                       {"comm_share_mean", mean_share},
                       {"halo_bytes_per_rank_max", halo_max},
                       {"halo_bytes_per_rank_mean", halo_mean},
                       // the share of the exchange the inner update hid: 1 - (post + wait a step) /
                       // (the exchange alone), per rank, averaged
                       {"hidden_share_mean", overlap ? hidden_mean : 0.0},
                       {"flops_per_point", flops_per_point(g.radius)},
                       {"ranks", parts}};
    bw::json prov = bw::provenance(threads * o.ranks, all_cpus, o.bind, o.placement.str(),
                                   {{"n1", g.n1}, {"n2", g.n2}, {"n3", g.n3}}, o.iterations);
    result["steps_timed"] = timed;
    bw::json rec = bw::make_record("iso3dfd-mpi", config, result, validation, prov);
    rec["placement"] = {{"policy", "first-touch"}, {"pages", bw::to_string(o.placement.pages)}};
    bw::emit(rec);
    return 0;
  });
}
