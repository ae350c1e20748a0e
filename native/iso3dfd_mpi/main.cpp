// bandwall-iso3dfd-mpi: ISO3DFD over MPI ranks (z-slabs), MPI+OpenMP. Every rank binds its threads
// (one rank per NUMA node by default), first-touches its own slab, and times its compute and its
// waits for the halo; rank 0 prints one JSON record with every rank's part.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "iso3dfd_mpi/options.hpp"
#include "iso3dfd_mpi/slabs.hpp"
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
bw::json verify(const Options& o, const Slab& slab, MPI_Comm cart, int threads) {
  const Grid& g = o.global;
  const std::size_t pp = slab.plane_points();
  MPI_Datatype plane;
  MPI_Type_contiguous(static_cast<int>(pp), MPI_FLOAT, &plane);
  MPI_Type_commit(&plane);
  const bool root = bw::mpi::rank(cart) == 0;
  std::vector<float> whole(root ? g.points() : 0, 0.0f);
  MPI_Gather(slab.owned(), static_cast<int>(slab.planes()), plane, root ? whole.data() + kHalf * pp : nullptr,
             static_cast<int>(slab.planes()), plane, 0, cart);
  MPI_Type_free(&plane);
  int passed = 1;
  bw::json out;
  if (root) {
    const std::size_t bytes = g.points() * sizeof(float);
    bw::Buffer prev(bytes, o.placement), next(bytes, o.placement), vel(bytes, o.placement);
    Fields f{prev.as<float>(), next.as<float>(), vel.as<float>()};
    initialise(f, g, o.blocks, false, threads);
    run(f, g, o.blocks, Schedule::Static, threads, o.iterations, coefficients());
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

bw::json rank_part(const Slab& slab, int rank, const std::vector<int>& cpus, const std::vector<int>& seen,
                   double seconds, const Timers& t, const bw::Topology& topo) {
  const std::size_t bytes = slab.planes() * slab.plane_points() * sizeof(float);
  const std::size_t off = kHalf * slab.plane_points();
  const Fields& f = slab.fields();
  std::vector<int> nodes;
  for (int c : seen) nodes.push_back(topo.node_of_cpu(c));
  return {{"rank", rank},
          {"host", hostname()},
          {"z0", slab.z0()},
          {"planes", slab.planes()},
          {"cpus", bw::format_cpu_list(cpus)},
          {"thread_cpus", seen},
          {"thread_nodes", nodes},
          {"time_s", seconds},
          {"compute_s", t.compute_s},
          {"post_s", t.post_s},
          {"wait_s", t.wait_s},
          {"comm_share", seconds > 0 ? (t.wait_s + t.post_s) / seconds : 0.0},
          {"page_map",
           {{"prev", bw::page_map(f.prev + off, bytes)},
            {"next", bw::page_map(f.next + off, bytes)},
            {"vel", bw::page_map(f.vel + off, bytes)}}}};
}

}  // namespace

int main(int argc, char** argv) {
  return bw::mpi::guarded_mpi_main("bandwall-iso3dfd-mpi", argc, argv, [&] {
    Options o;
    if (!parse_options(argc, argv, bw::mpi::size(), o)) return 0;
    const bw::mpi::Local local = bw::mpi::local_ranks();
    const std::uint64_t slab_bytes = 3ull * o.global.n1 * o.global.n2 * (o.planes + 2 * kHalf) * sizeof(float);
    const std::uint64_t verify_bytes = o.verify ? 4ull * o.global.points() * sizeof(float) : 0;
    bw::check_fits_in_memory(slab_bytes * static_cast<std::uint64_t>(local.size) + verify_bytes,
                             std::to_string(local.size) + " slabs of " + std::to_string(o.planes) + " planes" +
                                 (o.verify ? " and the whole grid for --verify" : ""));

    const std::vector<int> cpus = bw::mpi::rank_cpus(o.bind, o.cpus);
    const bw::Binding binding = o.bind == "none" && o.cpus.empty()
                                    ? bw::resolve_binding(o.threads, "", "none")
                                    : bw::resolve_binding(o.threads, bw::format_cpu_list(cpus), "");
    const std::vector<int> seen = bw::apply_binding(binding);
    const int threads = binding.threads;

    MPI_Comm cart;
    int dims[1] = {o.ranks}, periods[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    Slab slab(o, cart, threads);

    Timers t;
    MPI_Barrier(cart);
    const double t0 = MPI_Wtime();
    for (int s = 0; s < o.iterations; ++s) slab.step(t);
    const double seconds = MPI_Wtime() - t0;
    double times[2] = {seconds, 0}, worst[2] = {0, 0};
    times[1] = t.wait_s + t.post_s;
    MPI_Reduce(times, worst, 2, MPI_DOUBLE, MPI_MAX, 0, cart);
    double sq = slab.local_sum_of_squares(), total_sq = 0;
    MPI_Allreduce(&sq, &total_sq, 1, MPI_DOUBLE, MPI_SUM, cart);

    bw::json validation =
        bw::validation_not_applicable("the distributed wavefield is compared with one process's only with --verify");
    if (o.verify) validation = verify(o, slab, cart, threads);
    const bw::Topology& topo = bw::Topology::instance();
    auto parts = bw::mpi::gather(rank_part(slab, bw::mpi::rank(cart), cpus, seen, seconds, t, topo), 0, cart);
    MPI_Comm_free(&cart);
    if (bw::mpi::rank() != 0) return 0;

    const Grid& g = o.global;
    const double points = static_cast<double>(g.interior()) * o.iterations;
    const double mpoints = worst[0] > 0 ? points / worst[0] / 1e6 : 0.0;
    double mean_share = 0;
    std::vector<int> all_cpus;
    for (const auto& p : parts) {
      mean_share += p["comm_share"].get<double>() / static_cast<double>(parts.size());
      for (int c : p["thread_cpus"]) all_cpus.push_back(c);
    }
    std::sort(all_cpus.begin(), all_cpus.end());
    all_cpus.erase(std::unique(all_cpus.begin(), all_cpus.end()), all_cpus.end());
    bw::json config = {{"n1", g.n1},
                       {"n2", g.n2},
                       {"n3", g.n3},
                       {"nb_iter", o.iterations},
                       {"n1_block", o.blocks.b1},
                       {"n2_block", o.blocks.b2},
                       {"n3_block", o.blocks.b3},
                       {"ranks", o.ranks},
                       {"threads_per_rank", threads},
                       {"bind", o.bind},
                       {"cpus", o.cpus.empty() ? bw::json(nullptr) : bw::json(o.cpus)},
                       {"scaling", o.scaling == Scaling::Strong ? "strong" : "weak"},
                       {"decomposition", "z-slabs"},
                       {"dims", {1, 1, o.ranks}},
                       {"planes_per_rank", o.planes},
                       {"overlap", o.overlap},
                       {"isa", kernel_isa()},
                       {"mpi_library", bw::mpi::library_version()}};
    bw::json result = {{"time_s", worst[0]},
                       {"mpoints_per_s", mpoints},
                       {"gflops", mpoints * kFlopsPerPoint / 1e3},
                       {"norm", std::sqrt(total_sq)},
                       {"comm_time_s", worst[1]},
                       {"comm_share", worst[0] > 0 ? worst[1] / worst[0] : 0.0},
                       {"comm_share_mean", mean_share},
                       {"flops_per_point", kFlopsPerPoint},
                       {"ranks", parts}};
    bw::json prov = bw::provenance(threads * o.ranks, all_cpus, o.bind, o.placement.str(),
                                   {{"n1", g.n1}, {"n2", g.n2}, {"n3", g.n3}}, o.iterations);
    bw::json rec = bw::make_record("iso3dfd-mpi", config, result, validation, prov);
    rec["placement"] = {{"policy", "first-touch"}, {"pages", bw::to_string(o.placement.pages)}};
    bw::emit(rec);
    return 0;
  });
}
