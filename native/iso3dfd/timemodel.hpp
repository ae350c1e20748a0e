// The model of temporal blocking (iso3dfd/timeblock.hpp): for a depth and a tile, the bytes a tile's
// wavefront keeps in flight, the cache level that holds them, and the bytes per point and time step
// that still cross memory; and the depth and tile it proposes for a run. `--time-block auto` runs the
// proposal against step-by-step sweeps on the run's own data under the decision rule
// (common/decide.hpp) and keeps depth 1 unless the proposal is faster beyond noise; when the run's
// steps cut the race short of the proposal, the model calibrated by the race says how deep.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/decide.hpp"
#include "common/record.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

// Who sweeps what: a slab of planes per thread (trapezoids, then the triangles about shared faces
// together), the whole team on one wavefront (TimeTiles::shared), or whichever costs less.
enum class Teams { Slabs, Shared, Either };

// How many times memory's bandwidth the last-level cache feeds the team with, where the table of
// measured choices has no figure for the CPU (iso3dfd/caches.hpp).
inline constexpr double kCacheOverMemory = 2.0;

// Which cache the sweeps' tiles are sized for (--tile-cache): whichever the model's cost prefers
// (L2, else the last-level cache), L2 only or the last-level cache only (a depth without such a tile
// takes the model's). Per CPU and variant by measurement: on the Intel Xeon with AMX at radius 3,
// 256^3, AVX-512, L2 tiles of depth 4 ran 1.07-1.10x the model's L3 tiles of depth 8 (wavefront
// steps of 8 planes at least); with thinner steps the model's L2 tiles ran AVX2's 2x2 at 0.95x the
// L3 tiles of depth 8 (bench/results/2026-12-03-tile-cache-intel-amx.md).
enum class TileCache { Model, L2, L3 };

// The caches the model sees: L2 a core, the last-level cache the team shares (0: unknown), how
// many times memory's bandwidth that cache feeds the team with (per CPU: iso3dfd/caches.hpp), which
// of them the tiles are sized for, and the planes the sweeps' register shape computes together (a
// wavefront step of fewer planes would compute them one at a time, so chunks are at least as
// thick; 8 where the shape is not known, the thinnest chunk the model took before it knew shapes).
struct Caches {
  std::uint64_t l2 = 0, l3 = 0;
  double llc_over_memory = kCacheOverMemory;
  TileCache tiles = TileCache::Model;
  std::size_t shape_planes = 8;
};

struct TimeBlockModel {
  int depth = 1;
  bool shared = false;                             // the team on one wavefront (one window in the cache)
  std::size_t tile_rows = 0;                       // y rows of a tile (the interior's when one tile)
  std::size_t tiles = 1;                           // along y
  std::size_t chunk = 8;                           // planes per wavefront step
  double window_bytes = 0;                         // of prev, next and vel a thread's wavefront keeps in flight
  std::string level;                               // where that window stays: L2, L3, or memory (it fits neither)
  double memory_bytes_per_point = kBytesPerPoint;  // per interior point and time step
  // From the last-level cache into L2 per point and step: a box re-reads prev's 2R halo planes;
  // a window L2 holds takes from beyond it only what the sweep reads from memory.
  double llc_bytes_per_point = 0;
  double llc_over_memory = kCacheOverMemory;  // the caches' (Caches::llc_over_memory)
  double shared_face_share = 0;               // of the points, in the triangles the team computes together
  // The rows a tile re-reads from the tile before come from the last-level cache (it holds what a
  // tile sweep reads in between), else from memory.
  bool rereads_in_llc = false;
  std::string why;
  // What the model minimises: the memory bytes and the last-level cache's, the latter at
  // llc_over_memory times memory's bandwidth.
  double cost() const;
  // What the calibrated model scales with (calibrated_prediction): the memory bytes, and what only
  // the last-level cache moves into L2 (beyond the memory bytes) at its bandwidth, in bytes of
  // memory's.
  double memory_equivalent_bytes() const;
  json to_json() const;
};

// Whether a fit may run as sweeps under caches.tiles: its window fits a cache, the one the tiles are
// sized for when not the model's.
bool tiles_allowed(const TimeBlockModel& m, const Caches& caches);

// The team sweeps together (Teams::Either) only when that costs less than this share of the slabs'
// cost.
inline constexpr double kTeamSaves = 0.8;

// The model for depth d with tiles of `rows` y rows (0: the whole interior) on `threads` threads,
// with `caches`; shared: the team on one wavefront, whose one window the last-level cache holds for
// all (else one window a thread).
TimeBlockModel time_block_model(const Grid& g, int depth, std::size_t rows, int threads, const Caches& caches,
                                std::size_t chunk = 8, bool shared = false);

// Depth d in chunks of 128, 64, 32, 16, 8, 4 or 2 planes (at least caches.shape_planes), each on the largest tile (the
// whole interior, else a multiple of 8 rows) whose window a cache holds, by slabs (when the slabs allow depth d) or the
// team together as `teams` allows: the one that costs least, the team's only when it saves a fifth of the slabs' cost
// (kTeamSaves) or only it fits a cache. With caches.tiles L2 (L3), only windows that cache holds compete (none: as
// with the model's).
TimeBlockModel fit_time_block(const Grid& g, int depth, int threads, const Caches& caches, Teams teams = Teams::Slabs);

// The proposal: for each depth from 2 up to max_depth (at most 8), the chunk and the largest tile
// whose window the caches hold (the one caches.tiles names, when not the model's) that cost least; the depth that costs
// least (the shallower when within 5%), or depth 1 when none saves a fifth of the memory bytes and costs less than
// depth 1.
TimeBlockModel propose_time_block(const Grid& g, int threads, int max_depth, const Caches& caches,
                                  Teams teams = Teams::Slabs);

// The model calibrated by a race: depth 1's measured rate (rate1, MPoints/s) and the raced depth's
// (rate_d) split a point's time step by step into a part that stays in cache and a memory part that
// scales with the memory bytes a point and step; the rates it predicts for depths 1 to 8 (those the
// slabs allow and whose window a cache holds), and the best of them (the shallowest within the
// decision rule's margin of the fastest).
json calibrated_prediction(const Grid& g, int threads, int max_depth, const Caches& caches, double rate1,
                           const TimeBlockModel& raced, double rate_d, Teams teams = Teams::Slabs);

// Sweeps a race chose are kept for later runs only once a second race in a row under the same key
// has settled on sweeps too: a race settles at the decision rule's confidence, so about one race in
// twenty would keep sweeps that are not faster, and a kept depth is not raced again. Depth 1 (the
// default) needs no second race.
inline constexpr int kRacesToKeepSweeps = 2;
// How many races in a row under a key, this one included, have settled on sweeps: one more than the
// entry kept there before (`races`, 1 when absent) when that entry settled on sweeps on the same CPU,
// else 1 (also for a race that settled on depth 1).
int races_in_a_row(const json* earlier, int depth, const std::string& cpu);

// A race that cannot tell sweeps from single steps is not thrown away: its rounds are kept under the
// run's key (an entry that is not decisive, which no run takes its depth from) and the next race
// like it decides on all of them, so that the noise of a few rounds does not make one run sweep and
// the next not. Once this many rounds leave it undecided, depth 1 stands: kept as settled, and not
// raced again (--time-block measure, or bandwall db time-blocks --forget, races again).
inline constexpr int kPooledRoundsToSettle = 20;
// The rounds to decide on: those of the earlier race kept under the key (rates of single steps and of
// the sweep, round by round, in its "race" record) followed by this race's, when that race was run
// on the same CPU at the same depth and team; else this race's alone. runs: how many races the
// rounds come from.
struct PooledRace {
  std::vector<std::vector<double>> rates;  // [0] single steps, [1] the sweep
  int runs = 1;
};
PooledRace pool_race(const json* earlier, const std::vector<std::vector<double>>& rates, int depth,
                     const std::string& team, const std::string& cpu);

// How a run of `iterations` steps races the proposed depth against single steps: one single step to
// warm up, then `rounds` rounds (most_rounds when the first leave the race unsettled), all within
// three quarters of the run's steps. A round is a sweep of `depth` steps (the proposal's, at most
// what a round affords, which leaves a round at least one single step) and `singles` single steps:
// as many as the sweep's when the round affords them (the same work), else fewer (the rates are a
// point and step, so a sweep of 4 steps may face one single step). depth < 2: the run is too short
// to race (fewest_steps is the shortest run that races depth 2).
struct RacePlan {
  int depth = 0, singles = 0, most_rounds = 0, fewest_steps = 0;
  bool may_add = false;  // the rounds an unsettled race adds fit in the run too
};
RacePlan plan_race(int proposed, int iterations, int rounds, int most_rounds);

// The race's rounds, as one process and a grid of ranks run them: the rule's rounds, then, when the
// plan affords them and those leave the race unsettled, up to plan.most_rounds (the choice is made
// after all of them, never at a round in between). Round r calls leg(c) for c = 0 (the single steps)
// and c = 1 (the sweep), the first alternating from round to round; a leg pushes its rate into
// rates[c]. Returns the rounds run.
int race_rounds(const RacePlan& plan, const std::vector<std::vector<double>>& rates,
                const std::function<void(int)>& leg);

// The race of a sweep of plan.depth steps against single steps, written once for one process and
// for a grid of ranks: warm() runs one single step untimed (the first step after the first touch
// runs slower); then race_rounds' rounds, each leg timed by seconds(n, sweep): n single steps
// (sweep false) or one sweep of n steps, the seconds it took (over ranks the slowest rank's, so
// every rank decides alike). Rates are points * n / seconds in MPoints/s; the decision rule picks
// the depth (the default: single steps).
struct RaceOutcome {
  decide::Choice choice;
  std::vector<std::vector<double>> rates;  // [0] single steps, [1] the sweep, MPoints/s per round
  int depth = 1;                           // the race's pick: plan.depth or 1
  int steps = 0;                           // the steps it took, the warm-up's included
  int rounds_added = 0;                    // rounds beyond the rule's, for an unsettled race
  // config.time_block's fields of a race: depth, how "race", why, race, race_steps,
  // race_single_steps, race_rounds_added, note.
  json record(const RacePlan& plan, const std::string& note) const;
};
RaceOutcome race_depth(const RacePlan& plan, double points, const std::function<void()>& warm,
                       const std::function<double(int n, bool sweep)>& seconds);

// The --time-block grammar of every ISO3DFD tool: auto, measure or a depth from 1 to kMaxTimeBlock.
inline constexpr int kMaxTimeBlock = 64;
struct TimeBlockRequest {
  std::string text;  // as given
  int depth = 0;     // the depth given; 0 for auto and measure
  bool measure = false;
  bool automatic() const { return depth == 0; }
};
// UsageError in one line for anything else.
TimeBlockRequest parse_time_block(const std::string& text);
// The grammar for the manifest: {"words", "max", "syntax"}.
json time_block_grammar();

// What the model adds to a race a run's steps cut short (a run of 40 steps races depth 4 at most):
// when the race chose sweeps (depth `raced` > 1, measured at rate_raced MPoints/s, faster than depth
// 1 beyond noise), the calibrated model's best depth if it is deeper and predicted faster than that
// measured rate beyond the decision rule's margin: {"from", "to", "predicted_mpoints_per_s",
// "measured_mpoints_per_s", "why"}; null otherwise (the race's depth stands). The measurement
// says that sweeps pay, the model how deep.
json deeper_by_model(const json& calibrated, int raced, double rate_raced);

}  // namespace bw::iso3dfd
