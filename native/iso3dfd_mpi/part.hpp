// One rank's part of the ISO3DFD grid over a 3-D Cartesian communicator: its box of the interior
// with halo layers on every side (itself a grid), the update of any box of it with the row kernel of
// the active variant, and the halo exchange with its neighbours along x, y and z.
//  - Step by step (time block 1): 8 layers on every side; the stencil reaches along one axis at a
//    time, so the faces suffice (no edges or corners), sent while the inner box is updated.
//  - Sweeps of N steps: 8 N layers on every face with a neighbour (8 at the grid's edges), of both
//    arrays (prev 8 N, next 8 (N - 1): the level before, read at the point alone), exchanged before
//    each sweep one axis after the other, each axis's faces spanning the halos the axes before it
//    received (so the edges and corners arrive too: two steps reach diagonally); then one sweep
//    (iso3dfd/timeblock.hpp) over the part and 8 (N - 1) layers of that halo, one level less a step.
#pragma once
#include <mpi.h>

#include <array>
#include <vector>

#include "common/llc_probe.hpp"
#include "common/placement.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/timeblock.hpp"
#include "iso3dfd/timemodel.hpp"
#include "iso3dfd_mpi/options.hpp"

namespace bw::iso3dfd::mpi {

struct Timers {
  double compute_s = 0;  // updating the part
  double wait_s = 0;     // in MPI_Waitall (the exchange not hidden behind the inner update)
  double post_s = 0;     // posting the sends and receives
};

class Part {
 public:
  // comm: a 3-D Cartesian communicator (dimensions z, y, x); allocates and first-touches (each
  // rank's own threads, through initialise()) the local prev, next and vel, then places the seed's
  // source at its global position.
  // cpu: one of the rank's CPUs, whose caches size the sweeps' tiles.
  Part(const Options& o, MPI_Comm comm, int threads, int cpu);
  ~Part();
  Part(const Part&) = delete;
  Part& operator=(const Part&) = delete;

  // One time step: the shell (the layers the neighbours need), its exchange posted, the inner box,
  // the wait.
  void step(Timers& t);
  // Time block N > 1: the deep exchange, then one sweep of d <= N steps.
  void sweep(int d, Timers& t);
  // --time-block auto over ranks: the proposal (the time-block model on this rank's part, the
  // shallowest over ranks, as deep as the parts' halos and the run's steps allow) raced against
  // single steps on the run's data, under the decision rule, every rank timing each round by the
  // slowest one, so all choose alike. Returns the steps the race took (0: no race).
  int race();
  // Advances `steps` steps, step by step or by sweeps of the chosen depth (the last the rest).
  void advance(int steps, Timers& t);
  // One exchange alone (next's faces, or the deep one), its seconds (for the share of it the steps hid).
  double exchange_alone();
  // The sweeps' tiles and team (time block > 1), as the time-block model fits them to the rank's
  // caches; null step by step.
  json sweep_record() const;
  // What auto decided and why (the proposal, the race's rounds); null when the depth was given.
  const json& choice() const { return choice_; }
  // The probe of whether the rank's threads share a last-level cache (why empty: not probed).
  const LlcProbe& llc() const { return llc_; }
  // Time steps per sweep the run advances by (after a race, the one it chose).
  int depth() const { return depth_; }
  int exchanges() const { return exchanges_; }
  int halo_depth() const { return halo_depth_; }
  // Points updated beyond the part's own (the halo computed again), a share of its own, over `steps`.
  double redundant_share(int steps) const;

  const Grid& local() const { return local_; }
  // Global index of this rank's first interior point along x, y, z, and its extents.
  const std::array<std::size_t, 3>& origin() const { return origin_; }
  const std::array<std::size_t, 3>& extent() const { return extent_; }
  // Bytes this rank sends a step (8 layers on every face with a neighbour; with sweeps, the deep
  // exchange's bytes over the time block).
  double halo_bytes() const;
  // Bytes of one exchange.
  double exchange_bytes() const;
  int neighbours() const;
  const Fields& fields() const { return f_; }
  // This rank's own points of the latest wavefield, x fastest.
  std::vector<float> owned() const;
  double local_sum_of_squares() const;

 private:
  void update(const std::vector<Box>& boxes);
  void post(float* next, MPI_Request* reqs);
  void exchange_deep(Timers& t);
  // prev's 8 layers at every face (after a sweep, before a step).
  void refresh_halo();
  // The deepest sweep every rank's part holds the halo of, and the time-block model's proposal.
  int proposed_depth(int cpu);
  // The region a sweep of d steps updates: the part and 8 (d - 1) layers of each halo a neighbour sent.
  SweepRegion region(int d) const;

  const Options& o_;
  MPI_Comm comm_;
  int threads_;
  std::array<int, 3> lower_{}, upper_{};  // neighbours along x, y, z (MPI_PROC_NULL at the edges)
  std::array<std::size_t, 3> origin_{}, extent_{};
  // Halo layers below and above the part along x, y, z (the local index of its first own point is lo_).
  std::array<std::size_t, 3> lo_{}, hi_{};
  int halo_depth_ = 1;       // the halos are 8 x this deep
  int depth_ = 1;            // steps a sweep (at most halo_depth_)
  int exchanges_ = 0;        // in the timed steps
  bool halo_stale_ = false;  // prev's 8 layers, after a sweep (a step needs them)
  TimeTiles tiles_{};
  TimeBlockModel model_{};
  LlcProbe llc_{};              // the rank's team, probed where it may sweep
  Teams team_ = Teams::Either;  // the teams the model may fit: slabs only across two caches
  json choice_;
  RacePlan plan_{};
  Grid local_;
  Buffer prev_, next_, vel_;
  Fields f_{};
  Coefficients c_;
  std::vector<Box> shell_, inner_;
  // Per dimension: the subarray of the 8 own layers sent down and up, and of the halo received;
  // with sweeps, of prev's 8 N layers (edges included), and next's 8 (N - 1) ([1]).
  std::array<MPI_Datatype, 3> send_lo_{}, send_hi_{}, recv_lo_{}, recv_hi_{};
  std::array<std::array<MPI_Datatype, 3>, 2> deep_send_lo_{}, deep_send_hi_{}, deep_recv_lo_{}, deep_recv_hi_{};
};

// The seed's source (nested cubes around (n1/4, n2/4, n3/2) of the whole grid) written into prev of
// a part whose first own point is the global point origin, at local index halo along each axis, as
// add_source() would write it into the whole grid.
void add_global_source(float* prev, const Grid& local, const Grid& global, const std::array<std::size_t, 3>& origin,
                       const std::array<std::size_t, 3>& halo);

}  // namespace bw::iso3dfd::mpi
