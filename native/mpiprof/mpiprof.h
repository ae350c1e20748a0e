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
#define BWP_MAXREQS 64  /* persistent point-to-point requests followed per thread */

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

/* A persistent request made on this thread: what each start of it sends or receives. */
typedef struct {
  MPI_Request req;
  uint64_t bytes;
  int call, slot, peer, recv;
} bwp_persistent;

typedef struct bwp_thread {
  bwp_call calls[BWP_NCALLS];
  bwp_commstat comms[BWP_MAXCOMMS];
  uint64_t* sent;     /* bytes sent to each MPI_COMM_WORLD rank */
  uint64_t* received; /* bytes received from each MPI_COMM_WORLD rank */
  uint64_t unattributed;
  bwp_persistent reqs[BWP_MAXREQS];
  int nreqs;
  uint64_t unattributed_starts; /* starts of requests not in reqs (full, other thread, collective) */
  struct bwp_thread* next;
} bwp_thread;

/* The calling thread's table, or NULL when the call must not be counted: made from inside another
 * wrapped call (re-entry), before MPI_Init, after the report or when the table cannot be
 * allocated. A non-NULL return must be paired with bwp_leave(). */
bwp_thread* bwp_enter(void);
void bwp_leave(void);

/* Clock ticks (invariant TSC or CLOCK_MONOTONIC_RAW nanoseconds). */
uint64_t bwp_now(void);

uint64_t bwp_bytes(MPI_Count count, MPI_Datatype type);
/* Bytes of n counts of one type (v collectives) or of n (count, type) pairs (w collectives), for
 * C int, MPI_Count (large-count calls) and Fortran integer arrays; a NULL array is 0 bytes. */
uint64_t bwp_sum_bytes(const int* counts, int n, MPI_Datatype type);
uint64_t bwp_sum_bytes_c(const MPI_Count* counts, int n, MPI_Datatype type);
uint64_t bwp_sum_bytes_f(const MPI_Fint* counts, int n, MPI_Datatype type);
uint64_t bwp_sumw_bytes(const int* counts, const MPI_Datatype* types, int n);
uint64_t bwp_sumw_bytes_c(const MPI_Count* counts, const MPI_Datatype* types, int n);
uint64_t bwp_sumw_bytes_f(const MPI_Fint* counts, const MPI_Fint* types, int n);
/* The ranks a collective addresses: the communicator's size, the remote group's when inter. */
int bwp_comm_peers(MPI_Comm comm);
int bwp_comm_slot(MPI_Comm comm);
void bwp_comm_forget(MPI_Comm comm);
void bwp_status_actual(const MPI_Status* st, int* source, uint64_t* bytes);

void bwp_count(bwp_thread* t, int call, int slot, uint64_t bytes, uint64_t ticks);
/* One message of a call whose time is counted elsewhere: latency lat, no time added. */
void bwp_count_message(bwp_thread* t, int call, int slot, uint64_t bytes, uint64_t lat);
void bwp_time(bwp_thread* t, int call, uint64_t ticks);
void bwp_sent(bwp_thread* t, int slot, int peer, uint64_t bytes);
void bwp_received(bwp_thread* t, int slot, int peer, uint64_t bytes);
/* 1 when the calling rank is the root of a rooted collective (MPI_ROOT in an inter-communicator). */
int bwp_is_root(MPI_Comm comm, int root);
void bwp_rooted(bwp_thread* t, int call, uint64_t bytes);

/* Persistent requests (requests.c): made, started (counted as messages of their init's row) and
 * freed; a thread follows BWP_MAXREQS of its own. */
void bwp_persist(bwp_thread* t, int call, MPI_Request req, int slot, int peer, uint64_t bytes, int recv);
void bwp_unpersist(bwp_thread* t, MPI_Request req);
void bwp_start(bwp_thread* t, const MPI_Request* reqs, int n, uint64_t ticks);

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
