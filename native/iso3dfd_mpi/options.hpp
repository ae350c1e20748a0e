// The command line of bandwall-iso3dfd-mpi. Every check happens here, before anything is
// allocated, and gives every rank the same answer (so rank 0 alone prints it).
#pragma once
#include <string>

#include "common/placement.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd::mpi {

enum class Scaling { Strong, Weak };

struct Options {
  Grid grid;    // strong: the whole grid; weak: one rank's part (halo of 8 included either way)
  Grid global;  // the whole grid the ranks share
  int iterations = 10;
  Blocks blocks;
  int threads = 0;            // per rank; 0: every CPU of the rank's share
  std::string bind = "numa";  // a rank binding (mpi/ranks.hpp) or a thread-binding policy
  std::string cpus;           // every local rank's CPUs, divided among them (mpi::rank_cpus)
  Scaling scaling = Scaling::Strong;
  Placement placement;  // first-touch by each rank's threads; pages as asked
  bool overlap = true;  // post the halo exchange before the interior update
  bool verify = false;
  int ranks = 1;
  std::size_t planes = 0;  // interior planes along z per rank
};

// Parses argv for a run over ranks processes; throws UsageError with one line for bad input
// (including rank counts that do not divide the grid's interior planes or leave a rank fewer
// planes than the halo). Returns false when help was printed.
bool parse_options(int argc, char** argv, int ranks, Options& out);

}  // namespace bw::iso3dfd::mpi
