/* Message-rate loop for the profiler benchmark: two ranks (or one) exchange 8-byte messages with
 * MPI_Irecv + MPI_Isend + MPI_Waitall (3 MPI calls per iteration and rank); rank 0 prints the wall
 * and CPU time (of rank 0's process) per call as JSON; with one rank it sends to itself. Usage: mpi_msgrate ITERATIONS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long iters = argc > 1 ? atol(argv[1]) : 100000;
  int peer = n == 1 ? 0 : 1 - rank; /* one rank: messages to itself */
  long out = rank, in = -1;
  MPI_Request r[2];
  double t0 = 0, c0 = 0;
  for (long i = -iters / 10; i < iters; i++) { /* the first tenth warms up */
    if (i == 0) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      c0 = cpu_s();
    }
    MPI_Irecv(&in, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&out, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, &r[1]);
/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1, which GCC takes for an array of size 0 passed
 * where mpi.h declares MPI_Status[]: a false -Wstringop-overflow, silenced for this call only. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  }
  double dt = MPI_Wtime() - t0, dc = cpu_s() - c0;
  if (in != peer) {
    fprintf(stderr, "mpi_msgrate: received %ld, expected %d\n", in, peer);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0)
    printf("{\"iterations\": %ld, \"calls\": %ld, \"ns_per_call\": %.2f, \"cpu_ns_per_call\": %.2f}\n", iters,
           3 * iters, dt / (3.0 * iters) * 1e9, dc / (3.0 * iters) * 1e9);
  MPI_Finalize();
  return 0;
}
