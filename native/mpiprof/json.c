/* The JSON record of a profiled run (tool "mpiprof"): calls summed over ranks with their size and
 * latency histograms, the partner matrices, communicators, per-rank counts and the clock. The
 * front end completes its provenance and stores it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "report_write.h"

#ifndef BANDWALL_GIT_REV
#define BANDWALL_GIT_REV "unknown"
#endif
#ifndef BWP_FLAGS
#define BWP_FLAGS ""
#endif
#ifndef BWP_MPI_NAME
#define BWP_MPI_NAME "mpi"
#endif

static void str(FILE* f, const char* s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void hist(FILE* f, const char* key, const uint64_t* h) {
  fprintf(f, ",\"%s\":{", key);
  int first = 1;
  for (int b = 0; b < BWP_NBINS; b++) {
    if (!h[b]) continue;
    fprintf(f, "%s\"%llu\":%llu", first ? "" : ",", (unsigned long long)bwp_bin_low(b), (unsigned long long)h[b]);
    first = 0;
  }
  fputc('}', f);
}

static void matrix(FILE* f, const char* key, const uint64_t* m, int n) {
  fprintf(f, ",\"%s\":[", key);
  for (int i = 0; i < n; i++) {
    fputs(i ? ",[" : "[", f);
    for (int j = 0; j < n; j++) fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)m[(size_t)i * n + j]);
    fputc(']', f);
  }
  fputc(']', f);
}

static void calls(FILE* f, const bwp_totals* a) {
  fputs("\"calls\":[", f);
  int first = 1;
  for (int c = 0; c < BWP_NCALLS; c++) {
    const uint64_t* s = bwp_sum(a, c);
    if (!s[SUM_COUNT]) continue;
    fprintf(f, "%s{\"name\":\"%s\",\"kind\":\"%s\",\"count\":%llu,\"bytes\":%llu,\"time_s\":%.9g", first ? "" : ",",
            bwp_call_names[c], bwp_call_kinds[c], (unsigned long long)s[SUM_COUNT], (unsigned long long)s[SUM_BYTES],
            a->secs[c]);
    fprintf(f, ",\"min_size\":%llu,\"max_size\":%llu", (unsigned long long)a->mins[c], (unsigned long long)a->maxs[c]);
    hist(f, "size_hist", s + SUM_SIZE);
    hist(f, "size_bytes_hist", s + SUM_SIZE_BYTES);
    hist(f, "latency_hist", s + SUM_LAT);
    if (s[SUM_ROOT_COUNT]) {
      fputs(",\"roots\":{", f);
      int rf = 1;
      for (int r = 0; r < a->ranks; r++) {
        const uint64_t* p = a->per_rank + ((size_t)r * BWP_NCALLS + c) * 3;
        if (!p[1]) continue;
        fprintf(f, "%s\"%d\":{\"count\":%llu,\"bytes\":%llu}", rf ? "" : ",", r, (unsigned long long)p[1],
                (unsigned long long)p[2]);
        rf = 0;
      }
      fputc('}', f);
    }
    fputc('}', f);
    first = 0;
  }
  fputc(']', f);
}

/* Communicators of every rank merged by (world rank of their rank 0, size); slots beyond the
 * table's size come as leader -1. */
static void communicators(FILE* f, const bwp_totals* a) {
  size_t n = (size_t)a->ranks * BWP_MAXCOMMS;
  uint64_t(*m)[COMM_N + 1] = calloc(n, sizeof *m);
  size_t used = 0;
  for (size_t i = 0; m && i < n; i++) {
    const uint64_t* c = a->comms + i * COMM_N;
    if (!c[COMM_COUNT]) continue;
    size_t k = 0;
    while (k < used && !(m[k][COMM_LEADER] == c[COMM_LEADER] && m[k][COMM_SIZE] == c[COMM_SIZE])) k++;
    if (k == used) {
      used++;
      m[k][COMM_LEADER] = c[COMM_LEADER];
      m[k][COMM_SIZE] = c[COMM_SIZE];
    }
    m[k][COMM_COUNT] += c[COMM_COUNT];
    m[k][COMM_BYTES] += c[COMM_BYTES];
    m[k][COMM_NS] += c[COMM_NS];
    m[k][COMM_N]++;
  }
  fputs(",\"communicators\":[", f);
  for (size_t k = 0; k < used; k++)
    fprintf(f, "%s{\"leader\":%lld,\"size\":%llu,\"ranks\":%llu,\"count\":%llu,\"bytes\":%llu,\"time_s\":%.9g}",
            k ? "," : "", m[k][COMM_LEADER] == UINT64_MAX ? -1LL : (long long)m[k][COMM_LEADER],
            (unsigned long long)m[k][COMM_SIZE], (unsigned long long)m[k][COMM_N], (unsigned long long)m[k][COMM_COUNT],
            (unsigned long long)m[k][COMM_BYTES], (double)m[k][COMM_NS] * 1e-9);
  fputc(']', f);
  free(m);
}

static void cmdline(char* out, size_t len) {
  FILE* p = fopen("/proc/self/cmdline", "r");
  size_t n = p ? fread(out, 1, len - 1, p) : 0;
  if (p) fclose(p);
  out[n] = 0;
  for (size_t i = 0; i + 1 < n; i++)
    if (!out[i]) out[i] = ' ';
}

static void cpu_model(char* out, size_t len) {
  FILE* p = fopen("/proc/cpuinfo", "r");
  char line[512];
  snprintf(out, len, "unknown");
  while (p && fgets(line, sizeof line, p)) {
    if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
      snprintf(out, len, "%s", strchr(line, ':') + 2);
      out[strcspn(out, "\n")] = 0;
      break;
    }
  }
  if (p) fclose(p);
}

static const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

void bwp_write_json(FILE* f, const bwp_totals* a, const char* base) {
  char cmd[4096], model[256], lib[MPI_MAX_LIBRARY_VERSION_STRING], date[32], text_path[4200];
  int liblen = 0;
  struct utsname u;
  cmdline(cmd, sizeof cmd);
  cpu_model(model, sizeof model);
  PMPI_Get_library_version(lib, &liblen);
  lib[strcspn(lib, "\n,")] = 0;
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  uname(&u);
  snprintf(text_path, sizeof text_path, "%s.txt", base);

  fputs("{\"schema_version\":1,\"tool\":\"mpiprof\",\"config\":{\"program\":", f);
  str(f, cmd);
  fprintf(f, ",\"ranks\":%d,\"mpi\":\"%s\",\"mpi_library\":", a->ranks, BWP_MPI_NAME);
  str(f, lib);
  fprintf(f, ",\"thread_level\":\"%s\"},\"result\":{", level_name(a->thread_level));
  calls(f, a);
  matrix(f, "partners", a->sent, a->ranks);
  matrix(f, "partners_received", a->received, a->ranks);
  uint64_t un = 0, starts = 0;
  for (int r = 0; r < a->ranks; r++) un += a->unattributed[2 * r], starts += a->unattributed[2 * r + 1];
  fprintf(f, ",\"unattributed_bytes\":%llu,\"unattributed_starts\":%llu", (unsigned long long)un,
          (unsigned long long)starts);
  communicators(f, a);
  fputs(",\"per_rank\":[", f);
  for (int r = 0; r < a->ranks; r++) {
    const char* where = a->where + (size_t)r * BWP_WHERE;
    fprintf(f, "%s{\"rank\":%d,\"host\":", r ? "," : "", r);
    str(f, where);
    fputs(",\"cpus\":", f);
    str(f, where + strlen(where) + 1);
    fputs(",\"calls\":{", f);
    int first = 1;
    for (int c = 0; c < BWP_NCALLS; c++) {
      uint64_t n = a->per_rank[((size_t)r * BWP_NCALLS + c) * 3];
      if (!n) continue;
      fprintf(f, "%s\"%s\":%llu", first ? "" : ",", bwp_call_names[c], (unsigned long long)n);
      first = 0;
    }
    fputs("}}", f);
  }
  fprintf(f, "],\"clock\":{\"source\":\"%s\",\"resolution_ns\":%.6g,\"read_cost_ns\":%.6g,\"ns_per_tick\":%.9g}",
          a->clock.source, a->clock.resolution_ns, a->clock.read_cost_ns, a->clock.ns_per_tick);
  fputs(",\"text_report\":", f);
  str(f, text_path);
  fputs(
      "},\"validation\":{\"checked\":false,\"passed\":\"not applicable\",\"method\":\"counts and times MPI calls; "
      "nothing is compared\"},\"provenance\":{\"host\":",
      f);
  str(f, u.nodename);
  fputs(",\"cpu_model\":", f);
  str(f, model);
  fprintf(f,
          ",\"topology_digest\":\"unknown\",\"compiler\":\"cc %s\",\"flags\":\"%s\",\"git_revision\":\"%s\","
          "\"date\":\"%s\",\"threads\":0,\"cpus\":\"\",\"binding\":\"\",\"placement\":\"\",\"sizes\":{},"
          "\"repetitions\":0}}\n",
          __VERSION__, BWP_FLAGS, BANDWALL_GIT_REV, date);
}
