#include "iso3dfd/autoblocks.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "common/decide.hpp"
#include "common/topology.hpp"

namespace bw::iso3dfd {
namespace {

// Steps timed per candidate and round of the search (candidates alternate within a round, in an
// order rotated from round to round; the rounds are the decision rule's).
constexpr int kTimedSteps = 2;
// The smallest y block the model proposes: a block of y rows re-reads 16 halo rows of prev per
// plane, 67% more rows at 24 and 200% at 8 (measured slower than 24 on a 512 KiB L2, bench/README).
constexpr std::size_t kMinY = 24;
// A split shape's first pass brings each row of prev into L1 once per block of rows, so a small y
// block only re-reads the halo rows from L2: 8 measured as fast as 16-32 on Zen 4 (two threads)
// and faster on one (bench/results/2026-11-26-zen4.md).
constexpr std::size_t kMinYSplit = 8;
// Points per thread of the search grid: 272 x 112 x 32, a few milliseconds per step on one core.
constexpr double kSearchPointsPerThread = 272.0 * 112 * 32;

std::size_t interior(const Grid& g, std::size_t n) { return n - 2 * g.halo(); }

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::string kib(std::uint64_t bytes) { return std::to_string(bytes / 1024) + " KiB"; }

json blocks_json(const Blocks& b) { return json::array({b.b1, b.b2, b.b3}); }

}  // namespace

L1Fills l1_fills(const Grid& g, const Blocks& b, int planes, std::uint64_t l1d_bytes, bool split, bool ring) {
  const double P = planes, h = 2.0 * g.radius;
  const double b1 = static_cast<double>(std::min(b.b1, interior(g, g.n1)));
  const double b2 = static_cast<double>(std::min(b.b2, interior(g, g.n2)));
  const double row = sizeof(float);  // bytes per point of one row of one array
  L1Fills f;
  f.rows_needed = split ? (h + 1) + 1 : (h + 1) * P + (2 * P + h - 2) + 2 * P;
  f.y_window_in_l1 = l1d_bytes > 0 && f.rows_needed * b1 * row <= static_cast<double>(l1d_bytes);
  f.y = f.y_window_in_l1 ? row * (b2 + h) / b2 : row * (h + 1);
  f.z = ring ? row * (P + h) / P : row * (2 * P + h - 2) / P;
  f.update = (split && !ring ? 4 : 3) * row;
  f.partial_sums = split ? 3 * row : 0;
  return f;
}

json l1_fills_json(const L1Fills& f, std::uint64_t l1d_bytes) {
  return {{"bytes_per_point", f.total()},
          {"y_bytes_per_point", f.y},
          {"partial_sums_bytes_per_point", f.partial_sums},
          {"z_bytes_per_point", f.z},
          {"update_bytes_per_point", f.update},
          {"y_window_in_l1", f.y_window_in_l1},
          {"rows_needed_in_l1", f.rows_needed},
          {"l1d_bytes", l1d_bytes}};
}

CacheModel model_blocks(const Grid& g, const Blocks& requested, std::uint64_t l1d_bytes, std::uint64_t l2_bytes,
                        int planes, bool split, bool ring, double l2_share) {
  CacheModel m;
  m.l1d_bytes = l1d_bytes;
  m.l2_bytes = l2_bytes;
  m.blocks.b1 = requested.b1 ? requested.b1 : g.n1;
  m.blocks.b3 = requested.b3 ? requested.b3 : std::min<std::size_t>(128, interior(g, g.n3));
  const std::size_t ny = interior(g, g.n2);
  if (requested.b2) {
    m.blocks.b2 = requested.b2;
    m.why = "y block given";
  } else if (l2_bytes == 0) {
    m.blocks.b2 = std::min<std::size_t>(24, ny);
    m.why = "L2 size unknown (hwloc names none): y block 24";
  } else {
    const double room = l2_share * static_cast<double>(l2_bytes);
    std::size_t y = 8;
    while (y + 8 <= ny && window_bytes(g, Blocks{m.blocks.b1, y + 8, m.blocks.b3}, planes) <= room) y += 8;
    const double window = window_bytes(g, Blocks{m.blocks.b1, y, m.blocks.b3}, planes);
    m.why = "the window of prev (" + std::to_string(2 * g.radius + planes) + " planes of " +
            std::to_string(y + 2 * g.halo()) + " rows of " +
            std::to_string(std::min(m.blocks.b1, interior(g, g.n1)) + 2 * g.halo()) + " floats, " +
            std::to_string(static_cast<long>(window) / 1024) + " KiB) " + (window <= room ? "fits" : "does not fit") +
            " " + std::to_string(static_cast<int>(std::lround(100 * l2_share))) + "% of the " + kib(l2_bytes) +
            " L2 up to y block " + std::to_string(y);
    const std::size_t least = split ? kMinYSplit : kMinY;
    if (y < least) {
      y = least;
      m.why += "; raised to " + std::to_string(least) + ", below which the " + std::to_string(2 * g.radius) +
               " halo rows re-read per plane cost more " + "than the L2 misses of a larger window";
    }
    m.blocks.b2 = std::min(y, ny);
  }
  m.window_bytes = window_bytes(g, m.blocks, planes);
  m.y_window_in_l1 = l1_fills(g, m.blocks, planes, l1d_bytes, split, ring).y_window_in_l1;
  return m;
}

std::vector<std::size_t> y_candidates(const Grid& g, std::size_t model_y) {
  std::vector<std::size_t> ys = {model_y, 16, 24, 32, 48};
  for (std::size_t& y : ys) y = std::min(y, interior(g, g.n2));
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
  return ys;
}

Grid search_grid(const Grid& g, std::size_t largest_y, int threads) {
  Grid s{g.n1, 2 * g.halo() + std::min<std::size_t>(interior(g, g.n2), 2 * largest_y), 0, g.radius, g.p1};
  if (g.p2) s.p2 = padded_plane(s.pitch(), s.n2);  // planes laid out as the run's are
  s.lead = g.lead;
  s.offset = g.offset;
  const double per_thread = kSearchPointsPerThread / static_cast<double>(s.n1 * s.n2);
  const std::size_t planes = std::clamp<std::size_t>(static_cast<std::size_t>(per_thread), 2 * g.halo(), 32);
  s.n3 = 2 * g.halo() + std::min(interior(g, g.n3), planes * static_cast<std::size_t>(std::max(threads, 1)));
  return s;
}

BlockChoice choose_blocks(const Grid& g, const Blocks& requested, Schedule s, const Placement& placement, int threads,
                          int cpu, bool search, const L2Share& share) {
  const Topology& topo = Topology::instance();
  const CacheModel m =
      model_blocks(g, requested, topo.cache_bytes(1, cpu), topo.cache_bytes(2, cpu), register_planes(g.radius),
                   register_split(g.radius), register_ring(g.radius), share.share);
  auto given = [](std::size_t b) { return b ? json(b) : json("auto"); };
  json rec = {{"how", "auto"},
              {"requested", json::array({given(requested.b1), given(requested.b2), given(requested.b3)})},
              {"model",
               {{"blocks", blocks_json(m.blocks)},
                {"l1d_bytes", m.l1d_bytes},
                {"l2_bytes", m.l2_bytes},
                {"cpu", cpu},
                {"window_bytes", m.window_bytes},
                {"planes", register_planes(g.radius)},
                {"split", register_split(g.radius)},
                {"ring", register_ring(g.radius)},
                {"y_window_in_l1", m.y_window_in_l1},
                {"l2_share", share.share},
                {"l2_share_how", share.how},
                {"l2_share_from", share.from},
                {"why", m.why}}}};
  if (!search || requested.b2) {
    rec["why"] = "the model's blocks (" + m.why + "); not refined by measurement: " +
                 (requested.b2 ? std::string("the y block was given")
                  : search     ? std::string("nothing to time")
                               : std::string("the short search did not find blocks reliably faster than the "
                                                 "model's (bench/README.md); 'search' in a block argument runs it"));
    return {m.blocks, rec};
  }
  rec["how"] = "search";

  const std::vector<std::size_t> ys = y_candidates(g, m.blocks.b2);
  const Grid sg = search_grid(g, ys.back(), threads);
  Buffer prev(array_bytes(sg, 0), placement), next(array_bytes(sg, 1), placement), vel(array_bytes(sg, 2), placement);
  Fields f = fields_in(prev, next, vel, sg);
  initialise(f, sg, m.blocks, placement.serial_init(), threads);
  const Coefficients c = coefficients(g.radius);
  // rate[i][r]: MPoints per CPU second of candidate i in round r.
  const int rounds = decide::rule().rounds;
  std::vector<std::vector<double>> rate(ys.size(), std::vector<double>(static_cast<std::size_t>(rounds), 0.0));
  timespec w0{}, w1{};
  clock_gettime(CLOCK_MONOTONIC, &w0);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < ys.size(); ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(r)) % ys.size();  // rotate the order per round
      const double t0 = cpu_seconds();
      run(f, sg, Blocks{m.blocks.b1, ys[i], m.blocks.b3}, s, threads, kTimedSteps, c);
      const double dt = cpu_seconds() - t0;
      rate[i][static_cast<std::size_t>(r)] = dt > 0 ? static_cast<double>(sg.interior()) * kTimedSteps / dt / 1e6 : 0;
    }
  clock_gettime(CLOCK_MONOTONIC, &w1);

  // A candidate replaces the model's y block only when it is faster beyond noise under the decision
  // rule (common/decide.hpp): the rounds are paired, the same load on the machine, seconds apart.
  const std::size_t model = static_cast<std::size_t>(std::find(ys.begin(), ys.end(), m.blocks.b2) - ys.begin());
  std::vector<std::string> names;
  for (std::size_t y : ys) names.push_back("y" + std::to_string(y));
  const decide::Choice d = decide::choose_best(names, rate, model, "MPoints per CPU second");
  const std::size_t top = d.chosen;
  json cands = json::array();
  for (std::size_t i = 0; i < ys.size(); ++i)
    cands.push_back({{"blocks", blocks_json(Blocks{m.blocks.b1, ys[i], m.blocks.b3})}, {"mpoints_per_cpu_s", rate[i]}});
  rec["decision"] = d.record;
  rec["search"] = {
      {"grid", json::array({sg.n1, sg.n2, sg.n3})},
      {"rounds", rounds},
      {"timed_steps", kTimedSteps},
      {"seconds", static_cast<double>(w1.tv_sec - w0.tv_sec) + 1e-9 * static_cast<double>(w1.tv_nsec - w0.tv_nsec)},
      {"rate", "interior points x timed steps / process CPU seconds, per round"}};
  rec["candidates"] = cands;
  Blocks chosen = m.blocks;
  char buf[600];
  chosen.b2 = ys[top];
  std::snprintf(buf, sizeof buf, "%s on a %zux%zux%zu grid; model: %s", d.why.c_str(), sg.n1, sg.n2, sg.n3,
                m.why.c_str());
  rec["why"] = buf;
  return {chosen, rec};
}

}  // namespace bw::iso3dfd
