#include "iso3dfd/timeblock.hpp"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {
namespace {

// Signed: skewed ranges are computed before they are clipped to the interior.
using Index = long;

struct Span {
  Index lo, hi;
  bool empty() const { return hi <= lo; }
};

Span clip(Span a, Span b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

Index at(std::size_t v) { return static_cast<Index>(v); }

// Level s's rows in tile j of `tiles` (tiles of `rows` rows from the region's first row on), skewed
// back by R (s - 1): the first tile starts at the region's first row and the last ends at its last
// at every level (the sweeper shrinks a level at the faces the region marks), so each level's tiles
// cover its rows once.
Span tile_span(const SweepRegion& r, std::size_t rows, std::size_t j, std::size_t tiles, int s) {
  const Index first = at(r.lo[1]), last = at(r.hi[1]), back = Index{r.radius} * (s - 1);
  const Index n = at(rows), jj = at(j);
  return {j == 0 ? first : first + jj * n - back, j + 1 == tiles ? last : first + (jj + 1) * n - back};
}

// Level s of a sweep over a, b (a holds the latest level before the sweep, b the one before it)
// reads the array that holds level s - 1 and overwrites the one that holds level s - 2.
struct Level {
  const float* prev;
  float* next;
};

class Sweeper {
 public:
  Sweeper(const Grid& g, const Blocks& b, const Coefficients& c, const float* vel, const SweepRegion& r)
      : g_(g),
        r_(r),
        xs_(region_cuts(g, b.b1, r)),
        b2_(at(std::max<std::size_t>(b.b2, 1))),
        c_(c),
        vel_(vel),
        box_(swept_box(g)) {}

  Index rows_per_block() const { return b2_; }

  // The region's extent along axis d at level s: level 1's, less R (s - 1) at each face it marks.
  Span bounds(int d, int s) const {
    const Index back = Index{r_.radius} * (s - 1);
    const auto u = static_cast<std::size_t>(d);
    return {at(r_.lo[u]) + (r_.shrinks[u][0] ? back : 0), at(r_.hi[u]) - (r_.shrinks[u][1] ? back : 0)};
  }

  // Level s on rows y and planes z (within the region's level s), in boxes of the run's x and y
  // blocks.
  void level(float* a, float* b, int s, Span y, Span z) const {
    y = clip(y, bounds(1, s));
    z = clip(z, bounds(2, s));
    if (y.empty() || z.empty()) return;
    const Span x = bounds(0, s);
    const Level l = s % 2 ? Level{a, b} : Level{b, a};
    for (Index y0 = y.lo; y0 < y.hi; y0 += b2_)
      for (std::size_t i = 0; i + 1 < xs_.size(); ++i) {
        const Span xi = clip({at(xs_[i]), at(xs_[i + 1])}, x);
        if (xi.empty()) continue;
        box_(c_, l.prev, l.next, vel_, g_,
             Box{static_cast<std::size_t>(xi.lo), static_cast<std::size_t>(xi.hi), static_cast<std::size_t>(y0),
                 static_cast<std::size_t>(std::min(y0 + b2_, y.hi)), static_cast<std::size_t>(z.lo),
                 static_cast<std::size_t>(z.hi)});
      }
  }

 private:
  // The run's x cuts within the region's level-1 extent.
  static std::vector<std::size_t> region_cuts(const Grid& g, std::size_t b1, const SweepRegion& r) {
    std::vector<std::size_t> out{r.lo[0]};
    for (std::size_t x : x_cuts(g, std::max<std::size_t>(b1, 1)))
      if (x > r.lo[0] && x < r.hi[0]) out.push_back(x);
    out.push_back(r.hi[0]);
    return out;
  }

  const Grid& g_;
  SweepRegion r_;
  std::vector<std::size_t> xs_;
  Index b2_;
  const Coefficients& c_;
  const float* vel_;
  BoxFn box_;
};

// The region's planes split among `team` threads, as slabs() splits the interior.
std::vector<std::size_t> region_slabs(const SweepRegion& r, int team) {
  const std::size_t t = static_cast<std::size_t>(std::max(team, 1)), planes = r.hi[2] - r.lo[2];
  std::vector<std::size_t> s(t + 1);
  for (std::size_t i = 0; i <= t; ++i) s[i] = r.lo[2] + planes * i / t;
  return s;
}

// One sweep of depth d on the team; every thread calls it with its own slab [za, zb) and whether
// it shares its lower and upper faces.
void sweep(const Sweeper& w, float* a, float* b, const Grid& g, const SweepRegion& r, const TimeTiles& t, int d,
           const std::vector<std::size_t>& slab, int me, int team) {
  const std::size_t region_rows = r.hi[1] - r.lo[1];
  const std::size_t rows = std::min(t.tile_rows ? t.tile_rows : region_rows, region_rows);
  const std::size_t tiles = (region_rows + rows - 1) / rows;
  const Index chunk = at(std::max<std::size_t>(t.chunk, 1));
  const auto u = static_cast<std::size_t>(me);
  const Index za = at(slab[u]), zb = at(slab[u + 1]);
  const bool below = me > 0, above = me + 1 < team;
  // The trapezoids: this thread's slab alone, a wavefront along z in every tile.
  const Index steps = (zb - za + Index{r.radius} * (d - 1) + chunk - 1) / chunk;
  // Within a wavefront step, the tile's y blocks in order, each through every level: level s of
  // block k covers the block's rows skewed back by R (s - 1), as the tile's are (the stencil reaches
  // along one axis at a time, so the skew by its radius in y and in z each keeps it exact), and
  // reads what level s - 1 of the same block has just written.
  const Index by = w.rows_per_block();
  const Index blocks = (at(rows) + by - 1) / by;
  if (zb > za)
    for (std::size_t j = 0; j < tiles; ++j) {
      const Index start = at(r.lo[1]) + at(j) * at(rows);
      for (Index s0 = 0; s0 < steps; ++s0)
        for (Index k = 0; k < blocks; ++k)
          for (int s = 1; s <= d; ++s) {
            const Index back = Index{r.radius} * (s - 1);
            const Span trapezoid{za + (below ? back : 0), zb - (above ? back : 0)};
            const Span wave{za + s0 * chunk - back, za + (s0 + 1) * chunk - back};
            const Span block{k == 0 ? Index{0} : start + k * by - back,
                             k + 1 == blocks ? at(g.n2) : start + (k + 1) * by - back};
            w.level(a, b, s, clip(block, tile_span(r, rows, j, tiles, s)), clip(wave, trapezoid));
          }
    }
  if (team == 1 || d == 1) return;
#pragma omp barrier
  // The triangles about the shared faces, tile by tile and level by level: at level s each thread
  // the R (s - 1) planes of its own side of each face it shares, the planes its trapezoid left out
  // and its cache last held, all threads at once.
  for (std::size_t j = 0; j < tiles; ++j)
    for (int s = 2; s <= d; ++s) {
      const Index back = Index{r.radius} * (s - 1);
      const Span y = tile_span(r, rows, j, tiles, s);
      if (below) w.level(a, b, s, y, Span{za, za + back});
      if (above) w.level(a, b, s, y, Span{zb - back, zb});
#pragma omp barrier
    }
}

// One sweep of depth d by the team together: the wavefront of every tile over the whole interior,
// level by level within each wavefront step (level s of the tile's every y block after level s - 1
// of all of them: the skew by the radius keeps that order exact too), each level's rows split
// among the threads (its planes split would put every z neighbour of a thread's points in another
// core's cache), and a barrier after each level (it reads what the level before has just written
// around its points). A level of a whole tile is the unit of work between barriers, not a
// box of one y block: boxes of small blocks would leave the threads waiting more than working.
void sweep_shared(const Sweeper& w, float* a, float* b, const SweepRegion& r, const TimeTiles& t, int d, int me,
                  int team) {
  const std::size_t region_rows = r.hi[1] - r.lo[1];
  const std::size_t rows = std::min(t.tile_rows ? t.tile_rows : region_rows, region_rows);
  const std::size_t tiles = (region_rows + rows - 1) / rows;
  const Index chunk = at(std::max<std::size_t>(t.chunk, 1));
  const Span interior{at(r.lo[2]), at(r.hi[2])};
  const Index steps = (interior.hi - interior.lo + Index{r.radius} * (d - 1) + chunk - 1) / chunk;
  for (std::size_t j = 0; j < tiles; ++j)
    for (Index s0 = 0; s0 < steps; ++s0)
      for (int s = 1; s <= d; ++s) {
        const Index back = Index{r.radius} * (s - 1);
        const Span z = clip(clip({interior.lo + s0 * chunk - back, interior.lo + (s0 + 1) * chunk - back}, interior),
                            w.bounds(2, s));
        const Span y = clip(tile_span(r, rows, j, tiles, s), w.bounds(1, s));
        // the same for every thread, so all of them skip an empty level and its barrier alike
        if (z.empty() || y.empty()) continue;
        const Index n = y.hi - y.lo;
        w.level(a, b, s, Span{y.lo + n * me / team, y.lo + n * (me + 1) / team}, z);
#pragma omp barrier
      }
}

// Sweeps of t.depth steps (the last the rest) over region r until `steps` steps are done; on return
// f.prev holds the latest level.
void sweeps(Fields& f, const Grid& g, const Blocks& b, const TimeTiles& t, const SweepRegion& r, int threads, int steps,
            const Coefficients& c) {
  if (t.depth < 1) throw std::invalid_argument("a sweep's depth is at least 1 time step");
  TimeTiles tt = t;
  tt.tile_rows = tile_rows_for(r, t.tile_rows, t.depth);
  bool refused = false;
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
    // by the team's real size, as run() and the first touch
    const auto slab = region_slabs(r, team);
    if (t.depth > max_depth(r, team, t.shared)) {
#pragma omp atomic write
      refused = true;
    } else {
      flush_denormals();
      const Sweeper w(g, b, c, f.vel, r);
      float* a = f.prev;
      float* bb = f.next;
      for (int done = 0; done < steps;) {
        const int d = std::min(t.depth, steps - done);
        if (t.shared && team > 1)
          sweep_shared(w, a, bb, r, tt, d, me, team);
        else
          sweep(w, a, bb, g, r, tt, d, slab, me, team);
#pragma omp barrier
        if (d % 2) std::swap(a, bb);
        done += d;
      }
    }
  }
  if (refused)
    throw std::invalid_argument("a sweep of depth " + std::to_string(t.depth) + " needs thicker slabs than " +
                                std::to_string(threads) + " threads have in " + std::to_string(r.hi[2] - r.lo[2]) +
                                " planes (at most depth " + std::to_string(max_depth(r, threads)) + ")");
  if (steps % 2) std::swap(f.prev, f.next);
}

}  // namespace

SweepRegion whole_interior(const Grid& g) {
  SweepRegion r;
  const std::size_t h = g.halo();
  r.lo = {h, h, h};
  r.hi = {g.n1 - h, g.n2 - h, g.n3 - h};
  r.radius = g.radius;
  return r;
}

int max_depth(const SweepRegion& r, int threads, bool shared) {
  if (threads <= 1 || shared) return INT_MAX;
  const auto s = region_slabs(r, threads);
  long deepest = INT_MAX;
  for (std::size_t t = 0; t + 1 < s.size(); ++t) {
    const long planes = static_cast<long>(s[t + 1] - s[t]);
    // a face shared with another thread, and then also a face the region shrinks at (the triangle
    // about the shared face reads the trapezoid, which the region's face shrinks from its other end)
    const long shared_faces = (t > 0) + (t + 2 < s.size());
    const long region_faces = (t == 0 && r.shrinks[2][0]) + (t + 2 == s.size() && r.shrinks[2][1]);
    deepest = std::min(deepest, planes / (r.radius * (shared_faces + region_faces)) + 1);
  }
  return static_cast<int>(deepest);
}

int max_depth(const Grid& g, int threads, bool shared) { return max_depth(whole_interior(g), threads, shared); }

std::size_t tile_rows_for(const SweepRegion& r, std::size_t rows, int depth) {
  const std::size_t region = r.hi[1] - r.lo[1];
  if (rows == 0) return region;
  return std::min(region, std::max(rows, static_cast<std::size_t>(r.radius) * static_cast<std::size_t>(depth - 1)));
}

std::size_t tile_rows_for(const Grid& g, std::size_t rows, int depth) {
  return tile_rows_for(whole_interior(g), rows, depth);
}

void run_time_blocked(Fields& f, const Grid& g, const Blocks& b, const TimeTiles& t, int threads, int steps,
                      const Coefficients& c) {
  sweeps(f, g, b, t, whole_interior(g), threads, steps, c);
}

void sweep_region(Fields& f, const Grid& g, const Blocks& b, const TimeTiles& t, const SweepRegion& r, int threads,
                  const Coefficients& c) {
  sweeps(f, g, b, t, r, threads, t.depth, c);
}

}  // namespace bw::iso3dfd
