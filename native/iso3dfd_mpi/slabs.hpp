// One rank's z-slab of the ISO3DFD grid: its planes with 8 halo planes on each side, the update of
// any range of its planes through the engine's public run() (z is the slowest dimension, so a
// range of planes with its halo is itself a grid), and the halo exchange with its neighbours on a
// 1-D Cartesian communicator along z.
#pragma once
#include <mpi.h>

#include "common/placement.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd_mpi/options.hpp"

namespace bw::iso3dfd::mpi {

struct Timers {
  double compute_s = 0;  // in run() calls
  double wait_s = 0;     // in MPI_Waitall (the exchange not hidden behind the interior update)
  double post_s = 0;     // posting the sends and receives
};

class Slab {
 public:
  // comm: a 1-D Cartesian communicator along z; allocates and first-touches (each rank's own
  // threads, through initialise()) the local prev, next and vel, then places the seed's source at
  // its global position.
  Slab(const Options& o, MPI_Comm comm, int threads);
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  // One time step: the boundary planes first, their exchange posted, the interior, the wait.
  void step(Timers& t);

  const Grid& local() const { return local_; }
  std::size_t z0() const { return z0_; }  // global index of this rank's first interior plane
  std::size_t planes() const { return planes_; }
  std::size_t plane_points() const { return local_.n1 * local_.n2; }
  // This rank's own planes of the latest wavefield.
  const float* owned() const { return f_.prev + kHalf * plane_points(); }
  const Fields& fields() const { return f_; }
  double local_sum_of_squares() const;

 private:
  void update(std::size_t za, std::size_t zb);  // local planes [za, zb) of next
  void post(MPI_Request* reqs);

  const Options& o_;
  MPI_Comm comm_;
  int threads_;
  int lower_ = MPI_PROC_NULL, upper_ = MPI_PROC_NULL;
  Grid local_;
  std::size_t z0_ = 0, planes_ = 0;
  Buffer prev_, next_, vel_;
  Fields f_{};
  Coefficients c_;
};

// The seed's source (nested cubes around (n1/4, n2/4, n3/2) of the whole grid) written into the
// part of prev that holds global planes [z0 - 8, z0 + planes + 8), as add_source() would write it
// into the whole grid.
void add_global_source(float* prev, const Grid& local, const Grid& global, std::size_t z0);

}  // namespace bw::iso3dfd::mpi
