/* A user's OpenMP program for bench/tune_vs_exhaustive.py: STREAM triad a = b + s * c over
   N doubles, REPS times, with OMP_NUM_THREADS threads (it knows nothing of bandwall). Prints
   "triad: <GB/s> GB/s" (the best repetition, 24 bytes per element) and checks its answer (exit 1
   when an element is wrong). Usage: omp_triad [N [REPS]] */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 24;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c || n < 1 || reps < 1) return 2;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    t = omp_get_wtime() - t;
    if (t < best) best = t;
  }
  for (long i = 0; i < n; i++)
    if (fabs(a[i] - 7.0) > 0) {
      fprintf(stderr, "omp_triad: a[%ld] = %g, not 7\n", i, a[i]);
      return 1;
    }
  printf("threads: %d\ntriad: %.3f GB/s\n", omp_get_max_threads(), 24.0 * n / best / 1e9);
  free(a), free(b), free(c);
  return 0;
}
