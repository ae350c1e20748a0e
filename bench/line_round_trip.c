// How long a cache line takes to go from one CPU to another and back: two threads pinned to the two
// CPUs pass a counter through one line, `trips` round trips a sample. On CPUs that share a
// last-level cache a round trip takes some 50-150 ns; between two last-level caches (two AMD CCDs,
// two sockets) 200-400 ns. A virtual machine's host may move its vCPUs between those placements
// from second to second while the guest's topology says they share one L3: the benches print it
// beside their figures. Prints one JSON record: {"cpus": [a, b], "round_trip_ns": [one a sample]}.
//
//   line_round_trip CPU_A CPU_B [SAMPLES [TRIPS]]
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long line;
static long trips = 20000;
static int samples = 3;

static int pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* answer(void* arg) {
  if (pin(*(int*)arg) != 0) {
    atomic_store_explicit(&line, -1, memory_order_release);
    return NULL;
  }
  for (long i = 0; i < 1 + samples * trips; ++i) {
    while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {
    }
    atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: line_round_trip CPU_A CPU_B [SAMPLES [TRIPS]]\n");
    return 2;
  }
  int a = atoi(argv[1]), b = atoi(argv[2]);
  if (argc > 3) samples = atoi(argv[3]);
  if (argc > 4) trips = atol(argv[4]);
  if (samples < 1 || samples > 1000 || trips < 1) {
    fprintf(stderr, "line_round_trip: SAMPLES must lie in 1..1000 and TRIPS be at least 1\n");
    return 2;
  }
  if (pin(a) != 0) {
    fprintf(stderr, "line_round_trip: cannot run on CPU %d\n", a);
    return 1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, answer, &b) != 0) return 1;
  // the answering thread on its CPU (or -1: it cannot run there) before the first sample
  long seen = 0;
  if (atomic_compare_exchange_strong(&line, &seen, 1)) {
    while ((seen = atomic_load_explicit(&line, memory_order_acquire)) == 1) {
    }
  }
  if (seen < 0) {
    pthread_join(t, NULL);
    fprintf(stderr, "line_round_trip: cannot run on CPU %d\n", b);
    return 1;
  }
  printf("{\"cpus\": [%d, %d], \"round_trip_ns\": [", a, b);
  for (int s = 0; s < samples; ++s) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 1 + s * trips; i < 1 + (s + 1) * trips; ++i) {
      atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
      while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2) {
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)trips;
    printf("%s%.1f", s ? ", " : "", ns);
  }
  pthread_join(t, NULL);
  printf("]}\n");
  return 0;
}
