/* Does a line another core has just loaded reach this core faster than DRAM? The question behind
 * the helper copy engine (inter-core prefetching): CPU A reads a buffer of S bytes, timed, after
 *   dram      every line flushed (clflushopt): A's read comes from memory;
 *   own       A read the buffer just before: the lines it cannot keep in L2 come from L3;
 *   other     B read the buffer just before (flushed first): what a helper's touch gives A;
 *   other-l3  B read the buffer, then read 4 x its L2 of other data, pushing the buffer out of
 *             B's L2 (into a victim L3 where there is one).
 * Also the round trip of one cache line between A and B (ping-pong on an atomic), in ns.
 * Prints one JSON line per repetition set: {case: GB/s, ..., "pingpong_ns": x}.
 *
 *   cross_core_reuse CPU_A CPU_B BYTES REPS
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int cpu;
  void (*fn)(void*);
  void* arg;
} job_t;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void* trampoline(void* p) {
  job_t* j = p;
  j->fn(j->arg);
  return NULL;
}

/* Runs fn(arg) on a thread bound to cpu and waits for it. */
static void on_cpu(int cpu, void (*fn)(void*), void* arg) {
  pthread_attr_t attr;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_attr_init(&attr);
  pthread_attr_setaffinity_np(&attr, sizeof set, &set);
  job_t j = {cpu, fn, arg};
  pthread_t t;
  if (pthread_create(&t, &attr, trampoline, &j) != 0) {
    fprintf(stderr, "cross_core_reuse: cannot start a thread on CPU %d\n", cpu);
    exit(1);
  }
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
}

typedef struct {
  const uint64_t* buf;
  size_t n;
  uint64_t sum;
  double seconds;
} read_t;

/* Integer sums vectorise (their order does not matter), so the loads, not the adds, set the pace. */
static void read_all(void* p) {
  read_t* r = p;
  uint64_t s = 0;
  double t0 = now();
  for (size_t i = 0; i < r->n; ++i) s += r->buf[i];
  r->seconds = now() - t0;
  r->sum = s;
}

static void flush(const uint64_t* buf, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm_clflushopt((void*)(buf + i));
  _mm_mfence();
}

static atomic_int ball;
static int rounds_pp = 20000;
static void ping(void* p) {
  (void)p;
  for (int i = 0; i < rounds_pp; ++i) {
    while (atomic_load_explicit(&ball, memory_order_acquire) != 2 * i) _mm_pause();
    atomic_store_explicit(&ball, 2 * i + 1, memory_order_release);
  }
}
typedef struct {
  double seconds;
} pong_t;
static void pong(void* p) {
  pong_t* r = p;
  double t0 = now();
  for (int i = 0; i < rounds_pp; ++i) {
    atomic_store_explicit(&ball, 2 * i, memory_order_release);
    while (atomic_load_explicit(&ball, memory_order_acquire) != 2 * i + 1) _mm_pause();
  }
  r->seconds = now() - t0;
}
typedef struct {
  int cpu;
} pinger_t;
static void* pinger(void* p) {
  pinger_t* c = p;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(c->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  ping(NULL);
  return NULL;
}

static double pingpong_ns(int a, int b) {
  atomic_store(&ball, -1);
  pinger_t pc = {b};
  pthread_t t;
  pthread_create(&t, NULL, pinger, &pc);
  pong_t r;
  on_cpu(a, pong, &r);
  pthread_join(t, NULL);
  return 1e9 * r.seconds / rounds_pp;
}

/* Concurrent cases over two large arrays X and Y (each of `big` bytes): A sums X and Y chunk by
 * chunk; with a helper, B reads Y's chunk j + ahead while A works on chunk j (A waits until B has
 * finished the chunk it needs), as the helper engine's touch mode with the split strategy does. */
typedef struct {
  const uint64_t *x, *y;
  size_t n, chunk;
  int ahead;
  int helped;
  atomic_size_t* done; /* chunks B has finished */
  atomic_size_t* pos;  /* chunks A has finished */
  uint64_t sum;
  double seconds;
  size_t waits;
} dual_t;

static void dual_reader(void* p) {
  dual_t* d = p;
  uint64_t s = 0;
  size_t chunks = d->n / d->chunk, waits = 0;
  double t0 = now();
  for (size_t j = 0; j < chunks; ++j) {
    if (d->helped && atomic_load_explicit(d->done, memory_order_acquire) < (j + 1 < chunks ? j + 1 : chunks)) {
      ++waits;
      while (atomic_load_explicit(d->done, memory_order_acquire) < j + 1) _mm_pause();
    }
    const uint64_t *x = d->x + j * d->chunk, *y = d->y + j * d->chunk;
    for (size_t i = 0; i < d->chunk; ++i) s += x[i] + y[i];
    atomic_store_explicit(d->pos, j + 1, memory_order_release);
  }
  d->seconds = now() - t0;
  d->sum = s;
  d->waits = waits;
}

typedef struct {
  const uint64_t* y;
  size_t n, chunk, ahead;
  atomic_size_t *done, *pos;
  uint64_t sink;
  int cpu;
} toucher_t;

static void* toucher(void* p) {
  toucher_t* t = p;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(t->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  uint64_t s = 0;
  size_t chunks = t->n / t->chunk;
  for (size_t j = 0; j < chunks; ++j) {
    while (j >= atomic_load_explicit(t->pos, memory_order_acquire) + t->ahead) _mm_pause(); /* stay in cache */
    const uint64_t* y = t->y + j * t->chunk;
    for (size_t i = 0; i < t->chunk; i += 8) s += y[i]; /* one load per cache line */
    atomic_store_explicit(t->done, j + 1, memory_order_release);
  }
  t->sink = s;
  return NULL;
}

/* GB/s of A over X and Y (2 * big bytes), alone (helped = 0) or with B touching Y at most `ahead`
 * chunks ahead of A (16 x 256 KiB: 4 MiB, well inside a shared L3). */
static double dual(int a, int b, const uint64_t* x, const uint64_t* y, size_t n, size_t chunk, int helped,
                   uint64_t expect) {
  flush(x, n);
  flush(y, n);
  atomic_size_t done = 0, pos = 0;
  dual_t d = {x, y, n, chunk, 16, helped, &done, &pos, 0, 0, 0};
  toucher_t t = {y, n, chunk, 16, &done, &pos, 0, b};
  pthread_t th;
  if (helped) pthread_create(&th, NULL, toucher, &t);
  on_cpu(a, dual_reader, &d);
  if (helped) pthread_join(th, NULL);
  if (d.sum != expect) {
    fprintf(stderr, "cross_core_reuse: wrong dual sum\n");
    exit(1);
  }
  return 2.0 * (double)(n * sizeof(uint64_t)) / d.seconds / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: cross_core_reuse CPU_A CPU_B BYTES REPS\n");
    return 2;
  }
  int a = atoi(argv[1]), b = atoi(argv[2]), reps = atoi(argv[4]);
  size_t bytes = strtoull(argv[3], NULL, 10), n = bytes / sizeof(uint64_t);
  size_t evict_n = (size_t)64 << 20 >> 3; /* 64 MiB: more than any core's L2 several times over */
  uint64_t* buf = aligned_alloc(64, ((n * sizeof(uint64_t) + 63) & ~(size_t)63));
  uint64_t* evict = aligned_alloc(64, evict_n * sizeof(uint64_t));
  if (!buf || !evict || reps < 1 || n < 64) {
    fprintf(stderr, "cross_core_reuse: bad arguments or no memory\n");
    return 2;
  }
  for (size_t i = 0; i < n; ++i) buf[i] = i % 7;
  for (size_t i = 0; i < evict_n; ++i) evict[i] = 1;
  uint64_t expect = 0;
  for (size_t i = 0; i < n; ++i) expect += buf[i];
  size_t big_n = (size_t)128 << 20 >> 3, chunk = (size_t)256 << 10 >> 3; /* 128 MiB arrays, 256 KiB chunks */
  uint64_t* x = aligned_alloc(64, big_n * sizeof(uint64_t));
  uint64_t* y = aligned_alloc(64, big_n * sizeof(uint64_t));
  if (!x || !y) return 2;
  uint64_t dual_expect = 0;
  for (size_t i = 0; i < big_n; ++i) {
    x[i] = i % 5;
    y[i] = i % 3;
    dual_expect += x[i] + y[i];
  }
  const char* cases[] = {"dram", "own", "other", "other-l3"};
  for (int rep = 0; rep < reps; ++rep) {
    printf("{");
    for (int k = 0; k < 4; ++k) {
      int c = (k + rep) % 4; /* rotated order */
      read_t warm = {buf, n, 0, 0}, timed = {buf, n, 0, 0};
      read_t push = {evict, (size_t)4 << 20 >> 3, 0, 0}; /* 4 MiB of other data through B's L2 */
      flush(buf, n);
      if (c == 1) on_cpu(a, read_all, &warm);
      if (c == 2 || c == 3) on_cpu(b, read_all, &warm);
      if (c == 3) on_cpu(b, read_all, &push);
      on_cpu(a, read_all, &timed);
      if (timed.sum != expect) {
        fprintf(stderr, "cross_core_reuse: wrong sum %llu, expected %llu\n", (unsigned long long)timed.sum,
                (unsigned long long)expect);
        return 1;
      }
      printf("\"%s\": %.3f, ", cases[c], (double)bytes / timed.seconds / 1e9);
    }
    printf("\"dot_alone\": %.3f, \"dot_helped\": %.3f, ", dual(a, b, x, y, big_n, chunk, 0, dual_expect),
           dual(a, b, x, y, big_n, chunk, 1, dual_expect));
    printf("\"pingpong_ns\": %.1f}\n", pingpong_ns(a, b));
    fflush(stdout);
  }
  free(buf);
  free(evict);
  return 0;
}
