/* A C MPI program with a known set of calls, profiled by the mpiprof tests (which hold the
 * record to what this program does, rank by rank). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int right = (rank + 1) % n, left = (rank + n - 1) % n;
  char bytes[1000] = {0};
  double d[100] = {0}, e[100];
  MPI_Request req[2];
  /* 3 x 1000-byte ring with MPI_Send / MPI_Recv (status ignored) */
  for (int i = 0; i < 3; i++) {
    if (rank % 2 == 0) {
      MPI_Send(bytes, 1000, MPI_BYTE, right, 1, MPI_COMM_WORLD);
      MPI_Recv(bytes, 1000, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(bytes, 1000, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(bytes, 1000, MPI_BYTE, right, 1, MPI_COMM_WORLD);
    }
  }
  /* 2 x 800-byte Isend/Irecv to the right, Waitall */
  for (int i = 0; i < 2; i++) {
    MPI_Irecv(e, 100, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(d, 100, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  }
  /* a zero-byte Sendrecv, received with MPI_ANY_SOURCE */
  MPI_Sendrecv(NULL, 0, MPI_BYTE, right, 3, NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* collectives: Bcast of 10 ints from root n-1, Reduce of 4 doubles to root 0, Allreduce, Barrier */
  int ints[10] = {0};
  MPI_Bcast(ints, 10, MPI_INT, n - 1, MPI_COMM_WORLD);
  double four[4] = {1, 2, 3, 4}, sum4[4];
  MPI_Reduce(four, sum4, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  int one = 1, total = 0;
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  /* a split communicator (even / odd ranks) with its own Allreduce and a send to its rank 0 */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, half);
  int hr, hn;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hn);
  if (hn > 1) {
    if (hr == 1) MPI_Send(bytes, 64, MPI_BYTE, 0, 4, half);
    if (hr == 0) MPI_Recv(bytes, 64, MPI_BYTE, 1, 4, half, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&half);
  if (total != (n + 1 - rank % 2) / 2 && !(n % 2 == 0 && total == n / 2)) {
    fprintf(stderr, "prof_c: wrong Allreduce result %d\n", total);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
