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

// Level s's rows in tile j of `tiles` (tiles of `rows` rows from the interior's first row on),
// skewed back by 8 (s - 1): the first tile starts at the interior's first row and the last ends at
// its last at every level, so each level's tiles cover the interior's rows once.
Span tile_span(const Grid& g, std::size_t rows, std::size_t j, std::size_t tiles, int s) {
  const Index first = kHalf, last = at(g.n2) - kHalf, back = Index{kHalf} * (s - 1);
  const Index r = at(rows), jj = at(j);
  return {j == 0 ? first : first + jj * r - back, j + 1 == tiles ? last : first + (jj + 1) * r - back};
}

// Level s of a sweep over a, b (a holds the latest level before the sweep, b the one before it)
// reads the array that holds level s - 1 and overwrites the one that holds level s - 2.
struct Level {
  const float* prev;
  float* next;
};

class Sweeper {
 public:
  Sweeper(const Grid& g, const Blocks& b, const Coefficients& c, const float* vel)
      : g_(g), xs_(x_cuts(g, b.b1)), b2_(at(std::max<std::size_t>(b.b2, 1))), c_(c), vel_(vel), box_(active_box()) {}

  Index rows_per_block() const { return b2_; }

  // Level s on rows y and planes z, in boxes of the run's x and y blocks: the boxes k with
  // k % parts == part (counted on from *k, so that several calls share one count).
  void level(float* a, float* b, int s, Span y, Span z, int part = 0, int parts = 1, long* k = nullptr) const {
    if (y.empty() || z.empty()) return;
    const Level l = s % 2 ? Level{a, b} : Level{b, a};
    long own = 0;
    long& n = k ? *k : own;
    for (Index y0 = y.lo; y0 < y.hi; y0 += b2_)
      for (std::size_t i = 0; i + 1 < xs_.size(); ++i)
        if (n++ % parts == part)
          box_(c_, l.prev, l.next, vel_, g_,
               Box{xs_[i], xs_[i + 1], static_cast<std::size_t>(y0), static_cast<std::size_t>(std::min(y0 + b2_, y.hi)),
                   static_cast<std::size_t>(z.lo), static_cast<std::size_t>(z.hi)});
  }

 private:
  const Grid& g_;
  std::vector<std::size_t> xs_;
  Index b2_;
  const Coefficients& c_;
  const float* vel_;
  BoxFn box_;
};

// One sweep of depth d on the team; every thread calls it with its own slab [za, zb) and whether
// it shares its lower and upper faces.
void sweep(const Sweeper& w, float* a, float* b, const Grid& g, const TimeTiles& t, int d,
           const std::vector<std::size_t>& slab, int me, int team) {
  const std::size_t interior_rows = g.n2 - 2 * kHalf;
  const std::size_t rows = std::min(t.tile_rows ? t.tile_rows : interior_rows, interior_rows);
  const std::size_t tiles = (interior_rows + rows - 1) / rows;
  const Index chunk = at(std::max<std::size_t>(t.chunk, 1));
  const auto u = static_cast<std::size_t>(me);
  const Index za = at(slab[u]), zb = at(slab[u + 1]);
  const bool below = me > 0, above = me + 1 < team;
  // The trapezoids: this thread's slab alone, a wavefront along z in every tile.
  const Index steps = (zb - za + Index{kHalf} * (d - 1) + chunk - 1) / chunk;
  // Within a wavefront step, the tile's y blocks in order, each through every level: level s of
  // block k covers the block's rows skewed back by 8 (s - 1), as the tile's are (the stencil reaches
  // along one axis at a time, so the skew by its radius in y and in z each keeps it exact), and
  // reads what level s - 1 of the same block has just written.
  const Index by = w.rows_per_block();
  const Index blocks = (at(rows) + by - 1) / by;
  if (zb > za)
    for (std::size_t j = 0; j < tiles; ++j) {
      const Index start = Index{kHalf} + at(j) * at(rows);
      for (Index s0 = 0; s0 < steps; ++s0)
        for (Index k = 0; k < blocks; ++k)
          for (int s = 1; s <= d; ++s) {
            const Index back = Index{kHalf} * (s - 1);
            const Span trapezoid{za + (below ? back : 0), zb - (above ? back : 0)};
            const Span wave{za + s0 * chunk - back, za + (s0 + 1) * chunk - back};
            const Span block{k == 0 ? Index{0} : start + k * by - back,
                             k + 1 == blocks ? at(g.n2) : start + (k + 1) * by - back};
            w.level(a, b, s, clip(block, tile_span(g, rows, j, tiles, s)), clip(wave, trapezoid));
          }
    }
  if (team == 1 || d == 1) return;
#pragma omp barrier
  // The triangles about the shared faces, by the whole team, tile by tile and level by level.
  for (std::size_t j = 0; j < tiles; ++j)
    for (int s = 2; s <= d; ++s) {
      const Index back = Index{kHalf} * (s - 1);
      long k = 0;
      for (std::size_t f = 1; f < slab.size() - 1; ++f)
        w.level(a, b, s, tile_span(g, rows, j, tiles, s), Span{at(slab[f]) - back, at(slab[f]) + back}, me, team, &k);
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
void sweep_shared(const Sweeper& w, float* a, float* b, const Grid& g, const TimeTiles& t, int d, int me, int team) {
  const std::size_t interior_rows = g.n2 - 2 * kHalf;
  const std::size_t rows = std::min(t.tile_rows ? t.tile_rows : interior_rows, interior_rows);
  const std::size_t tiles = (interior_rows + rows - 1) / rows;
  const Index chunk = at(std::max<std::size_t>(t.chunk, 1));
  const Span interior{Index{kHalf}, at(g.n3) - kHalf};
  const Index steps = (interior.hi - interior.lo + Index{kHalf} * (d - 1) + chunk - 1) / chunk;
  for (std::size_t j = 0; j < tiles; ++j)
    for (Index s0 = 0; s0 < steps; ++s0)
      for (int s = 1; s <= d; ++s) {
        const Index back = Index{kHalf} * (s - 1);
        const Span z = clip({interior.lo + s0 * chunk - back, interior.lo + (s0 + 1) * chunk - back}, interior);
        const Span y = tile_span(g, rows, j, tiles, s);
        // the same for every thread, so all of them skip an empty level and its barrier alike
        if (z.empty() || y.empty()) continue;
        const Index n = y.hi - y.lo;
        w.level(a, b, s, Span{y.lo + n * me / team, y.lo + n * (me + 1) / team}, z);
#pragma omp barrier
      }
}

}  // namespace

int max_depth(const Grid& g, int threads, bool shared) {
  if (threads <= 1 || shared) return INT_MAX;
  const auto s = slabs(g, threads);
  long deepest = INT_MAX;
  for (std::size_t t = 0; t + 1 < s.size(); ++t) {
    const long planes = static_cast<long>(s[t + 1] - s[t]);
    const long faces = (t > 0) + (t + 2 < s.size());
    deepest = std::min(deepest, planes / (kHalf * faces) + 1);
  }
  return static_cast<int>(deepest);
}

std::size_t tile_rows_for(const Grid& g, std::size_t rows, int depth) {
  const std::size_t interior = g.n2 - 2 * kHalf;
  if (rows == 0) return interior;
  return std::min(interior, std::max(rows, static_cast<std::size_t>(kHalf) * static_cast<std::size_t>(depth - 1)));
}

void run_time_blocked(Fields& f, const Grid& g, const Blocks& b, const TimeTiles& t, int threads, int steps,
                      const Coefficients& c) {
  if (t.depth < 1) throw std::invalid_argument("a sweep's depth is at least 1 time step");
  TimeTiles tt = t;
  tt.tile_rows = tile_rows_for(g, t.tile_rows, t.depth);
  bool refused = false;
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), me = omp_get_thread_num();
    // by the team's real size, as run() and the first touch
    const auto slab = slabs(g, team);
    if (t.depth > max_depth(g, team, t.shared)) {
#pragma omp atomic write
      refused = true;
    } else {
      flush_denormals();
      const Sweeper w(g, b, c, f.vel);
      float* a = f.prev;
      float* bb = f.next;
      for (int done = 0; done < steps;) {
        const int d = std::min(t.depth, steps - done);
        if (t.shared && team > 1)
          sweep_shared(w, a, bb, g, tt, d, me, team);
        else
          sweep(w, a, bb, g, tt, d, slab, me, team);
#pragma omp barrier
        if (d % 2) std::swap(a, bb);
        done += d;
      }
    }
  }
  if (refused)
    throw std::invalid_argument("a sweep of depth " + std::to_string(t.depth) + " needs thicker slabs than " +
                                std::to_string(threads) + " threads have in " + std::to_string(g.n3 - 2 * kHalf) +
                                " interior planes (at most depth " + std::to_string(max_depth(g, threads)) + ")");
  if (steps % 2) std::swap(f.prev, f.next);
}

}  // namespace bw::iso3dfd
