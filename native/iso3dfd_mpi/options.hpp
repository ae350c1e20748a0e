// The command line of bandwall-iso3dfd-mpi. Every check happens here, before anything is
// allocated, and gives every rank the same answer (so rank 0 alone prints it).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "common/placement.hpp"
#include "common/record.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "mpi/words.hpp"

namespace bw::iso3dfd::mpi {

enum class Scaling { Strong, Weak };

struct Options {
  Grid grid;    // strong: the whole grid; weak: one rank's part (the halo of R included either way)
  Grid global;  // the whole grid the ranks share
  int iterations = 10;
  Blocks blocks;
  int threads = 0;  // per rank; 0: every CPU of the rank's share
  // a rank binding (mpi/words.hpp) or a thread-binding policy
  std::string bind = bw::mpi::rank_binding_default("bandwall-iso3dfd-mpi");
  std::string cpus;  // every local rank's CPUs, divided among them (mpi::rank_cpus)
  Scaling scaling = Scaling::Strong;
  Placement placement;  // first-touch by each rank's threads; pages as asked
  bool overlap = true;  // post the halo exchange before the interior update (depth 1 only)
  // Time steps per sweep (--time-block): the halo on every face with a neighbour is R x depth deep,
  // exchanged once a sweep; how: user (a number given), else default. auto and measure leave 1 here
  // (the decomposition is checked for single steps) and choose over the ranks: each rank's Part
  // (part.hpp) takes the time-block model's depth for its part, the shallowest over ranks and as
  // deep as the parts' halos and the run's steps allow, deepens its halos to it and races it against
  // single steps on the run's data, every round timed by the slowest rank (Part::race); the depth
  // run is Part::depth(), and the record's time_block says how it was chosen (race or model).
  int time_block = 1;
  std::string time_block_how = "default", time_block_requested = "1";
  bool verify = false;
  int ranks = 1;
  // Ranks along x, y and z (--dims PxQxR, or auto: the shape of least halo bytes a rank; default
  // 1x1xN, z-slabs), and where each dimension's interior is cut: dims[d] + 1 bounds, global indices.
  std::array<int, 3> dims{1, 1, 1};
  std::string dims_how = "z-slabs";
  std::array<std::vector<std::size_t>, 3> cuts;
  int plan = 0;  // --plan N: the decomposition for N ranks is printed (plan_json), nothing runs
};

// The halo bytes a rank sends a step in the shape dims (R layers on both faces of each dimension it
// cuts, of the largest part's extents in the other two).
double halo_bytes(const Grid& global, const std::array<int, 3>& dims);

// Every shape of ranks whose parts hold the halo of R x depth along each dimension they cut, least
// halo bytes a rank first (ties: more ranks along z, then y): the first is --dims auto's.
std::vector<std::array<int, 3>> shapes_by_halo(const Grid& global, int ranks, int depth = 1);

// The decomposition parse_options settled (--plan): the shape, how it was chosen, the global grid,
// the halo bytes a rank, and every shape that holds the halo, least halo bytes first. The front
// end's one model of the decomposition (python/bandwall/mpi/iso3dfd_mpi.py asks it).
json plan_json(const Options& o);

// Whether argv asks for --plan (then no MPI is started: main answers from the options alone).
bool wants_plan(int argc, char** argv);

// The parts of `extent` interior points along one dimension for p ranks: bounds from the radius, as
// equal as whole points allow.
std::vector<std::size_t> cut(std::size_t extent, int p, int radius = kSeedRadius);

// The shape of least halo bytes a rank (each face with a neighbour sends R layers of its rank's
// extents in the other two dimensions), among those whose every part holds the halo of R x depth;
// ties go to more ranks along z, then y. {0, 0, 0} when none does.
std::array<int, 3> least_halo_dims(const Grid& global, int ranks, int depth = 1);

// Parses argv for a run over ranks processes; throws UsageError with one line for bad input
// (including shapes whose product is not the rank count, or that leave a rank fewer points than
// the halo, R x the time block, along a dimension it shares). Returns false when help was printed.
bool parse_options(int argc, char** argv, int ranks, Options& out);

}  // namespace bw::iso3dfd::mpi
