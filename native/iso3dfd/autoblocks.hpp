// Cache blocks for the CPU a run is on, when the command line says "auto" or "search" for any of
// them: a model of the caches (hwloc's L1d and L2 of the first CPU of the binding) proposes; with
// "search", a short search measured on a small grid (CPU time of a few steps, each candidate in
// alternating rounds) may replace its y block by one that beat it in every round. The record says
// what was tried and why the blocks were chosen. The search is not the default: on the machine it
// was measured on it did not find blocks reliably faster than the model's (bench/README.md).
#pragma once
#include <cstdint>
#include <vector>

#include "common/placement.hpp"
#include "common/record.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

// The model: whole rows along x (blocks along x were measured slower: the row kernel streams
// rows), the largest y block (a multiple of 8) whose window of prev (window_bytes) fits the L2 but
// at least 24 (the y halo's re-reads), and z blocks of 128 planes (the z halo is then re-read for
// one eighth of the points). Given (non-zero) dimensions of requested are kept.
struct CacheModel {
  Blocks blocks;
  std::uint64_t l1d_bytes = 0, l2_bytes = 0;
  double window_bytes = 0;      // of the model's blocks
  bool y_window_in_l1 = false;  // the 17 rows of each plane of the register shape fit the L1d
  std::string why;
};
// planes: the register shape's planes along z (register_planes() of the active row kernel).
CacheModel model_blocks(const Grid& g, const Blocks& requested, std::uint64_t l1d_bytes, std::uint64_t l2_bytes,
                        int planes = register_planes());

// The y blocks the search tries for the model's choice (each at most the interior).
std::vector<std::size_t> y_candidates(const Grid& g, std::size_t model_y);

// The grid the search runs on: the run's rows, twice the largest candidate y block in y (96 rows:
// a multiple of every candidate up to 48) and up to 32 interior planes per thread in z.
Grid search_grid(const Grid& g, std::size_t largest_y, int threads);

struct BlockChoice {
  Blocks blocks;
  json record;  // config.blocks_choice: how, model, search (candidates and their rates), why
};

// requested: 0 for each dimension to choose. search: measure candidates (false: the model alone,
// e.g. for a run of the reference kernel or of zero steps). The search runs on the calling
// process's threads (already bound), with the run's schedule and page placement.
BlockChoice choose_blocks(const Grid& g, const Blocks& requested, Schedule s, const Placement& placement, int threads,
                          int cpu, bool search);

}  // namespace bw::iso3dfd
