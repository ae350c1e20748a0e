/* MPI_THREAD_MULTIPLE: on every rank THREADS threads each send ITERS 8-byte messages to the next
 * rank and receive as many from the previous one, all at once. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

enum { THREADS = 4, ITERS = 50 };
static int rank, n;

static void* work(void* arg) {
  int tag = (int)(long)arg;
  long v = 0;
  for (int i = 0; i < ITERS; i++) {
    MPI_Request r[2];
    long in;
    MPI_Irecv(&in, 1, MPI_LONG, (rank + n - 1) % n, tag, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&v, 1, MPI_LONG, (rank + 1) % n, tag, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "prof_threads: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, work, (void*)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  MPI_Finalize();
  return 0;
}
