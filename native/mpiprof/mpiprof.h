/* libbandwall-mpiprof: a PMPI profiler for unmodified MPI programs. Per rank, per call type and per
 * communicator it keeps counts, bytes, time and log2 histograms of message size and latency, and
 * the bytes sent to and received from every rank; no event log, no stack walk. Tables are per
 * thread (safe under MPI_THREAD_MULTIPLE) and of fixed size (memory does not grow with the run).
 * At MPI_Finalize the ranks' tables are reduced to rank 0, which writes the text histograms and a
 * JSON record. Internal interface of the library (prefix bwp_); the wrappers are generated. */
#pragma once
#include <mpi.h>
#include <stdint.h>

#include "calls.h"

#define BWP_NBINS 65    /* bin 0: value 0; bin k >= 1: [2^(k-1), 2^k) */
#define BWP_MAXCOMMS 64 /* communicator slots per process; later ones share the last slot */

typedef struct {
  uint64_t count, bytes, ticks;
  uint64_t min_size, max_size;
  uint64_t root_count, root_bytes; /* rooted collectives: calls made as the root, bytes there */
  uint64_t size_hist[BWP_NBINS];
  uint64_t size_bytes[BWP_NBINS]; /* bytes of the messages in each size bin (for the rail model) */
  uint64_t lat_hist[BWP_NBINS];   /* nanoseconds */
} bwp_call;

typedef struct {
  uint64_t count, bytes, ticks;
} bwp_commstat;

typedef struct bwp_thread {
  bwp_call calls[BWP_NCALLS];
  bwp_commstat comms[BWP_MAXCOMMS];
  uint64_t* sent;     /* bytes sent to each MPI_COMM_WORLD rank */
  uint64_t* received; /* bytes received from each MPI_COMM_WORLD rank */
  uint64_t unattributed;
  struct bwp_thread* next;
} bwp_thread;

/* The calling thread's table, or NULL when the call must not be counted: made from inside another
 * wrapped call (re-entry), before MPI_Init, after the report or when the table cannot be
 * allocated. A non-NULL return must be paired with bwp_leave(). */
bwp_thread* bwp_enter(void);
void bwp_leave(void);

/* Clock ticks (invariant TSC or CLOCK_MONOTONIC_RAW nanoseconds). */
uint64_t bwp_now(void);

uint64_t bwp_bytes(int count, MPI_Datatype type);
int bwp_comm_size(MPI_Comm comm);
int bwp_comm_slot(MPI_Comm comm);
void bwp_comm_forget(MPI_Comm comm);
void bwp_status_actual(const MPI_Status* st, int* source, uint64_t* bytes);

void bwp_count(bwp_thread* t, int call, int slot, uint64_t bytes, uint64_t ticks);
void bwp_sent(bwp_thread* t, int slot, int peer, uint64_t bytes);
void bwp_received(bwp_thread* t, int slot, int peer, uint64_t bytes);
void bwp_rooted(bwp_thread* t, int call, MPI_Comm comm, int root, uint64_t bytes);

/* The next definition of a symbol (dlsym RTLD_NEXT), cached in *cache. */
void* bwp_next(void** cache, const char* name);

/* ---- shared with report.c ---- */
typedef struct {
  const char* source; /* "tsc" or "clock_monotonic_raw" */
  double ns_per_tick;
  double resolution_ns;
  double read_cost_ns;
} bwp_clock_info;

typedef struct {
  MPI_Comm comm;
  int live;
  int size;
  int leader; /* MPI_COMM_WORLD rank of the communicator's rank 0 */
  int* world; /* world rank of each rank (remote group for inter-communicators) */
} bwp_comm_slot_info;

extern int bwp_world_size, bwp_world_rank;
extern bwp_comm_slot_info bwp_slots[BWP_MAXCOMMS];
extern int bwp_nslots;
bwp_thread* bwp_threads(void);
bwp_clock_info bwp_clock(void);
int bwp_thread_level(void);

/* Stops counting (1 the first time, 0 after). */
int bwp_stop(void);

/* Reduces every rank's tables to rank 0, which writes the text and JSON reports (once). */
void bwp_report(void);

/* Histogram bin of a value: 0 for 0, else floor(log2 v) + 1. */
static inline int bwp_bin(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }
