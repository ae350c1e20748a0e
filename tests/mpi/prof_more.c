/* An MPI program with a known set of the calls that take count arrays or requests, profiled by the
 * mpiprof tests: the v and w collectives with uneven counts (the roots' count arrays passed on the
 * root only), persistent point-to-point requests started by MPI_Startall and MPI_Start, and, where
 * mpi.h is MPI 4, large-count (MPI_Count) calls. The tests hold the record to exactly this. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "prof_more: wrong %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static void v_collectives(int rank, int n) {
  if (n < 1 || n > 16) return;
  int *sc = calloc(n, sizeof(int)), *sd = calloc(n, sizeof(int)), *rc = calloc(n, sizeof(int)),
      *rd = calloc(n, sizeof(int));
  int stot = 0, rtot = 0;
  for (int j = 0; j < n; j++) { /* rank r sends 1 + r + 2j ints to rank j */
    sc[j] = 1 + rank + 2 * j, sd[j] = stot, stot += sc[j];
    rc[j] = 1 + j + 2 * rank, rd[j] = rtot, rtot += rc[j];
  }
  int *sb = calloc(stot, sizeof(int)), *rb = calloc(rtot, sizeof(int));
  for (int i = 0; i < stot; i++) sb[i] = rank;
  MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
  for (int j = 0; j < n; j++) check(rb[rd[j]] == j, "Alltoallv");

  /* Alltoallw: j + 1 ints to even ranks j, j + 1 doubles to odd ones (byte displacements) */
  MPI_Datatype *st = calloc(n, sizeof(MPI_Datatype)), *rt = calloc(n, sizeof(MPI_Datatype));
  MPI_Datatype mine = rank % 2 ? MPI_DOUBLE : MPI_INT;
  char *wsb = calloc(n, 8 * (n + 1)), *wrb = calloc(n, 8 * (n + 1));
  for (int j = 0; j < n; j++) {
    st[j] = j % 2 ? MPI_DOUBLE : MPI_INT, sc[j] = j + 1, sd[j] = 8 * (n + 1) * j;
    rt[j] = mine, rc[j] = rank + 1, rd[j] = 8 * (n + 1) * j;
  }
  MPI_Alltoallw(wsb, sc, sd, st, wrb, rc, rd, rt, MPI_COMM_WORLD);

  /* Reduce_scatter: j + 1 doubles to rank j; Reduce_scatter_block: 2 ints each */
  double *d = calloc(n * (n + 1) / 2, sizeof(double)), dr[64];
  for (int i = 0; i < n * (n + 1) / 2; i++) d[i] = 1.0;
  for (int j = 0; j < n; j++) rc[j] = j + 1;
  MPI_Reduce_scatter(d, dr, rc, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check(dr[0] == n && dr[rank] == n, "Reduce_scatter");
  int *two = calloc(2 * n, sizeof(int)), tr[2];
  MPI_Reduce_scatter_block(two, tr, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  /* Gatherv to 0 and Scatterv from n - 1: r + 1 and 2 (r + 1) ints; only the root passes counts */
  int part[64] = {0}, *all = calloc(n * (n + 1), sizeof(int));
  for (int j = 0, off = 0; j < n; j++) rc[j] = j + 1, rd[j] = off, off += j + 1;
  MPI_Gatherv(part, rank + 1, MPI_INT, all, rank == 0 ? rc : NULL, rank == 0 ? rd : NULL, MPI_INT, 0, MPI_COMM_WORLD);
  for (int j = 0, off = 0; j < n; j++) sc[j] = 2 * (j + 1), sd[j] = off, off += 2 * (j + 1);
  MPI_Scatterv(all, rank == n - 1 ? sc : NULL, rank == n - 1 ? sd : NULL, MPI_INT, part, 2 * (rank + 1), MPI_INT, n - 1,
               MPI_COMM_WORLD);
  MPI_Allgatherv(part, rank + 1, MPI_INT, all, rc, rd, MPI_INT, MPI_COMM_WORLD);
  free(sc), free(sd), free(rc), free(rd), free(sb), free(rb), free(st), free(rt), free(wsb), free(wrb);
  free(d), free(two), free(all);
}

static void persistent(int rank, int n) {
  int right = (rank + 1) % n, left = (rank + n - 1) % n;
  double out[100], in[100];
  for (int i = 0; i < 100; i++) out[i] = rank;
  MPI_Request pr[2], ps, r;
  MPI_Status st[2]; /* (MPICH's MPI_STATUSES_IGNORE upsets GCC's -Wstringop-overflow) */
  MPI_Recv_init(in, 100, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &pr[0]);
  MPI_Send_init(out, 100, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &pr[1]);
  for (int i = 0; i < 5; i++) { /* 5 x Startall of both */
    MPI_Startall(2, pr);
    MPI_Waitall(2, pr, st);
    check(in[99] == left, "persistent receive");
  }
  for (int i = 0; i < 3; i++) { /* 3 x Start of each */
    MPI_Start(&pr[0]);
    MPI_Start(&pr[1]);
    MPI_Waitall(2, pr, st);
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);
  /* a synchronous persistent send made after the frees (its handle may be a freed one's) */
  MPI_Ssend_init(out, 2, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &ps);
  MPI_Irecv(in, 2, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &r);
  MPI_Start(&ps);
  MPI_Wait(&ps, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Request_free(&ps);
}

#if MPI_VERSION >= 4
/* Large counts: 2 x 300-byte ring of MPI_Send_c / MPI_Recv_c, an MPI_Allreduce_c of 3 doubles and
 * the Alltoallv above as MPI_Alltoallv_c. */
static void large_count(int rank, int n) {
  int right = (rank + 1) % n, left = (rank + n - 1) % n;
  char bytes[300] = {0};
  for (int i = 0; i < 2; i++) {
    if (rank % 2 == 0) {
      MPI_Send_c(bytes, (MPI_Count)300, MPI_BYTE, right, 7, MPI_COMM_WORLD);
      MPI_Recv_c(bytes, (MPI_Count)300, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv_c(bytes, (MPI_Count)300, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send_c(bytes, (MPI_Count)300, MPI_BYTE, right, 7, MPI_COMM_WORLD);
    }
  }
  double x[3] = {1, 2, 3}, y[3];
  MPI_Allreduce_c(x, y, (MPI_Count)3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check(y[2] == 3.0 * n, "Allreduce_c");
  MPI_Count *sc = calloc(n, sizeof(MPI_Count)), *rc = calloc(n, sizeof(MPI_Count));
  MPI_Aint *sd = calloc(n, sizeof(MPI_Aint)), *rd = calloc(n, sizeof(MPI_Aint));
  MPI_Aint stot = 0, rtot = 0;
  for (int j = 0; j < n; j++) {
    sc[j] = 1 + rank + 2 * j, sd[j] = stot, stot += sc[j];
    rc[j] = 1 + j + 2 * rank, rd[j] = rtot, rtot += rc[j];
  }
  int *sb = calloc(stot, sizeof(int)), *rb = calloc(rtot, sizeof(int));
  MPI_Alltoallv_c(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
  free(sc), free(rc), free(sd), free(rd), free(sb), free(rb);
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  check(n <= 16, "rank count (at most 16)");
  v_collectives(rank, n);
  persistent(rank, n);
#if MPI_VERSION >= 4
  large_count(rank, n);
#endif
  MPI_Finalize();
  return 0;
}
