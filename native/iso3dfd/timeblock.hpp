// Temporal blocking of the ISO3DFD engine: several time steps per sweep over the grid, while the
// data of a tile stay in the last-level cache, so that memory is crossed once per sweep instead of
// once per step.
//
// The update is in place on two arrays (next = 2 prev - next + vel lap(prev), then the two swap):
// level s of a sweep (s = 1 .. depth) reads the array holding level s - 1 around each point and
// overwrites the one holding level s - 2 at the point. The scheme keeps that exact:
//  - split tiling in z across threads: every thread keeps its static slab of planes (the planes its
//    first touch placed), computing level s on its slab shrunk by 8 (s - 1) planes at every face it
//    shares with another thread (a trapezoid in z and time, no thread waits for another); then the
//    team fills the inverted triangles about every shared face, [m - 8 (s - 1), m + 8 (s - 1)) at
//    level s, together, level by level;
//  - within a slab, tiles of whole rows along x and tile_rows rows along y, skewed back by 8 rows a
//    level (level s of tile j ends 8 (s - 1) rows before the tile's start, except at the interior's
//    edges), taken in order: a tile reads only levels its predecessor has finished, and its
//    predecessor has overwritten none of them (the radius is the skew);
//  - within a tile, a wavefront along z: chunks of `chunk` planes, level s 8 (s - 1) planes behind
//    level 1, levels in order, so the planes in flight are those of the wavefront window.
// Every box of every level goes to the row kernel of the active variant with the run's cache blocks
// (along x and y), so the variant and its blocks are those of the step-by-step run.
//
// Over MPI ranks the same sweep runs on a rank's part with halos 8 x depth deep: the region a sweep
// updates is the part's points and, at every face another rank's part lies beyond, 8 (depth - 1)
// layers of that halo, one level less at each step (the trapezoid of the faces threads share,
// without its triangle: the neighbour computes those points as its own).
#pragma once
#include <array>
#include <cstddef>

#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

struct TimeTiles {
  int depth = 1;              // time steps per sweep
  std::size_t tile_rows = 0;  // y rows of a tile (0: the whole interior)
  std::size_t chunk = 8;      // planes a level advances per wavefront step
  // The team sweeps one wavefront together (each level of a tile's wavefront step with its rows
  // split among the threads, a barrier after each level) instead of a slab each: one window in the
  // shared cache instead of one a thread, no triangles, any depth; the threads then read planes
  // other threads first touched.
  bool shared = false;
};

// The points a sweep updates: level 1 on [lo, hi) along x, y and z, level s on that box less
// 8 (s - 1) at each face marked in `shrinks` ([axis][0]: the lower face, [1]: the upper). It lies
// within the grid's interior; the whole interior with no face marked is one process's sweep.
struct SweepRegion {
  std::array<std::size_t, 3> lo{}, hi{};
  std::array<std::array<bool, 2>, 3> shrinks{};
  int radius = kSeedRadius;  // the stencil's: each level shrinks by it at a face the region marks
};

SweepRegion whole_interior(const Grid& g);

// The deepest sweep the static slabs of `threads` threads allow: a slab shared on both faces must
// hold the two triangles (2R (depth - 1) planes), one on a single face R (depth - 1); any depth
// with one thread, or with the team sweeping together (shared).
int max_depth(const Grid& g, int threads, bool shared = false);
// The same for the region's planes: a slab that shares a face with another thread and lies at a
// face the region shrinks at counts that face too.
int max_depth(const SweepRegion& r, int threads, bool shared = false);

// Tile rows as the scheme needs them for depth d: at least 8 (d - 1) so a tile's first level-d rows
// exist, at most the interior.
std::size_t tile_rows_for(const Grid& g, std::size_t rows, int depth);
std::size_t tile_rows_for(const SweepRegion& r, std::size_t rows, int depth);

// Advances `steps` time steps, t.depth per sweep (the last sweep the rest), on threads OpenMP
// threads with the active row kernel; on return f.prev holds the latest wavefield, as run(). The
// depth is at most max_depth (std::invalid_argument otherwise).
void run_time_blocked(Fields& f, const Grid& g, const Blocks& b, const TimeTiles& t, int threads, int steps,
                      const Coefficients& c);

// One sweep of t.depth steps over region r of g (f.prev holding the latest level, f.next the one
// before, both valid on level 1's box and 8 around it); on return f.prev holds the newest level,
// valid on the region's level t.depth. std::invalid_argument as run_time_blocked.
void sweep_region(Fields& f, const Grid& g, const Blocks& b, const TimeTiles& t, const SweepRegion& r, int threads,
                  const Coefficients& c);

}  // namespace bw::iso3dfd
