#include "iso3dfd_mpi/options.hpp"

#include <CLI/CLI.hpp>
#include <vector>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/policies.hpp"

namespace bw::iso3dfd::mpi {

namespace {

std::size_t block(const std::string& text, const char* name) {
  long v = parse_int(text, name, 0, kMaxDim);
  if (v == 0) throw UsageError(std::string(name) + " must be at least 1 (blocks of zero points do not exist)");
  return static_cast<std::size_t>(v);
}

// Splits the interior planes along z over the ranks, or says why it cannot.
void decompose_z(Options& o) {
  const std::size_t h = static_cast<std::size_t>(kHalf);
  const std::size_t ranks = static_cast<std::size_t>(o.ranks);
  if (o.scaling == Scaling::Weak) {
    o.planes = o.grid.n3 - 2 * h;
    o.global = Grid{o.grid.n1, o.grid.n2, o.planes * ranks + 2 * h};
  } else {
    const std::size_t interior = o.grid.n3 - 2 * h;
    if (interior % ranks != 0)
      throw UsageError("n3 " + std::to_string(o.grid.n3) + " has " + std::to_string(interior) +
                       " interior planes, which " + std::to_string(ranks) +
                       " ranks do not divide (z-slabs need equal parts)");
    o.planes = interior / ranks;
    o.global = o.grid;
  }
  if (ranks > 1 && o.planes < h)
    throw UsageError(std::to_string(ranks) + " ranks leave each rank " + std::to_string(o.planes) +
                     " planes along z, fewer than the halo of " + std::to_string(h) +
                     " its neighbours need (use fewer ranks or a larger n3)");
}

}  // namespace

bool parse_options(int argc, char** argv, int ranks, Options& o) {
  CLI::App app{
      "bandwall-iso3dfd-mpi: ISO3DFD (Intel's NUMA 3DFD article) decomposed in z-slabs over MPI ranks, "
      "MPI+OpenMP, halo exchange of 8 planes overlapped with the interior update; prints one JSON record from "
      "rank 0"};
  std::vector<std::string> pos;
  std::string scaling = "strong", pages = "huge";
  app.add_option("n1 n2 n3 nb_iter n1_block n2_block n3_block [nb_threads]", pos,
                 "grid with halo (strong: the whole grid; weak: one rank's part), steps, cache blocks, threads "
                 "per rank")
      ->required();
  app.add_option("--bind", o.bind,
                 "numa (default: ranks dealt round-robin to NUMA nodes, sharing a node's CPUs), core (one CPU "
                 "per rank), none, or a thread binding (" +
                     binding_syntax() + ") whose order of the CPUs the node's ranks divide in contiguous parts");
  app.add_option("--cpus", o.cpus,
                 std::string("the CPUs of the node's ranks, divided in contiguous parts in rank order (wins over "
                             "--bind): ") +
                     cpus_help());
  app.add_option("--scaling", scaling, "strong (the grid is shared) or weak (the grid is per rank)");
  app.add_option("--pages", pages, "huge (default), base or system");
  app.add_flag("--verify", o.verify,
               "gather the wavefield on rank 0 and compare it with one process running the same grid (exit 1 "
               "when it differs)");
  std::string time_block = "1";
  app.add_option("--time-block", time_block,
                 "time steps per sweep: 1 (or auto) only; over ranks the 8-plane halo is exchanged every step");
  bool no_overlap = false;
  app.add_flag("--no-overlap", no_overlap, "exchange the halo after the whole update instead of during it");
  if (!parse_command_line(app, argc, argv)) return false;
  if (pos.size() < 7 || pos.size() > 8)
    throw UsageError("expected n1 n2 n3 nb_iter n1_block n2_block n3_block [nb_threads], got " +
                     std::to_string(pos.size()) + " positional arguments");
  if (time_block != "1" && time_block != "auto")
    throw UsageError("--time-block " + time_block +
                     ": temporal blocking over MPI ranks needs halos of 8 planes per step of a sweep, exchanged once "
                     "a sweep, which this tool does not do yet (use --time-block 1, or one process)");
  o.ranks = ranks;
  o.grid = Grid{parse_dimension(pos[0], "n1"), parse_dimension(pos[1], "n2"), parse_dimension(pos[2], "n3")};
  o.iterations = static_cast<int>(parse_int(pos[3], "nb_iter", 0, 1000000));
  o.blocks = Blocks{block(pos[4], "n1_block"), block(pos[5], "n2_block"), block(pos[6], "n3_block")};
  if (pos.size() == 8) o.threads = static_cast<int>(parse_int(pos[7], "nb_threads", 1, 4096));
  if (scaling == "strong")
    o.scaling = Scaling::Strong;
  else if (scaling == "weak")
    o.scaling = Scaling::Weak;
  else
    throw UsageError("unknown scaling '" + scaling + "' (use strong or weak)");
  o.placement = Placement::parse("first-touch");
  o.placement.pages = parse_pages(pages);
  o.overlap = !no_overlap;
  decompose_z(o);
  return true;
}

}  // namespace bw::iso3dfd::mpi
