#include "iso3dfd_mpi/part.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd::mpi {

namespace {

constexpr int kTagUp = 10, kTagDown = 20;

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

void add_global_source(float* prev, const Grid& local, const Grid& global, const std::array<std::size_t, 3>& origin) {
  // As add_source(): s = 5 .. 0 writes 1, 10, ... into [c-s, c+s), clipped to the interior, here
  // also to this part's points with their halo (global [origin - 8, origin + extent + 8)).
  const long h = kHalf;
  const long n[3] = {static_cast<long>(global.n1), static_cast<long>(global.n2), static_cast<long>(global.n3)};
  const long first[3] = {static_cast<long>(origin[0]) - h, static_cast<long>(origin[1]) - h,
                         static_cast<long>(origin[2]) - h};
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

Part::Part(const Options& o, MPI_Comm comm, int threads) : o_(o), comm_(comm), threads_(threads), c_(coefficients()) {
  int me = 0, coords[3] = {0, 0, 0};  // z, y, x
  MPI_Comm_rank(comm, &me);
  MPI_Cart_coords(comm, me, 3, coords);
  const std::size_t h = kHalf;
  for (int d = 0; d < 3; ++d) {
    MPI_Cart_shift(comm, 2 - d, 1, &lower_[d], &upper_[d]);
    const std::size_t c = static_cast<std::size_t>(coords[2 - d]);
    origin_[d] = o.cuts[d][c];
    extent_[d] = o.cuts[d][c + 1] - o.cuts[d][c];
  }
  local_ = Grid{extent_[0] + 2 * h, extent_[1] + 2 * h, extent_[2] + 2 * h};
  const std::size_t bytes = local_.points() * sizeof(float);
  prev_ = Buffer(bytes, o.placement);
  next_ = Buffer(bytes, o.placement);
  vel_ = Buffer(bytes, o.placement);
  f_ = Fields{prev_.as<float>(), next_.as<float>(), vel_.as<float>()};
  // First touch by this rank's threads in the compute loop's order; initialise() also writes the
  // source where it would be in a grid of this part's size, so prev is cleared (its pages already
  // placed) and the source is written where it is in the whole grid.
  initialise(f_, local_, o.blocks, false, threads);
  float* prev = f_.prev;
  const long n = static_cast<long>(local_.points());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) prev[i] = 0.0f;
  add_global_source(f_.prev, local_, o.global, origin_);

  // The inner box: the interior less the 8 layers on every face with a neighbour; the shell: the
  // rest of the interior, in slabs (z below and above, then y, then x within the inner z and y).
  std::array<std::size_t, 3> lo{}, hi{}, end{};
  for (int d = 0; d < 3; ++d) {
    end[d] = h + extent_[d];
    lo[d] = std::min(h + (lower_[d] != MPI_PROC_NULL ? h : 0), end[d]);
    hi[d] = std::max(end[d] - (upper_[d] != MPI_PROC_NULL ? std::min(h, extent_[d]) : 0), lo[d]);
  }
  const Blocks& b = o.blocks;
  blocks_of(Box{h, end[0], h, end[1], h, lo[2]}, b, shell_);
  blocks_of(Box{h, end[0], h, end[1], hi[2], end[2]}, b, shell_);
  blocks_of(Box{h, end[0], h, lo[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{h, end[0], hi[1], end[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{h, lo[0], lo[1], hi[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{hi[0], end[0], lo[1], hi[1], lo[2], hi[2]}, b, shell_);
  blocks_of(Box{lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]}, b, inner_);

  // The faces as subarrays of the local array (C order: z, y, x).
  const int sizes[3] = {static_cast<int>(local_.n3), static_cast<int>(local_.n2), static_cast<int>(local_.n1)};
  for (int d = 0; d < 3; ++d) {
    const int k = 2 - d;
    int sub[3] = {static_cast<int>(extent_[2]), static_cast<int>(extent_[1]), static_cast<int>(extent_[0])};
    sub[k] = kHalf;
    auto make = [&](int at) {
      int start[3] = {kHalf, kHalf, kHalf};
      start[k] = at;
      MPI_Datatype t;
      MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_FLOAT, &t);
      MPI_Type_commit(&t);
      return t;
    };
    const int e = static_cast<int>(extent_[d]);
    send_lo_[d] = make(kHalf);
    send_hi_[d] = make(e);  // the last 8 own layers: [8 + e - 8, 8 + e)
    recv_lo_[d] = make(0);
    recv_hi_[d] = make(kHalf + e);
  }
}

Part::~Part() {
  for (auto* types : {&send_lo_, &send_hi_, &recv_lo_, &recv_hi_})
    for (MPI_Datatype& t : *types)
      if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
}

void Part::update(const std::vector<Box>& boxes) {
  const BoxFn box = active_box();
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

void Part::post(MPI_Request* reqs) {
  // next holds the new wavefield on the shell just updated: the 8 own layers at every face go to
  // the neighbour there, theirs come into the halo.
  float* next = f_.next;
  for (int d = 0; d < 3; ++d) {
    MPI_Request* r = reqs + 4 * d;
    MPI_Irecv(next, 1, recv_lo_[d], lower_[d], kTagUp + d, comm_, &r[0]);
    MPI_Irecv(next, 1, recv_hi_[d], upper_[d], kTagDown + d, comm_, &r[1]);
    MPI_Isend(next, 1, send_lo_[d], lower_[d], kTagDown + d, comm_, &r[2]);
    MPI_Isend(next, 1, send_hi_[d], upper_[d], kTagUp + d, comm_, &r[3]);
  }
}

void Part::step(Timers& t) {
  MPI_Request reqs[12];
  const double t0 = MPI_Wtime();
  if (o_.overlap) {
    update(shell_);
    const double t1 = MPI_Wtime();
    post(reqs);
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
    post(reqs);
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
  MPI_Request reqs[12];
  MPI_Barrier(comm_);
  const double t0 = MPI_Wtime();
  post(reqs);
  MPI_Waitall(12, reqs, MPI_STATUSES_IGNORE);
  return MPI_Wtime() - t0;
}

int Part::neighbours() const {
  int n = 0;
  for (int d = 0; d < 3; ++d) n += (lower_[d] != MPI_PROC_NULL) + (upper_[d] != MPI_PROC_NULL);
  return n;
}

double Part::halo_bytes() const {
  double bytes = 0;
  for (int d = 0; d < 3; ++d) {
    const double face = static_cast<double>(kHalf) * static_cast<double>(extent_[(d + 1) % 3]) *
                        static_cast<double>(extent_[(d + 2) % 3]) * sizeof(float);
    bytes += face * ((lower_[d] != MPI_PROC_NULL) + (upper_[d] != MPI_PROC_NULL));
  }
  return bytes;
}

std::vector<float> Part::owned() const {
  std::vector<float> out;
  out.reserve(extent_[0] * extent_[1] * extent_[2]);
  for (std::size_t z = kHalf; z < kHalf + extent_[2]; ++z)
    for (std::size_t y = kHalf; y < kHalf + extent_[1]; ++y) {
      const float* row = f_.prev + local_.index(kHalf, y, z);
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
