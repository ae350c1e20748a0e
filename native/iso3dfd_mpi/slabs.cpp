#include "iso3dfd_mpi/slabs.hpp"

#include <algorithm>
#include <cmath>

namespace bw::iso3dfd::mpi {

namespace {

constexpr int kTagUp = 1, kTagDown = 2;

}  // namespace

void add_global_source(float* prev, const Grid& local, const Grid& global, std::size_t z0) {
  // As add_source(): s = 5 .. 0 writes 1, 10, ... into [c-s, c+s), clipped to the interior.
  const long lo = kHalf;
  const long zfirst = static_cast<long>(z0) - kHalf, zend = zfirst + static_cast<long>(local.n3);
  float val = 1.0f;
  for (long s = 5; s >= 0; --s) {
    const long c3 = static_cast<long>(global.n3) / 2, c2 = static_cast<long>(global.n2) / 4,
               c1 = static_cast<long>(global.n1) / 4;
    for (long z = std::max({c3 - s, lo, zfirst}); z < std::min({c3 + s, static_cast<long>(global.n3) - lo, zend}); ++z)
      for (long y = std::max(c2 - s, lo); y < std::min(c2 + s, static_cast<long>(global.n2) - lo); ++y)
        for (long x = std::max(c1 - s, lo); x < std::min(c1 + s, static_cast<long>(global.n1) - lo); ++x)
          prev[local.index(static_cast<std::size_t>(x), static_cast<std::size_t>(y),
                           static_cast<std::size_t>(z - zfirst))] = val;
    val *= 10.0f;
  }
}

Slab::Slab(const Options& o, MPI_Comm comm, int threads) : o_(o), comm_(comm), threads_(threads), c_(coefficients()) {
  int coord = 0;
  const int me = [&] {
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
  }();
  MPI_Cart_coords(comm, me, 1, &coord);
  MPI_Cart_shift(comm, 0, 1, &lower_, &upper_);
  planes_ = o.planes;
  z0_ = kHalf + static_cast<std::size_t>(coord) * planes_;
  local_ = Grid{o.global.n1, o.global.n2, planes_ + 2 * kHalf};
  const std::size_t bytes = local_.points() * sizeof(float);
  prev_ = Buffer(bytes, o.placement);
  next_ = Buffer(bytes, o.placement);
  vel_ = Buffer(bytes, o.placement);
  f_ = Fields{prev_.as<float>(), next_.as<float>(), vel_.as<float>()};
  // First touch by this rank's threads in the compute loop's order; initialise() also writes the
  // source where it would be in a grid of this slab's size, so prev is cleared (its pages already
  // placed) and the source is written where it is in the whole grid.
  initialise(f_, local_, o.blocks, false, threads);
  float* prev = f_.prev;
  const long n = static_cast<long>(local_.points());
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) prev[i] = 0.0f;
  add_global_source(f_.prev, local_, o.global, z0_);
}

void Slab::update(std::size_t za, std::size_t zb) {
  if (zb <= za) return;
  const std::size_t off = (za - kHalf) * plane_points();
  Fields sub{f_.prev + off, f_.next + off, f_.vel + off};
  const Grid g{local_.n1, local_.n2, zb - za + 2 * kHalf};
  run(sub, g, o_.blocks, Schedule::Static, threads_, 1, c_);
}

void Slab::post(MPI_Request* reqs) {
  // next holds the new wavefield on the planes just updated: its first and last 8 own planes go to
  // the neighbours' halos, theirs come into this slab's halos.
  const std::size_t pp = plane_points();
  const int count = static_cast<int>(kHalf * pp);
  float* next = f_.next;
  MPI_Irecv(next, count, MPI_FLOAT, lower_, kTagUp, comm_, &reqs[0]);
  MPI_Irecv(next + (kHalf + planes_) * pp, count, MPI_FLOAT, upper_, kTagDown, comm_, &reqs[1]);
  MPI_Isend(next + kHalf * pp, count, MPI_FLOAT, lower_, kTagDown, comm_, &reqs[2]);
  MPI_Isend(next + planes_ * pp, count, MPI_FLOAT, upper_, kTagUp, comm_, &reqs[3]);
}

void Slab::step(Timers& t) {
  const std::size_t h = kHalf, lo_end = h + std::min(h, planes_), hi_begin = std::max(lo_end, planes_);
  const std::size_t end = h + planes_;
  MPI_Request reqs[4];
  double t0 = MPI_Wtime();
  if (o_.overlap) {
    update(h, lo_end);
    update(hi_begin, end);
    double t1 = MPI_Wtime();
    post(reqs);
    double t2 = MPI_Wtime();
    update(lo_end, hi_begin);
    double t3 = MPI_Wtime();
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    double t4 = MPI_Wtime();
    t.compute_s += (t1 - t0) + (t3 - t2);
    t.post_s += t2 - t1;
    t.wait_s += t4 - t3;
  } else {
    update(h, end);
    double t1 = MPI_Wtime();
    post(reqs);
    double t2 = MPI_Wtime();
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    double t3 = MPI_Wtime();
    t.compute_s += t1 - t0;
    t.post_s += t2 - t1;
    t.wait_s += t3 - t2;
  }
  std::swap(f_.prev, f_.next);
}

double Slab::local_sum_of_squares() const {
  const double n = l2_norm(owned(), planes_ * plane_points());
  return n * n;
}

}  // namespace bw::iso3dfd::mpi
