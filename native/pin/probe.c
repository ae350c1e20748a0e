/* bandwall-pin-probe: a small OpenMP program that says where its threads ran. Each thread does the same
 * compute-bound work in rounds separated by barriers (so a thread sharing its CPU slows the whole team,
 * as in NPB FT with both threads on one CPU) and notes the CPU it is on in every round.
 *
 *   bandwall-pin-probe [ROUNDS [WORK]]   (default 200 rounds of 200000 multiply-adds per thread)
 *
 * Prints "time <seconds> s" and one JSON line: threads, each thread's CPU at the end, the CPUs each
 * thread was seen on, and the checksum, which it checks (exit 1 when wrong).
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256
#define MAX_CPUS 1024

static unsigned char seen[MAX_THREADS][MAX_CPUS];
static double sums[MAX_THREADS];

/* A chain of multiply-adds whose result is known in closed form: x <- a*x + b from x0 = 0, n steps,
 * gives b*(a^n - 1)/(a - 1); a = 1 - 2^-20 keeps it finite and sensitive to every step. */
static double chain(long n, double a, double b) {
  double x = 0;
  for (long i = 0; i < n; ++i) x = a * x + b;
  return x;
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf(
        "bandwall-pin-probe: a small OpenMP program that says where its threads ran\n"
        "Usage: bandwall-pin-probe [ROUNDS [WORK]]\n\n"
        "Each thread does ROUNDS rounds (default 200) of WORK multiply-adds (default 200000), separated by\n"
        "barriers, and notes the CPU it is on in every round. Prints \"time <seconds> s\" and one JSON line:\n"
        "threads, each thread's CPU at the end, the CPUs each thread was seen on, and the checksum, which it\n"
        "checks (exit 1 when wrong).\n");
    return 0;
  }
  long rounds = argc > 1 ? atol(argv[1]) : 200, work = argc > 2 ? atol(argv[2]) : 200000;
  if (rounds < 1 || work < 1) {
    fprintf(stderr, "bandwall-pin-probe: error: ROUNDS and WORK must be positive whole numbers\n");
    return 2;
  }
  const double a = 1.0 - 1.0 / (1 << 20), b = 1.0;
  int threads = 0, last[MAX_THREADS];
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp single
    threads = omp_get_num_threads();
    double s = 0;
    for (long r = 0; r < rounds; ++r) {
      s += chain(work, a, b);
      int cpu = sched_getcpu();
      if (t < MAX_THREADS && cpu >= 0 && cpu < MAX_CPUS) seen[t][cpu] = 1;
#pragma omp barrier
    }
    if (t < MAX_THREADS) {
      sums[t] = s;
      last[t] = sched_getcpu();
    }
  }
  double seconds = omp_get_wtime() - t0;
  double expect = 0, one = chain(work, a, b);
  for (long r = 0; r < rounds; ++r) expect += one; /* summed as the threads did: same rounding */
  int ok = threads > 0 && threads <= MAX_THREADS;
  for (int t = 0; ok && t < threads; ++t) ok = sums[t] == expect;
  printf("time %.6f s\n", seconds);
  printf("{\"probe\":\"c\",\"threads\":%d,\"seconds\":%.6f,\"valid\":%s,\"thread_cpus\":[", threads, seconds,
         ok ? "true" : "false");
  for (int t = 0; t < threads && t < MAX_THREADS; ++t) printf("%s%d", t ? "," : "", last[t]);
  printf("],\"cpus_seen\":[");
  for (int t = 0; t < threads && t < MAX_THREADS; ++t) {
    printf("%s[", t ? "," : "");
    for (int c = 0, first = 1; c < MAX_CPUS; ++c)
      if (seen[t][c]) printf("%s%d", first ? "" : ",", c), first = 0;
    printf("]");
  }
  printf("]}\n");
  if (!ok) {
    fprintf(stderr, "bandwall-pin-probe: error: checksum wrong\n");
    return 1;
  }
  return 0;
}
