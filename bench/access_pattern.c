// What a row kernel's memory accesses cost one core without its arithmetic: per step, S lines read
// from S streams beyond L1 (each region of the streams `kib` KiB in all: in L2 or in L3), W lines
// written to streams nothing reads (a write-allocate and a write-back each), M lines read and written
// back (next's update), K vector loads that hit L1 (a 4 KiB buffer), PF prefetches of lines a step
// ahead and G scalar loads of one stack line (the spilled pointers of a compiled kernel). A step is one
// vector of the widest width built (AVX-512 when the compiler targets it, else AVX); its cycles, at
// the clock of a chain of dependent FMAs (4 cycles each), are what those accesses alone take of the
// kernel's cycles per vector. Prints one JSON record:
//   {"vector_bits": 512, "ghz": 3.7, "kib": 768, "patterns": [{"name", "S", "W", "M", "K", "PF", "G",
//    "cycles_per_step"}]}
//
//   access_pattern CPU KIB [REPEATS]
#define _GNU_SOURCE
#include <immintrin.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define VBITS 512
#define VLOAD(p) __asm__ volatile("vmovaps %1, %0" : "=v"(x) : "m"(*(const vec*)(p)))
#define VSTORE(p) __asm__ volatile("vmovaps %1, %0" : "=m"(*(vec*)(p)) : "v"(x))
#define VRMW(p) __asm__ volatile("vmovaps %0, %1\n\tvaddps %1, %1, %1\n\tvmovaps %1, %0" : "+m"(*(vec*)(p)), "=&v"(x))
#elif defined(__AVX__)
typedef __m256 vec;
#define VBITS 256
#define VLOAD(p) __asm__ volatile("vmovaps %1, %0" : "=x"(x) : "m"(*(const vec*)(p)))
#define VSTORE(p) __asm__ volatile("vmovaps %1, %0" : "=m"(*(vec*)(p)) : "x"(x))
#define VRMW(p) __asm__ volatile("vmovaps %0, %1\n\tvaddps %1, %1, %1\n\tvmovaps %1, %0" : "+m"(*(vec*)(p)), "=&x"(x))
#else
#error "access_pattern needs AVX or AVX-512 (build with -march=native on such a CPU)"
#endif

enum { kLine = 64, kFloats = kLine / 4, kMaxRegions = 8, kL1Floats = 1024 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// GHz from a chain of dependent scalar FMAs (4 cycles each on the CPUs this bench meets).
static double clock_ghz(void) {
  const long n = 100000000;
  double a = 1.0;
  const double b = 0.9999999, c = 1e-9;
  const double t0 = now();
  for (long i = 0; i < n; ++i) __asm__ volatile("vfmadd132sd %2, %1, %0" : "+x"(a) : "x"(c), "x"(b));
  const double t = now() - t0;
  if (a == 42.0) puts("");
  return 4.0 * (double)n / t / 1e9;
}

static float *rd, *wr, *rmw, *l1;
static size_t n;  // floats a region
static volatile long stack_line[8];

// One pattern's step over every line of the regions, `reps` times; the counts are literals at every
// call, so that the loops unroll into straight code as a kernel's do.
static inline __attribute__((always_inline)) double pattern(int S, int W, int M, int K, int PF, int G, long reps) {
  vec x;
  const double t0 = now();
  for (long r = 0; r < reps; ++r)
    for (size_t i = 0; i < n; i += kFloats) {
#pragma GCC unroll 16
      for (int s = 0; s < S; ++s) VLOAD(rd + s * n + i);
#pragma GCC unroll 16
      for (int k = 0; k < K; ++k) VLOAD(l1 + ((i + (size_t)k * kFloats) & (kL1Floats - 1)));
#pragma GCC unroll 4
      for (int w = 0; w < W; ++w) VSTORE(wr + w * n + i);
#pragma GCC unroll 4
      for (int m = 0; m < M; ++m) VRMW(rmw + m * n + i);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) {
        long v;
        __asm__ volatile("mov %1, %0" : "=r"(v) : "m"(stack_line[g]));
      }
#pragma GCC unroll 8
      for (int p = 0; p < PF; ++p)
        __asm__ volatile("prefetcht1 %0"
                         :
                         : "m"(*(const char*)(rd + (p % (S ? S : 1)) * n + ((i + 64 * kFloats) % n))));
    }
  return now() - t0;
}

struct row {
  const char* name;
  int S, W, M, K, PF, G;
  double seconds;
};

#define RUN(name, S, W, M, K, PF, G)                             \
  {                                                              \
    double best = 1e30;                                          \
    for (int q = 0; q < repeats; ++q) {                          \
      const double t = pattern(S, W, M, K, PF, G, reps);         \
      best = t < best ? t : best;                                \
    }                                                            \
    rows[nrows++] = (struct row){name, S, W, M, K, PF, G, best}; \
  }

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: access_pattern CPU KIB [REPEATS]\n");
    return 2;
  }
  const int cpu = atoi(argv[1]);
  const long kib = atol(argv[2]);
  const int repeats = argc > 3 ? atoi(argv[3]) : 3;
  if (kib < 64 || repeats < 1) {
    fprintf(stderr, "access_pattern: KIB at least 64 and REPEATS at least 1\n");
    return 2;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    fprintf(stderr, "access_pattern: cannot run on CPU %d\n", cpu);
    return 1;
  }
  // kib spread over 8 read regions (the most any pattern reads); the written ones as large, apart
  n = (size_t)kib * 1024 / 4 / kMaxRegions / kFloats * kFloats;
  // odd lines between the regions' starts, so that the streams do not share cache sets or 4 KiB offsets
  const size_t gap = 5 * kFloats;
  rd = aligned_alloc(kLine, (kMaxRegions * n + gap) * 4);
  wr = aligned_alloc(kLine, (2 * n + 2 * gap) * 4);
  rmw = aligned_alloc(kLine, (2 * n + 3 * gap) * 4);
  l1 = aligned_alloc(kLine, kL1Floats * 4);
  if (!rd || !wr || !rmw || !l1) {
    fprintf(stderr, "access_pattern: out of memory\n");
    return 1;
  }
  memset(rd, 0, (kMaxRegions * n + gap) * 4);
  memset(wr, 0, (2 * n + 2 * gap) * 4);
  memset(rmw, 0, (2 * n + 3 * gap) * 4);
  memset(l1, 0, kL1Floats * 4);
  rd += gap;
  wr += 2 * gap;
  rmw += 3 * gap;
  const double ghz = clock_ghz();
  const long reps = 1 + (long)(4e8 / (double)(kMaxRegions * n * 4));
  struct row rows[16];
  int nrows = 0;
  RUN("L1 loads", 0, 0, 0, 15, 0, 0);
  RUN("beyond-L1 reads", 7, 0, 0, 0, 0, 0);
  RUN("reads + L1 loads", 6, 0, 0, 8, 0, 0);
  RUN("reads + L1 loads + update", 6, 0, 1, 8, 0, 0);
  RUN("reads + L1 loads + write", 6, 1, 0, 8, 0, 0);
  RUN("ring-like: + write + update", 6, 1, 1, 8, 0, 0);
  RUN("ring-like + 7 prefetches", 6, 1, 1, 8, 7, 0);
  RUN("one-pass-like: 5 reads, update, 10 loads", 5, 0, 1, 10, 0, 0);
  RUN("one-pass-like + 3 prefetches", 5, 0, 1, 10, 3, 0);
  RUN("one-pass-like + 3 prefetches + 5 scalar", 5, 0, 1, 10, 3, 5);
  printf("{\"cpu\": %d, \"vector_bits\": %d, \"ghz\": %.3f, \"kib\": %ld, \"patterns\": [", cpu, VBITS, ghz, kib);
  const double steps = (double)reps * (double)(n / kFloats);
  for (int i = 0; i < nrows; ++i)
    printf(
        "%s{\"name\": \"%s\", \"S\": %d, \"W\": %d, \"M\": %d, \"K\": %d, \"PF\": %d, \"G\": %d, "
        "\"cycles_per_step\": %.2f}",
        i ? ", " : "", rows[i].name, rows[i].S, rows[i].W, rows[i].M, rows[i].K, rows[i].PF, rows[i].G,
        rows[i].seconds * ghz * 1e9 / steps);
  printf("]}\n");
  return 0;
}
