/* Tables, clock and communicator slots of libbandwall-mpiprof; the wrappers are generated. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "mpiprof.h"

enum { BWP_NOT_READY, BWP_COUNTING, BWP_DONE };

int bwp_world_size, bwp_world_rank;
bwp_comm_slot_info bwp_slots[BWP_MAXCOMMS];
int bwp_nslots;

static atomic_int state = BWP_NOT_READY;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(bwp_thread*) threads;
static __thread int depth;
static __thread bwp_thread* mine;

static int use_tsc;
static double ns_per_tick = 1.0;
static uint64_t start_ticks;
static struct timespec start_mono;
static double resolution_ns, read_cost_ns;

static double mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

uint64_t bwp_now(void) {
  if (use_tsc) return __rdtsc();
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The invariant TSC counts at a constant rate in every P- and C-state: /proc/cpuinfo shows both
 * constant_tsc and nonstop_tsc. */
static int invariant_tsc(void) {
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0;
  char line[8192];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) == 0) {
      found = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
      break;
    }
  }
  fclose(f);
  return found;
}

static void calibrate(void) {
  use_tsc = getenv("BANDWALL_MPIPROF_CLOCK") && strcmp(getenv("BANDWALL_MPIPROF_CLOCK"), "monotonic_raw") == 0
                ? 0
                : invariant_tsc();
  if (use_tsc) {
    /* 2 ms against CLOCK_MONOTONIC_RAW; refined over the whole run at the report. */
    double m0 = mono_ns();
    uint64_t c0 = __rdtsc();
    double m1;
    do m1 = mono_ns();
    while (m1 - m0 < 2e6);
    uint64_t c1 = __rdtsc();
    ns_per_tick = (m1 - m0) / (double)(c1 - c0);
    resolution_ns = ns_per_tick;
  } else {
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC_RAW, &res);
    resolution_ns = res.tv_sec * 1e9 + res.tv_nsec;
  }
  enum { N = 1000 };
  uint64_t a = bwp_now();
  for (int i = 0; i < N; i++) (void)bwp_now();
  read_cost_ns = (double)(bwp_now() - a) * ns_per_tick / N;
  clock_gettime(CLOCK_MONOTONIC_RAW, &start_mono);
  start_ticks = bwp_now();
}

bwp_clock_info bwp_clock(void) {
  if (use_tsc) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    double dns = (now.tv_sec - start_mono.tv_sec) * 1e9 + (now.tv_nsec - start_mono.tv_nsec);
    uint64_t dt = bwp_now() - start_ticks;
    if (dns > 1e7 && dt > 0) ns_per_tick = dns / (double)dt;
  }
  bwp_clock_info c = {use_tsc ? "tsc" : "clock_monotonic_raw", ns_per_tick, resolution_ns, read_cost_ns};
  return c;
}

static void fill_slot(bwp_comm_slot_info* s, MPI_Comm comm) {
  int inter = 0;
  MPI_Group group, world_group;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_group(comm, &group);
  else
    PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  PMPI_Group_size(group, &s->size);
  int* ranks = malloc(sizeof(int) * (size_t)s->size);
  s->world = malloc(sizeof(int) * (size_t)s->size);
  if (ranks && s->world) {
    for (int i = 0; i < s->size; i++) ranks[i] = i;
    PMPI_Group_translate_ranks(group, s->size, ranks, world_group, s->world);
    s->leader = s->world[0];
  } else {
    free(s->world);
    s->world = NULL;
    s->leader = -1;
  }
  free(ranks);
  PMPI_Group_free(&group);
  PMPI_Group_free(&world_group);
  s->comm = comm;
  s->live = 1;
}

static int setup(void) {
  int ok = 0, done = 0;
  pthread_mutex_lock(&lock);
  if (atomic_load(&state) != BWP_NOT_READY) {
    ok = atomic_load(&state) == BWP_COUNTING;
    goto out;
  }
  PMPI_Initialized(&ok);
  if (ok) PMPI_Finalized(&done);
  if (!ok || done) {
    ok = 0;
    goto out;
  }
  PMPI_Comm_size(MPI_COMM_WORLD, &bwp_world_size);
  PMPI_Comm_rank(MPI_COMM_WORLD, &bwp_world_rank);
  calibrate();
  fill_slot(&bwp_slots[0], MPI_COMM_WORLD);
  fill_slot(&bwp_slots[1], MPI_COMM_SELF);
  bwp_nslots = 2;
  atomic_store(&state, BWP_COUNTING);
out:
  pthread_mutex_unlock(&lock);
  return ok;
}

static bwp_thread* new_table(void) {
  bwp_thread* t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->sent = calloc((size_t)bwp_world_size, sizeof(uint64_t));
  t->received = calloc((size_t)bwp_world_size, sizeof(uint64_t));
  if (!t->sent || !t->received) {
    free(t->sent);
    free(t->received);
    free(t);
    return NULL;
  }
  for (int i = 0; i < BWP_NCALLS; i++) t->calls[i].min_size = UINT64_MAX;
  bwp_thread* head = atomic_load(&threads);
  do t->next = head;
  while (!atomic_compare_exchange_weak(&threads, &head, t));
  return t;
}

bwp_thread* bwp_threads(void) { return atomic_load(&threads); }

bwp_thread* bwp_enter(void) {
  if (depth) return NULL;
  int s = atomic_load_explicit(&state, memory_order_acquire);
  if (s != BWP_COUNTING && (s == BWP_DONE || !setup())) return NULL;
  if (!mine && !(mine = new_table())) return NULL;
  depth = 1;
  return mine;
}

void bwp_leave(void) { depth = 0; }

/* Stops counting: later calls (the report's own) go straight to PMPI. */
int bwp_stop(void) {
  int expected = BWP_COUNTING;
  return atomic_compare_exchange_strong(&state, &expected, BWP_DONE);
}

uint64_t bwp_bytes(MPI_Count count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  PMPI_Type_size(type, &size);
  return (uint64_t)count * (uint64_t)(size > 0 ? size : 0);
}

/* The sum of n terms term_of_i, 0 when the arrays are NULL (the count arrays of non-roots). */
#define BWP_SUM(arrays, n, term_of_i)                 \
  uint64_t sum = 0;                                   \
  if (arrays)                                         \
    for (int i = 0; i < (n); i++) sum += (term_of_i); \
  return sum

/* One type: the positive counts summed, times its size (read once). */
#define BWP_COUNTS(counts, n, type) BWP_SUM(counts, n, counts[i] > 0 ? (uint64_t)counts[i] : 0) * bwp_bytes(1, type)

uint64_t bwp_sum_bytes(const int* counts, int n, MPI_Datatype type) { BWP_COUNTS(counts, n, type); }
uint64_t bwp_sum_bytes_c(const MPI_Count* counts, int n, MPI_Datatype type) { BWP_COUNTS(counts, n, type); }
uint64_t bwp_sum_bytes_f(const MPI_Fint* counts, int n, MPI_Datatype type) { BWP_COUNTS(counts, n, type); }
uint64_t bwp_sumw_bytes(const int* counts, const MPI_Datatype* types, int n) {
  BWP_SUM(counts && types, n, bwp_bytes(counts[i], types[i]));
}
uint64_t bwp_sumw_bytes_c(const MPI_Count* counts, const MPI_Datatype* types, int n) {
  BWP_SUM(counts && types, n, bwp_bytes(counts[i], types[i]));
}
uint64_t bwp_sumw_bytes_f(const MPI_Fint* counts, const MPI_Fint* types, int n) {
  BWP_SUM(counts && types, n, bwp_bytes(counts[i], PMPI_Type_f2c(types[i])));
}

int bwp_comm_peers(MPI_Comm comm) {
  int n = 0, inter = 0;
  if (comm == MPI_COMM_NULL) return 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_size(comm, &n);
  else
    PMPI_Comm_size(comm, &n);
  return n;
}

int bwp_comm_slot(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return 0;
  if (comm == MPI_COMM_NULL) return -1;
  int n = atomic_load_explicit((_Atomic int*)&bwp_nslots, memory_order_acquire);
  for (int i = 1; i < n; i++)
    if (bwp_slots[i].live && bwp_slots[i].comm == comm) return i;
  pthread_mutex_lock(&lock);
  int slot = -1;
  for (int i = 1; i < bwp_nslots; i++)
    if (bwp_slots[i].live && bwp_slots[i].comm == comm) slot = i;
  if (slot < 0 && bwp_nslots < BWP_MAXCOMMS - 1) {
    slot = bwp_nslots;
    fill_slot(&bwp_slots[slot], comm);
    atomic_store_explicit((_Atomic int*)&bwp_nslots, slot + 1, memory_order_release);
  }
  pthread_mutex_unlock(&lock);
  return slot < 0 ? BWP_MAXCOMMS - 1 : slot; /* the last slot gathers the communicators beyond */
}

/* A freed communicator's handle may come back for another group: its slot keeps its counts but
 * no longer matches. */
void bwp_comm_forget(MPI_Comm comm) {
  pthread_mutex_lock(&lock);
  for (int i = 2; i < bwp_nslots; i++)
    if (bwp_slots[i].live && bwp_slots[i].comm == comm) bwp_slots[i].live = 0;
  pthread_mutex_unlock(&lock);
}

void bwp_status_actual(const MPI_Status* st, int* source, uint64_t* bytes) {
  int n = 0;
  *source = st->MPI_SOURCE;
  if (st->MPI_SOURCE == MPI_PROC_NULL) {
    *bytes = 0;
    return;
  }
#if MPI_VERSION >= 4
  MPI_Count c = 0;
  if (PMPI_Get_count_c(st, MPI_BYTE, &c) == MPI_SUCCESS && c != MPI_UNDEFINED && c >= 0) *bytes = (uint64_t)c;
  (void)n;
#else
  if (PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0) *bytes = (uint64_t)n;
#endif
}

void bwp_count(bwp_thread* t, int call, int slot, uint64_t bytes, uint64_t ticks) {
  bwp_call* c = &t->calls[call];
  c->count++;
  c->bytes += bytes;
  c->ticks += ticks;
  if (bytes < c->min_size) c->min_size = bytes;
  if (bytes > c->max_size) c->max_size = bytes;
  int b = bwp_bin(bytes);
  c->size_hist[b]++;
  c->size_bytes[b] += bytes;
  c->lat_hist[bwp_bin((uint64_t)((double)ticks * ns_per_tick))]++;
  if (slot >= 0) {
    t->comms[slot].count++;
    t->comms[slot].bytes += bytes;
    t->comms[slot].ticks += ticks;
  }
}

void bwp_count_message(bwp_thread* t, int call, int slot, uint64_t bytes, uint64_t lat) {
  bwp_call* c = &t->calls[call];
  c->count++;
  c->bytes += bytes;
  if (bytes < c->min_size) c->min_size = bytes;
  if (bytes > c->max_size) c->max_size = bytes;
  int b = bwp_bin(bytes);
  c->size_hist[b]++;
  c->size_bytes[b] += bytes;
  c->lat_hist[bwp_bin((uint64_t)((double)lat * ns_per_tick))]++;
  if (slot >= 0) {
    t->comms[slot].count++;
    t->comms[slot].bytes += bytes;
  }
}

void bwp_time(bwp_thread* t, int call, uint64_t ticks) { t->calls[call].ticks += ticks; }

static int world_rank_of(int slot, int peer) {
  if (slot < 0 || slot >= BWP_MAXCOMMS - 1 || peer < 0) return -1;
  const bwp_comm_slot_info* s = &bwp_slots[slot];
  if (!s->world || peer >= s->size) return -1;
  return s->world[peer];
}

void bwp_sent(bwp_thread* t, int slot, int peer, uint64_t bytes) {
  if (peer == MPI_PROC_NULL) return;
  int w = world_rank_of(slot, peer);
  if (w >= 0 && w < bwp_world_size)
    t->sent[w] += bytes;
  else
    t->unattributed += bytes;
}

void bwp_received(bwp_thread* t, int slot, int peer, uint64_t bytes) {
  if (peer == MPI_PROC_NULL) return;
  int w = world_rank_of(slot, peer);
  if (w >= 0 && w < bwp_world_size)
    t->received[w] += bytes;
  else
    t->unattributed += bytes;
}

int bwp_is_root(MPI_Comm comm, int root) {
  int me = -1, inter = 0;
  if (root == MPI_ROOT) return 1;
  if (root < 0 || comm == MPI_COMM_NULL) return 0;
  PMPI_Comm_test_inter(comm, &inter); /* there the root's group passes MPI_ROOT, the other its rank */
  return !inter && PMPI_Comm_rank(comm, &me) == MPI_SUCCESS && me == root;
}

void bwp_rooted(bwp_thread* t, int call, uint64_t bytes) {
  t->calls[call].root_count++;
  t->calls[call].root_bytes += bytes;
}

int bwp_thread_level(void) {
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  return level;
}

void* bwp_next(void** cache, const char* name) {
  void* f = __atomic_load_n(cache, __ATOMIC_RELAXED);
  if (f) return f;
  f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "libbandwall-mpiprof: error: the MPI library has no %s\n", name);
    exit(1);
  }
  __atomic_store_n(cache, f, __ATOMIC_RELAXED);
  return f;
}

int MPI_Finalize(void) {
  bwp_report();
  return PMPI_Finalize();
}
