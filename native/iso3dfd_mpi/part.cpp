#include "iso3dfd_mpi/part.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "common/decide.hpp"
#include "common/topology.hpp"
#include "iso3dfd/caches.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd::mpi {

namespace {

constexpr int kTagUp = 10, kTagDown = 20;

std::size_t along(const Grid& g, int axis) { return axis == 0 ? g.n1 : axis == 1 ? g.n2 : g.n3; }

// The blocks of region (local coordinates) in the run's cache blocks.
void blocks_of(const Box& r, const Blocks& b, std::vector<Box>& out) {
  if (r.x1 <= r.x0 || r.y1 <= r.y0 || r.z1 <= r.z0) return;
  const std::size_t b1 = std::max<std::size_t>(b.b1, 1), b2 = std::max<std::size_t>(b.b2, 1),
                    b3 = std::max<std::size_t>(b.b3, 1);
  for (std::size_t z = r.z0; z < r.z1; z += b3)
    for (std::size_t y = r.y0; y < r.y1; y += b2)
      for (std::size_t x = r.x0; x < r.x1; x += b1)
        out.push_back(Box{x, std::min(x + b1, r.x1), y, std::min(y + b2, r.y1), z, std::min(z + b3, r.z1)});
}

}  // namespace

void add_global_source(float* prev, const Grid& local, const Grid& global, const std::array<std::size_t, 3>& origin,
                       const std::array<std::size_t, 3>& halo) {
  // As add_source(): s = 5 .. 0 writes 1, 10, ... into [c-s, c+s), clipped to the interior, here
  // also to this part's points with their halo (global [origin - halo, origin + extent + halo)).
  const long h = global.radius;
  const long n[3] = {static_cast<long>(global.n1), static_cast<long>(global.n2), static_cast<long>(global.n3)};
  const long first[3] = {static_cast<long>(origin[0]) - static_cast<long>(halo[0]),
                         static_cast<long>(origin[1]) - static_cast<long>(halo[1]),
                         static_cast<long>(origin[2]) - static_cast<long>(halo[2])};
  const long end[3] = {first[0] + static_cast<long>(local.n1), first[1] + static_cast<long>(local.n2),
                       first[2] + static_cast<long>(local.n3)};
  const long c[3] = {n[0] / 4, n[1] / 4, n[2] / 2};
  float val = 1.0f;
  for (long s = 5; s >= 0; --s) {
    long lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::max({c[d] - s, h, first[d]});
      hi[d] = std::min({c[d] + s, n[d] - h, end[d]});
    }
    for (long z = lo[2]; z < hi[2]; ++z)
      for (long y = lo[1]; y < hi[1]; ++y)
        for (long x = lo[0]; x < hi[0]; ++x)
          prev[local.index(static_cast<std::size_t>(x - first[0]), static_cast<std::size_t>(y - first[1]),
                           static_cast<std::size_t>(z - first[2]))] = val;
    val *= 10.0f;
  }
}

Part::Part(const Options& o, MPI_Comm comm, int threads, int cpu)
    : o_(o), comm_(comm), threads_(threads), c_(coefficients(o.global.radius)) {
  for (auto* types : {&send_lo_, &send_hi_, &recv_lo_, &recv_hi_}) types->fill(MPI_DATATYPE_NULL);
  for (auto* both : {&deep_send_lo_, &deep_send_hi_, &deep_recv_lo_, &deep_recv_hi_})
    for (auto& types : *both) types.fill(MPI_DATATYPE_NULL);
  int me = 0, coords[3] = {0, 0, 0};  // z, y, x
  MPI_Comm_rank(comm, &me);
  MPI_Cart_coords(comm, me, 3, coords);
  for (int d = 0; d < 3; ++d) {
    MPI_Cart_shift(comm, 2 - d, 1, &lower_[d], &upper_[d]);
    const std::size_t c = static_cast<std::size_t>(coords[2 - d]);
    origin_[d] = o.cuts[d][c];
    extent_[d] = o.cuts[d][c + 1] - o.cuts[d][c];
  }
  // auto and measure: the halos as deep as the race's sweeps (the run's depth is chosen later)
  const bool racing = o.time_block_requested == "auto" || o.time_block_requested == "measure";
  // Whether the rank's threads share a last-level cache, measured (common/llc_probe.hpp): the model
  // lets them sweep together only where they do (a virtual machine's host may split them).
  if (racing || o.time_block > 1) llc_ = probe_team_llc(threads_);
  team_ = llc_.ran && !llc_.shared ? Teams::Slabs : Teams::Either;
  halo_depth_ = racing ? proposed_depth(cpu) : o.time_block;
  depth_ = racing ? 1 : halo_depth_;
  const std::size_t h = o.global.halo(), deep = h * static_cast<std::size_t>(halo_depth_);
  for (int d = 0; d < 3; ++d) {
    lo_[d] = lower_[d] != MPI_PROC_NULL ? deep : h;
    hi_[d] = upper_[d] != MPI_PROC_NULL ? deep : h;
  }
  local_ =
      Grid{lo_[0] + extent_[0] + hi_[0], lo_[1] + extent_[1] + hi_[1], lo_[2] + extent_[2] + hi_[2], o.global.radius};
  // rows packed (a part's rows rarely end on a vector: its last store is masked), the arrays a
  // third of a page apart as one process's are by default (kArrayOffset)
  local_.offset = kArrayOffset;
  prev_ = Buffer(array_bytes(local_, 0), o.placement);
  next_ = Buffer(array_bytes(local_, 1), o.placement);
  vel_ = Buffer(array_bytes(local_, 2), o.placement);
  f_ = fields_in(prev_, next_, vel_, local_);
  // First touch by this rank's threads in the compute loop's order; initialise() also writes the
  // source where it would be in a grid of this part's size, so prev is cleared (its pages already
  // placed) and the source is written where it is in the whole grid.
  initialise(f_, local_, o.blocks, false, threads);
  float* prev = f_.prev;
  const long n = static_cast<long>(local_.points());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) prev[i] = 0.0f;
  add_global_source(f_.prev, local_, o.global, origin_, lo_);

  // The inner box: the part less the R layers on every face with a neighbour; the shell: the rest of
  // the part, in slabs (z below and above, then y, then x within the inner z and y).
  std::array<std::size_t, 3> lo{}, hi{}, end{};
  for (int d = 0; d < 3; ++d) {
    end[d] = lo_[d] + extent_[d];
    lo[d] = std::min(lo_[d] + (lower_[d] != MPI_PROC_NULL ? h : 0), end[d]);
    hi[d] = std::max(end[d] - (upper_[d] != MPI_PROC_NULL ? std::min(h, extent_[d]) : 0), lo[d]);
  }
  const Blocks& b = o.blocks;
  const std::size_t x0 = lo_[0], y0 = lo_[1], z0 = lo_[2];
  blocks_of(Box{x0, end[0], y0, end[1], z0, lo[2]}, b, shell_);
  blocks_of(Box{x0, end[0], y0, end[1], hi[2], end[2]}, b, shell_);
  blocks_of(Box{x0, end[0], y0, lo[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{x0, end[0], hi[1], end[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{x0, lo[0], lo[1], hi[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{hi[0], end[0], lo[1], hi[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]}, b, inner_);

  // The faces as subarrays of the local array (C order: z, y, x).
  const int sizes[3] = {static_cast<int>(local_.n3), static_cast<int>(local_.n2), static_cast<int>(local_.pitch())};
  auto make = [&](const int(&sub)[3], const int(&start)[3]) {
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    return t;
  };
  const auto I = [](std::size_t v) { return static_cast<int>(v); };
  {  // step by step (also between the sweeps a race times)
    for (int d = 0; d < 3; ++d) {
      const int k = 2 - d;
      int sub[3] = {I(extent_[2]), I(extent_[1]), I(extent_[0])};
      sub[k] = I(h);
      auto face = [&](std::size_t at) {
        int start[3] = {I(lo_[2]), I(lo_[1]), I(lo_[0])};
        start[k] = I(at);
        return make(sub, start);
      };
      const std::size_t e = extent_[d];
      send_lo_[d] = face(lo_[d]);
      send_hi_[d] = face(lo_[d] + e - h);  // the last R own layers
      recv_lo_[d] = face(lo_[d] - h);
      recv_hi_[d] = face(lo_[d] + e);
    }
  }
  if (halo_depth_ > 1) {
    // Axis d's faces span the whole local array along the axes exchanged before it (their halos
    // included: the edges) and the part along those after it.
    for (int which = 0; which < 2; ++which) {
      const std::size_t width = deep - h * static_cast<std::size_t>(which);  // prev: 8 N, next: 8 (N - 1)
      for (int d = 0; d < 3; ++d) {
        const int k = 2 - d;
        int sub[3], base[3];
        for (int a = 0; a < 3; ++a) {
          const int kk = 2 - a;
          // along an axis exchanged before: the part and the halos its neighbours sent
          const std::size_t from = a < d && lower_[a] != MPI_PROC_NULL ? 0 : lo_[a];
          const std::size_t to = a < d && upper_[a] != MPI_PROC_NULL ? along(local_, a) : lo_[a] + extent_[a];
          sub[kk] = I(to - from);
          base[kk] = I(from);
        }
        sub[k] = I(width);
        auto face = [&](std::size_t at) {
          int start[3] = {base[0], base[1], base[2]};
          start[k] = I(at);
          return make(sub, start);
        };
        const std::size_t e = extent_[d];
        if (lower_[d] != MPI_PROC_NULL) {  // no faces at the grid's edges (their halo is 8 deep)
          deep_send_lo_[which][d] = face(lo_[d]);
          deep_recv_lo_[which][d] = face(lo_[d] - width);
        }
        if (upper_[d] != MPI_PROC_NULL) {
          deep_send_hi_[which][d] = face(lo_[d] + e - width);
          deep_recv_hi_[which][d] = face(lo_[d] + e);
        }
      }
    }
    // The sweeps' tiles and team, fitted to this rank's caches: the slabs of its threads when they
    // hold the depth (the faces the region shrinks at counted), else the team together.
    const bool slabs = halo_depth_ <= max_depth(region(halo_depth_), threads_);
    model_ = fit_time_block(local_, halo_depth_, threads_, machine_caches(cpu).caches, slabs ? team_ : Teams::Shared);
    if (!slabs) model_.shared = true;
    tiles_ = TimeTiles{halo_depth_, model_.tile_rows, model_.chunk, model_.shared};
  }
}

Part::~Part() {
  for (auto* types : {&send_lo_, &send_hi_, &recv_lo_, &recv_hi_})
    for (MPI_Datatype& t : *types)
      if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  for (auto* both : {&deep_send_lo_, &deep_send_hi_, &deep_recv_lo_, &deep_recv_hi_})
    for (auto& types : *both)
      for (MPI_Datatype& t : types)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
}

void Part::update(const std::vector<Box>& boxes) {
  const BoxFn box = active_box(local_);
  const long n = static_cast<long>(boxes.size());
  const float* prev = f_.prev;
  float* next = f_.next;
  const float* vel = f_.vel;
#pragma omp parallel num_threads(threads_)
  {
    flush_denormals();
#pragma omp for schedule(dynamic, 1)
    for (long i = 0; i < n; ++i) box(c_, prev, next, vel, local_, boxes[static_cast<std::size_t>(i)]);
  }
}

void Part::post(float* next, MPI_Request* reqs) {
  // next holds the new wavefield on the shell just updated: the 8 own layers at every face go to
  // the neighbour there, theirs come into the halo.
  for (int d = 0; d < 3; ++d) {
    MPI_Request* r = reqs + 4 * d;
    MPI_Irecv(next, 1, recv_lo_[d], lower_[d], kTagUp + d, comm_, &r[0]);
    MPI_Irecv(next, 1, recv_hi_[d], upper_[d], kTagDown + d, comm_, &r[1]);
    MPI_Isend(next, 1, send_lo_[d], lower_[d], kTagDown + d, comm_, &r[2]);
    MPI_Isend(next, 1, send_hi_[d], upper_[d], kTagUp + d, comm_, &r[3]);
  }
}

void Part::refresh_halo() {
  MPI_Request reqs[12];
  post(f_.prev, reqs);
  MPI_Waitall(12, reqs, MPI_STATUSES_IGNORE);
  halo_stale_ = false;
}

void Part::step(Timers& t) {
  if (halo_stale_) refresh_halo();
  MPI_Request reqs[12];
  const double t0 = MPI_Wtime();
  if (o_.overlap) {
    update(shell_);
    const double t1 = MPI_Wtime();
    post(f_.next, reqs);
    const double t2 = MPI_Wtime();
    update(inner_);
    const double t3 = MPI_Wtime();
    MPI_Waitall(12, reqs, MPI_STATUSES_IGNORE);
    const double t4 = MPI_Wtime();
    t.compute_s += (t1 - t0) + (t3 - t2);
    t.post_s += t2 - t1;
    t.wait_s += t4 - t3;
  } else {
    update(shell_);
    update(inner_);
    const double t1 = MPI_Wtime();
    post(f_.next, reqs);
    const double t2 = MPI_Wtime();
    MPI_Waitall(12, reqs, MPI_STATUSES_IGNORE);
    const double t3 = MPI_Wtime();
    t.compute_s += t1 - t0;
    t.post_s += t2 - t1;
    t.wait_s += t3 - t2;
  }
  std::swap(f_.prev, f_.next);
}

double Part::exchange_alone() {
  MPI_Barrier(comm_);
  const double t0 = MPI_Wtime();
  if (depth_ > 1) {
    Timers ignored;
    exchange_deep(ignored);
  } else {
    MPI_Request reqs[12];
    post(f_.next, reqs);
    MPI_Waitall(12, reqs, MPI_STATUSES_IGNORE);
  }
  return MPI_Wtime() - t0;
}

void Part::exchange_deep(Timers& t) {
  // prev holds the latest level, next the one before: both arrays' faces, one axis after the other
  float* arrays[2] = {f_.prev, f_.next};
  for (int d = 0; d < 3; ++d) {
    MPI_Request reqs[8];
    int n = 0;
    const double t0 = MPI_Wtime();
    for (int which = 0; which < 2; ++which) {
      float* a = arrays[which];
      const int up = kTagUp + 3 * which + d, down = kTagDown + 3 * which + d;
      if (lower_[d] != MPI_PROC_NULL) {
        MPI_Irecv(a, 1, deep_recv_lo_[which][d], lower_[d], up, comm_, &reqs[n++]);
        MPI_Isend(a, 1, deep_send_lo_[which][d], lower_[d], down, comm_, &reqs[n++]);
      }
      if (upper_[d] != MPI_PROC_NULL) {
        MPI_Irecv(a, 1, deep_recv_hi_[which][d], upper_[d], down, comm_, &reqs[n++]);
        MPI_Isend(a, 1, deep_send_hi_[which][d], upper_[d], up, comm_, &reqs[n++]);
      }
    }
    const double t1 = MPI_Wtime();
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    t.post_s += t1 - t0;
    t.wait_s += MPI_Wtime() - t1;
  }
}

SweepRegion Part::region(int d) const {
  SweepRegion r;
  r.radius = local_.radius;
  const std::size_t grow = local_.halo() * static_cast<std::size_t>(d - 1);
  for (int a = 0; a < 3; ++a) {
    const bool below = lower_[a] != MPI_PROC_NULL, above = upper_[a] != MPI_PROC_NULL;
    r.lo[a] = lo_[a] - (below ? grow : 0);
    r.hi[a] = lo_[a] + extent_[a] + (above ? grow : 0);
    r.shrinks[a] = {below, above};
  }
  return r;
}

void Part::sweep(int d, Timers& t) {
  exchange_deep(t);
  const double t0 = MPI_Wtime();
  TimeTiles tiles = tiles_;
  tiles.depth = d;
  sweep_region(f_, local_, o_.blocks, tiles, region(d), threads_, c_);
  t.compute_s += MPI_Wtime() - t0;
  halo_stale_ = true;
}

int Part::proposed_depth(int cpu) {
  // the parts' halos: every part must hold R d layers along each axis it shares
  long allow = 64;
  for (int d = 0; d < 3; ++d)
    if (lower_[d] != MPI_PROC_NULL || upper_[d] != MPI_PROC_NULL)
      allow = std::min(allow, static_cast<long>(extent_[d] / local_.halo()));
  const std::size_t h = local_.halo();
  const Grid part{extent_[0] + 2 * h, extent_[1] + 2 * h, extent_[2] + 2 * h, local_.radius};
  const TimeBlockModel m = propose_time_block(part, threads_, max_depth(part, threads_, team_ != Teams::Slabs),
                                              machine_caches(cpu).caches, team_);
  const int mine[2] = {m.depth, static_cast<int>(allow)};
  int least[2] = {1, 1};
  MPI_Allreduce(mine, least, 2, MPI_INT, MPI_MIN, comm_);
  const decide::Rule& rule = decide::rule();
  plan_ = plan_race(std::min(least[0], least[1]), o_.iterations, rule.rounds, rule.rounds_when_unsettled);
  choice_ = {{"proposal", m.to_json()}, {"proposed_depth_least", least[0]}, {"parts_hold_depth", least[1]}};
  if (least[0] < 2)
    choice_["why"] = "the model proposes no sweeps (the shallowest over ranks): " + m.why;
  else if (least[1] < 2)
    choice_["why"] = "a part holds the halo of one step only (R layers) along an axis it shares";
  else if (plan_.depth < 2)
    choice_["why"] = "the run is too short to race a depth against single steps (" +
                     std::to_string(plan_.fewest_steps) + " steps at least)";
  return plan_.depth >= 2 && least[0] >= 2 && least[1] >= 2 ? plan_.depth : 1;
}

int Part::race() {
  if (choice_.is_null()) return 0;
  if (halo_depth_ < 2) {
    choice_.update({{"depth", 1}, {"how", "model"}});
    return 0;
  }
  // As one process races (iso3dfd/timemodel.hpp, race_depth): a single step to warm up, then rounds
  // of one sweep and plan_.singles single steps, the first alternating; a round's time is the
  // slowest rank's, shared by all, so every rank decides alike.
  const int d = halo_depth_;
  Timers ignored;
  const RaceOutcome out = race_depth(
      plan_, static_cast<double>(o_.global.interior()), [&] { step(ignored); },
      [&](int n, bool sweeping) {
        if (!sweeping && halo_stale_) refresh_halo();  // what alternating costs, outside the round
        MPI_Barrier(comm_);
        const double t0 = MPI_Wtime();
        if (sweeping)
          sweep(d, ignored);
        else
          for (int i = 0; i < n; ++i) step(ignored);
        double mine = MPI_Wtime() - t0, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm_);
        return slowest;
      });
  depth_ = out.depth;
  if (depth_ == 1 && halo_stale_) refresh_halo();
  choice_.update(out.record(plan_,
                            "the race's steps advanced the run's wavefield and count among its steps, untimed; every "
                            "round timed by the slowest rank"));
  return out.steps;
}

void Part::advance(int steps, Timers& t) {
  for (int done = 0; done < steps; ++exchanges_) {
    if (depth_ == 1) {
      step(t);
      ++done;
    } else {
      const int d = std::min(depth_, steps - done);
      sweep(d, t);
      done += d;
    }
  }
}

json Part::sweep_record() const {
  if (depth_ == 1) return nullptr;
  return model_.to_json();
}

double Part::redundant_share(int steps) const {
  if (depth_ == 1 || steps <= 0) return 0.0;
  const double own = static_cast<double>(extent_[0] * extent_[1] * extent_[2]);
  double all = 0;
  for (int done = 0; done < steps;) {
    const int d = std::min(depth_, steps - done);
    const SweepRegion r = region(d);
    for (int s = 1; s <= d; ++s) {
      double points = 1;
      const std::size_t back = local_.halo() * static_cast<std::size_t>(s - 1);
      for (int a = 0; a < 3; ++a)
        points *=
            static_cast<double>((r.hi[a] - (r.shrinks[a][1] ? back : 0)) - (r.lo[a] + (r.shrinks[a][0] ? back : 0)));
      all += points;
    }
    done += d;
  }
  return all / (own * steps) - 1.0;
}

int Part::neighbours() const {
  int n = 0;
  for (int d = 0; d < 3; ++d) n += (lower_[d] != MPI_PROC_NULL) + (upper_[d] != MPI_PROC_NULL);
  return n;
}

double Part::exchange_bytes() const {
  double bytes = 0;
  for (int d = 0; d < 3; ++d) {
    // the other two axes: the whole local array along those exchanged before this one (sweeps)
    double across = 1;
    for (int a = 0; a < 3; ++a) {
      if (a == d) continue;
      const bool before = depth_ > 1 && a < d;  // with the halos its neighbours sent
      across *= static_cast<double>(extent_[a] + (before && lower_[a] != MPI_PROC_NULL ? lo_[a] : 0) +
                                    (before && upper_[a] != MPI_PROC_NULL ? hi_[a] : 0));
    }
    const double h = local_.radius;
    const double layers = depth_ > 1 ? h * (2 * halo_depth_ - 1) : h;  // prev, next
    bytes += layers * across * sizeof(float) * ((lower_[d] != MPI_PROC_NULL) + (upper_[d] != MPI_PROC_NULL));
  }
  return bytes;
}

double Part::halo_bytes() const { return exchange_bytes() / depth_; }

std::vector<float> Part::owned() const {
  std::vector<float> out;
  out.reserve(extent_[0] * extent_[1] * extent_[2]);
  for (std::size_t z = lo_[2]; z < lo_[2] + extent_[2]; ++z)
    for (std::size_t y = lo_[1]; y < lo_[1] + extent_[1]; ++y) {
      const float* row = f_.prev + local_.index(lo_[0], y, z);
      out.insert(out.end(), row, row + extent_[0]);
    }
  return out;
}

double Part::local_sum_of_squares() const {
  double sum = 0;
  for (float v : owned()) sum += static_cast<double>(v) * v;
  return sum;
}

}  // namespace bw::iso3dfd::mpi
