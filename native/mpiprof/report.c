/* The report of libbandwall-mpiprof: at MPI_Finalize every rank's tables are reduced to rank 0,
 * which writes the text histograms (one EVENT block per call) and the JSON record. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "mpiprof.h"
#include "report_write.h"

static void local_totals(bwp_thread* mine, double ns_per_tick, uint64_t* sums, uint64_t* mins, uint64_t* maxs,
                         double* secs, uint64_t* comms, uint64_t* sent, uint64_t* received, uint64_t unattributed[2]) {
  for (int c = 0; c < BWP_NCALLS; c++) mins[c] = UINT64_MAX;
  for (bwp_thread* t = mine; t; t = t->next) {
    for (int c = 0; c < BWP_NCALLS; c++) {
      const bwp_call* k = &t->calls[c];
      uint64_t* s = sums + (size_t)c * SUM_N;
      s[SUM_COUNT] += k->count;
      s[SUM_BYTES] += k->bytes;
      s[SUM_ROOT_COUNT] += k->root_count;
      s[SUM_ROOT_BYTES] += k->root_bytes;
      for (int b = 0; b < BWP_NBINS; b++) {
        s[SUM_SIZE + b] += k->size_hist[b];
        s[SUM_SIZE_BYTES + b] += k->size_bytes[b];
        s[SUM_LAT + b] += k->lat_hist[b];
      }
      if (k->count && k->min_size < mins[c]) mins[c] = k->min_size;
      if (k->max_size > maxs[c]) maxs[c] = k->max_size;
      secs[c] += (double)k->ticks * ns_per_tick * 1e-9;
    }
    for (int i = 0; i < BWP_MAXCOMMS; i++) {
      comms[i * COMM_N + COMM_COUNT] += t->comms[i].count;
      comms[i * COMM_N + COMM_BYTES] += t->comms[i].bytes;
      comms[i * COMM_N + COMM_NS] += (uint64_t)((double)t->comms[i].ticks * ns_per_tick);
    }
    for (int r = 0; r < bwp_world_size; r++) {
      sent[r] += t->sent[r];
      received[r] += t->received[r];
    }
    unattributed[0] += t->unattributed;
    unattributed[1] += t->unattributed_starts;
  }
  for (int i = 0; i < BWP_MAXCOMMS; i++) {
    int known = i < bwp_nslots && bwp_slots[i].world;
    comms[i * COMM_N + COMM_LEADER] = known ? (uint64_t)bwp_slots[i].leader : UINT64_MAX;
    comms[i * COMM_N + COMM_SIZE] = known ? (uint64_t)bwp_slots[i].size : 0;
  }
}

/* A name no earlier report has: mpiprof-<UTC time>-<host>-<pid>[-n], in $BANDWALL_MPIPROF_DIR or
 * the working directory; both files are created here (O_EXCL), so nothing is overwritten. */
static int open_reports(char* base, size_t len, FILE** txt, FILE** js) {
  const char* dir = getenv("BANDWALL_MPIPROF_DIR");
  char host[64] = "host", stamp[32];
  struct utsname u;
  if (uname(&u) == 0) snprintf(host, sizeof host, "%.63s", u.nodename);
  time_t now = time(NULL);
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&now));
  for (int n = 0; n < 1000; n++) {
    char suffix[16] = "";
    if (n) snprintf(suffix, sizeof suffix, "-%d", n);
    snprintf(base, len, "%.3900s/mpiprof-%s-%s-%d%s", dir && *dir ? dir : ".", stamp, host, (int)getpid(), suffix);
    char path[4200];
    snprintf(path, sizeof path, "%.4090s.txt", base);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return -1;
    }
    snprintf(path, sizeof path, "%.4090s.json", base);
    int fj = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fj < 0) {
      close(fd);
      snprintf(path, sizeof path, "%.4090s.txt", base);
      unlink(path);
      if (errno == EEXIST) continue;
      return -1;
    }
    *txt = fdopen(fd, "w");
    *js = fdopen(fj, "w");
    return *txt && *js ? 0 : -1;
  }
  errno = EEXIST;
  return -1;
}

void bwp_where(char* out) {
  struct utsname u;
  memset(out, 0, BWP_WHERE);
  snprintf(out, 64, "%.63s", uname(&u) == 0 ? u.nodename : "unknown");
  char* list = out + strlen(out) + 1;
  const size_t room = (size_t)(out + BWP_WHERE - list) - 1;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  size_t used = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
    int w = last > c ? snprintf(list + used, room - used, "%s%d-%d", used ? "," : "", c, last)
                     : snprintf(list + used, room - used, "%s%d", used ? "," : "", c);
    if (w < 0 || (size_t)w >= room - used) { /* too long for the record: say so instead of cutting */
      snprintf(list, room, "more than fit");
      return;
    }
    used += (size_t)w;
    c = last;
  }
}

void bwp_report(void) {
  bwp_thread* t = bwp_enter(); /* sets up a program that made no counted call */
  if (t) bwp_leave();
  if (!bwp_stop()) return;
  bwp_clock_info clk = bwp_clock();
  const int n = bwp_world_size, me = bwp_world_rank;
  const size_t nsum = (size_t)BWP_NCALLS * SUM_N;
  uint64_t *sums = calloc(nsum, 8), *mins = calloc(BWP_NCALLS, 8), *maxs = calloc(BWP_NCALLS, 8);
  double* secs = calloc(BWP_NCALLS, sizeof(double));
  uint64_t* comms = calloc((size_t)BWP_MAXCOMMS * COMM_N, 8);
  uint64_t *sent = calloc((size_t)n, 8), *received = calloc((size_t)n, 8), unattributed[2] = {0, 0};
  uint64_t* mine = calloc((size_t)BWP_NCALLS * 3, 8);
  char* where = calloc(BWP_WHERE, 1);
  bwp_totals all = {0};
  int ok = sums && mins && maxs && secs && comms && sent && received && mine && where;
  if (me == 0 && ok) {
    all.sums = calloc(nsum, 8);
    all.mins = calloc(BWP_NCALLS, 8);
    all.maxs = calloc(BWP_NCALLS, 8);
    all.secs = calloc(BWP_NCALLS, sizeof(double));
    all.per_rank = calloc((size_t)n * BWP_NCALLS * 3, 8);
    all.comms = calloc((size_t)n * BWP_MAXCOMMS * COMM_N, 8);
    all.sent = calloc((size_t)n * n, 8);
    all.received = calloc((size_t)n * n, 8);
    all.unattributed = calloc((size_t)n * 2, 8);
    all.where = calloc((size_t)n, BWP_WHERE);
    ok = all.sums && all.mins && all.maxs && all.secs && all.per_rank && all.comms && all.sent && all.received &&
         all.unattributed && all.where;
  }
  /* Every rank takes part in the reductions even when one failed to allocate: rank 0 decides. */
  int local_ok = ok, every_ok = 0;
  PMPI_Allreduce(&local_ok, &every_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!every_ok) {
    if (me == 0) fprintf(stderr, "libbandwall-mpiprof: error: out of memory for the report\n");
    goto out;
  }
  local_totals(bwp_threads(), clk.ns_per_tick, sums, mins, maxs, secs, comms, sent, received, unattributed);
  for (int c = 0; c < BWP_NCALLS; c++) {
    mine[c * 3] = sums[(size_t)c * SUM_N + SUM_COUNT];
    mine[c * 3 + 1] = sums[(size_t)c * SUM_N + SUM_ROOT_COUNT];
    mine[c * 3 + 2] = sums[(size_t)c * SUM_N + SUM_ROOT_BYTES];
  }
  PMPI_Reduce(sums, all.sums, (int)nsum, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(mins, all.mins, BWP_NCALLS, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
  PMPI_Reduce(maxs, all.maxs, BWP_NCALLS, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
  PMPI_Reduce(secs, all.secs, BWP_NCALLS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Gather(mine, BWP_NCALLS * 3, MPI_UINT64_T, all.per_rank, BWP_NCALLS * 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  PMPI_Gather(comms, BWP_MAXCOMMS * COMM_N, MPI_UINT64_T, all.comms, BWP_MAXCOMMS * COMM_N, MPI_UINT64_T, 0,
              MPI_COMM_WORLD);
  PMPI_Gather(sent, n, MPI_UINT64_T, all.sent, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  PMPI_Gather(received, n, MPI_UINT64_T, all.received, n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  PMPI_Gather(unattributed, 2, MPI_UINT64_T, all.unattributed, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bwp_where(where);
  PMPI_Gather(where, BWP_WHERE, MPI_CHAR, all.where, BWP_WHERE, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (me == 0) {
    char base[4096];
    FILE *txt = NULL, *js = NULL;
    all.ranks = n;
    all.clock = clk;
    all.thread_level = bwp_thread_level();
    if (open_reports(base, sizeof base, &txt, &js) != 0) {
      fprintf(stderr, "libbandwall-mpiprof: error: cannot create the report in %s: %s\n",
              getenv("BANDWALL_MPIPROF_DIR") ? getenv("BANDWALL_MPIPROF_DIR") : ".", strerror(errno));
    } else {
      bwp_write_text(txt, &all);
      bwp_write_json(js, &all, base);
      fprintf(stderr, "libbandwall-mpiprof: wrote %s.txt and %s.json\n", base, base);
    }
    if (txt) fclose(txt);
    if (js) fclose(js);
  }
out:
  free(sums), free(mins), free(maxs), free(secs), free(comms), free(sent), free(received), free(mine), free(where);
  free(all.sums), free(all.mins), free(all.maxs), free(all.secs), free(all.per_rank), free(all.comms);
  free(all.sent), free(all.received), free(all.unattributed), free(all.where);
}
