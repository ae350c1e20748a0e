/* Rank 0's view of the reduced tables, and the two writers of the report (text and JSON). */
#pragma once
#include <stdio.h>

#include "mpiprof.h"

/* Per call, the sums packed for one MPI_Reduce. */
enum {
  SUM_COUNT,
  SUM_BYTES,
  SUM_ROOT_COUNT,
  SUM_ROOT_BYTES,
  SUM_SIZE,
  SUM_SIZE_BYTES = SUM_SIZE + BWP_NBINS,
  SUM_LAT = SUM_SIZE_BYTES + BWP_NBINS,
  SUM_N = SUM_LAT + BWP_NBINS
};
/* Per communicator slot of each rank. */
enum { COMM_LEADER, COMM_SIZE, COMM_COUNT, COMM_BYTES, COMM_NS, COMM_N };

typedef struct {
  int ranks;
  int thread_level;
  bwp_clock_info clock;
  uint64_t* sums;         /* [BWP_NCALLS][SUM_N], summed over ranks */
  uint64_t *mins, *maxs;  /* message size, [BWP_NCALLS] */
  double* secs;           /* [BWP_NCALLS], summed over ranks */
  uint64_t* per_rank;     /* [ranks][BWP_NCALLS][count, root_count, root_bytes] */
  uint64_t* comms;        /* [ranks][BWP_MAXCOMMS][COMM_N] */
  uint64_t* sent;         /* [from][to] bytes */
  uint64_t* received;     /* [at][from] bytes */
  uint64_t* unattributed; /* [ranks][bytes, starts of unknown persistent requests] */
  char* where;            /* [ranks][BWP_WHERE]: where each rank ran (bwp_where) */
} bwp_totals;

/* Where a rank ran: its host name, a NUL, then the CPUs it may run on as a list (0-3,8); made by
   each rank itself, so the record's topology is the ranks' and not the front end's machine. */
enum { BWP_WHERE = 512 };
void bwp_where(char* out);

static inline const uint64_t* bwp_sum(const bwp_totals* a, int call) { return a->sums + (size_t)call * SUM_N; }
static inline uint64_t bwp_bin_low(int b) { return b ? (uint64_t)1 << (b - 1) : 0; }

void bwp_write_text(FILE* f, const bwp_totals* a);
void bwp_write_json(FILE* f, const bwp_totals* a, const char* base);
