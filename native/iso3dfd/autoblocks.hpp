// Cache blocks for the CPU a run is on, when the command line says "auto" or "search" for any of
// them: a model of the caches (hwloc's L1d and L2 of the first CPU of the binding) proposes; with
// "search", a short search measured on a small grid (CPU time of a few steps, each candidate in
// alternating rounds) may replace its y block by one that beat it in every round. The record says
// what was tried and why the blocks were chosen. The search is not the default: on the machine it
// was measured on it did not find blocks reliably faster than the model's (bench/README.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/placement.hpp"
#include "common/record.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

// The share of L2 the window of prev may fill: the rest holds next and vel streaming through, the
// next block's first planes and the prefetchers' lines. Measured with bench/iso3dfd_blocks.py on
// Zen 5 (1 MiB L2): a window filling 90% of it (y 32) ran 4-6% slower than one filling 40% (y 24).
// The model's default; a CPU's row of the table of measured choices may give its own per radius and
// variant (blocks.<isa>.l2_share, bench/iso3dfd_kernel_choices.py --knobs blocks).
inline constexpr double kL2Share = 0.5;
// The shares a row may give: beyond L2 where no y block keeps the window there (its z neighbours
// come from L3 either way) and larger blocks re-read fewer halo rows: on AMD Zen 3 (512 KiB L2) y96
// beat y24 beyond noise in two races at radius 5, 7 and 8, a window of 2.6-4.2 times the L2
// (bench/results/2026-12-06-zen3-rings.md). A share outside them is refused (the model's default).
inline constexpr double kL2ShareMin = 0.05, kL2ShareMax = 8.0;
struct L2Share {
  double share = kL2Share;
  std::string how = "default";  // default or table
  std::string from = "the model's default";
};

// The model: whole rows along x (blocks along x were measured slower: the row kernel streams
// rows), the largest y block (a multiple of 8) whose window of prev (window_bytes) fits the L2 but
// at least 24 (the y halo's re-reads), and z blocks of 128 planes (the z halo is then re-read for
// one eighth of the points). Given (non-zero) dimensions of requested are kept.
struct CacheModel {
  Blocks blocks;
  std::uint64_t l1d_bytes = 0, l2_bytes = 0;
  double window_bytes = 0;      // of the model's blocks
  bool y_window_in_l1 = false;  // l1_fills: the y window of every plane of the register shape stays in L1d
  std::string why;
};
// What moves between L2 and L1d per interior point, in bytes, for the row kernel with a register
// shape of `planes` planes on blocks b (the Execution-Cache-Memory view of the kernel: the port
// bound says how fast the core computes once data is in L1, this how much must come to L1 first).
// The window of prev the y neighbours reuse is 17 rows of each plane; between two uses of one of
// its lines a row step also streams the 2 planes + 14 rows of the z window and a row of next and
// of vel per plane, so the window stays in L1 (under LRU) only if all of them fit together. Then
// each row of prev comes to L1 once per y block (with the 16 halo rows), otherwise the 16 y rows
// and the centre come again for every output row. The z rows come from L2 every time, and next
// (read), vel (read) and next (written back) pass through L1 once. A split shape's first pass walks
// one plane's 17 rows and a row of partial sums (which it writes, read for ownership and written
// back, and the second pass reads again); its second pass reads prev's centre again, unless it is a
// ring: then each plane of prev's row comes once for the chunk of planes (and the 16 about it), the
// centre among them.
struct L1Fills {
  bool y_window_in_l1 = false;
  double rows_needed = 0;  // rows of the block's width that must fit for the y window to stay
  double y = 0, z = 0, update = 0, partial_sums = 0;
  double total() const { return y + z + update + partial_sums; }
};
L1Fills l1_fills(const Grid& g, const Blocks& b, int planes, std::uint64_t l1d_bytes, bool split = false,
                 bool ring = false);
json l1_fills_json(const L1Fills& f, std::uint64_t l1d_bytes);

// planes, split, ring: the register shape's (register_planes(g.radius) and the others, of the
// active row kernel).
CacheModel model_blocks(const Grid& g, const Blocks& requested, std::uint64_t l1d_bytes, std::uint64_t l2_bytes,
                        int planes, bool split, bool ring = false, double l2_share = kL2Share);

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
                          int cpu, bool search, const L2Share& share = {});

}  // namespace bw::iso3dfd
