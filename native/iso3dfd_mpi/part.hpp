// One rank's part of the ISO3DFD grid over a 3-D Cartesian communicator: its box of the interior
// with 8 halo layers on every side (itself a grid, whose interior is the box), the update of any box
// of it with the row kernel of the active variant, and the halo exchange with its neighbours along
// x, y and z (the stencil reaches along one axis at a time, so the faces suffice: no edges or
// corners).
#pragma once
#include <mpi.h>

#include <array>
#include <vector>

#include "common/placement.hpp"
#include "iso3dfd/iso3dfd.hpp"
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
  Part(const Options& o, MPI_Comm comm, int threads);
  ~Part();
  Part(const Part&) = delete;
  Part& operator=(const Part&) = delete;

  // One time step: the shell (the layers the neighbours need), its exchange posted, the inner box,
  // the wait.
  void step(Timers& t);
  // One exchange of next's faces alone, its seconds (for the share of it the steps hid).
  double exchange_alone();

  const Grid& local() const { return local_; }
  // Global index of this rank's first interior point along x, y, z, and its extents.
  const std::array<std::size_t, 3>& origin() const { return origin_; }
  const std::array<std::size_t, 3>& extent() const { return extent_; }
  // Bytes this rank sends a step (8 layers on every face with a neighbour).
  double halo_bytes() const;
  int neighbours() const;
  const Fields& fields() const { return f_; }
  // This rank's own points of the latest wavefield, x fastest.
  std::vector<float> owned() const;
  double local_sum_of_squares() const;

 private:
  void update(const std::vector<Box>& boxes);
  void post(MPI_Request* reqs);

  const Options& o_;
  MPI_Comm comm_;
  int threads_;
  std::array<int, 3> lower_{}, upper_{};  // neighbours along x, y, z (MPI_PROC_NULL at the edges)
  std::array<std::size_t, 3> origin_{}, extent_{};
  Grid local_;
  Buffer prev_, next_, vel_;
  Fields f_{};
  Coefficients c_;
  std::vector<Box> shell_, inner_;
  // Per dimension: the subarray of the 8 own layers sent down and up, and of the halo received.
  std::array<MPI_Datatype, 3> send_lo_{}, send_hi_{}, recv_lo_{}, recv_hi_{};
};

// The seed's source (nested cubes around (n1/4, n2/4, n3/2) of the whole grid) written into prev of
// a part whose first interior point is the global point origin, as add_source() would write it into
// the whole grid.
void add_global_source(float* prev, const Grid& local, const Grid& global, const std::array<std::size_t, 3>& origin);

}  // namespace bw::iso3dfd::mpi
