/* One-thread programs for bench/sensitivity.py, each of a known kind and a fixed amount of work:
 *   chase  MIB MLOADS   one pointer chase through MIB in a random cycle, MLOADS million loads: each
 *                       waits for the last (latency-bound when MIB is far beyond the caches)
 *   random MIB MLOADS   independent loads at random lines of MIB: many in flight (cache-bound when
 *                       MIB fits the last-level cache and not the private ones)
 * Each prints one JSON line: the kind, the size, the loads and the ns a load. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t next_random(uint64_t* s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

int main(int argc, char** argv) {
  if (argc != 4 || (strcmp(argv[1], "chase") && strcmp(argv[1], "random"))) {
    fprintf(stderr, "usage: %s chase|random MIB MLOADS\n", argv[0]);
    return 2;
  }
  const size_t lines = (size_t)(atof(argv[2]) * 1048576.0) / 64;
  const uint64_t total = (uint64_t)(atof(argv[3]) * 1e6);
  if (lines < 2 || total < 1) {
    fprintf(stderr, "%s: MIB and MLOADS must be positive\n", argv[0]);
    return 2;
  }
  uint64_t* mem = aligned_alloc(64, lines * 64);
  if (!mem) {
    fprintf(stderr, "%s: cannot allocate %s MiB\n", argv[0], argv[2]);
    return 1;
  }
  uint64_t seed = 0x9e3779b97f4a7c15ull, loads = 0, sum = 0;
  /* a random cycle through all lines (Sattolo's shuffle); line i's first word holds the next line */
  uint64_t* perm = malloc(lines * sizeof *perm);
  for (size_t i = 0; i < lines; ++i) perm[i] = i;
  for (size_t i = lines - 1; i > 0; --i) {
    size_t j = next_random(&seed) % i;
    uint64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (size_t i = 0; i < lines; ++i) mem[perm[i] * 8] = perm[(i + 1) % lines];
  free(perm);
  const double t0 = now();
  if (argv[1][0] == 'c') {
    uint64_t p = 0;
    for (; loads < total; ++loads) p = mem[p * 8];
    sum = p;
  } else {
    for (; loads < total; ++loads) sum += mem[(next_random(&seed) % lines) * 8];
  }
  const double t = now();
  printf("{\"kind\": \"%s\", \"MiB\": %s, \"loads\": %llu, \"ns_per_load\": %.3f, \"sink\": %llu}\n", argv[1], argv[2],
         (unsigned long long)loads, (t - t0) * 1e9 / (double)loads, (unsigned long long)(sum & 1));
  free(mem);
  return 0;
}
