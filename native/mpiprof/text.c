/* The text report: one EVENT block per call with the message-size and latency histograms (a '#'
 * bar per power of two, as MPI-PROF printed them), then the partner matrix. */
#include <stdio.h>

#include "report_write.h"

enum { BAR_WIDTH = 50 };

static void bars(FILE* f, const uint64_t* hist, const char* unit) {
  int first = 1, last = 1, mode = 0;
  for (int b = 0; b < BWP_NBINS; b++) {
    if (hist[b] && b > last) last = b;
    if (hist[b] > hist[mode]) mode = b;
  }
  if (hist[0]) first = 0;
  uint64_t per = (hist[mode] + BAR_WIDTH - 1) / BAR_WIDTH;
  if (per == 0) per = 1;
  fprintf(f, "(#:%llu)\n", (unsigned long long)per);
  for (int b = first; b <= last + 1 && b < BWP_NBINS; b++) {
    uint64_t n = hist[b], w = (n + per / 2) / per;
    if (n && !w) w = 1;
    fprintf(f, "%llu%s-|", (unsigned long long)bwp_bin_low(b), unit);
    for (uint64_t i = 0; i < w; i++) fputc('#', f);
    fputc('\n', f);
  }
}

static void mode_line(FILE* f, const uint64_t* hist, uint64_t count) {
  int mode = 0;
  for (int b = 0; b < BWP_NBINS; b++)
    if (hist[b] > hist[mode]) mode = b;
  unsigned pct = count ? (unsigned)(100.0 * (double)hist[mode] / (double)count + 0.5) : 0;
  if (mode == 0)
    fprintf(f, "mode : histogram[zero]=%llu (%u)\n", (unsigned long long)hist[0], pct);
  else
    fprintf(f, "mode : histogram[%d]=%llu (%u)\n", mode - 1, (unsigned long long)hist[mode], pct);
}

void bwp_write_text(FILE* f, const bwp_totals* a) {
  fprintf(f, "bandwall mpiprof: %d ranks, clock %s (resolution %.2f ns)\n\n", a->ranks, a->clock.source,
          a->clock.resolution_ns);
  for (int c = 0; c < BWP_NCALLS; c++) {
    const uint64_t* s = bwp_sum(a, c);
    uint64_t count = s[SUM_COUNT];
    if (!count) continue;
    fprintf(f, "EVENT %d: %s\n", c, bwp_call_names[c] + 4);
    fprintf(f, "#MESSAGE SIZE HISTOGRAM\n");
    fprintf(f, "total size : %llu\n", (unsigned long long)s[SUM_BYTES]);
    fprintf(f, "count : %llu\n", (unsigned long long)count);
    fprintf(f, "average size : %llu\n", (unsigned long long)(s[SUM_BYTES] / count));
    fprintf(f, "max size : %llu\n", (unsigned long long)a->maxs[c]);
    fprintf(f, "min size : %llu\n", (unsigned long long)a->mins[c]);
    mode_line(f, s + SUM_SIZE, count);
    bars(f, s + SUM_SIZE, "");
    fprintf(f, "#LATENCY HISTOGRAM (ns)\n");
    fprintf(f, "total time : %.6f s\n", a->secs[c]);
    fprintf(f, "average time : %.0f ns\n", a->secs[c] * 1e9 / (double)count);
    mode_line(f, s + SUM_LAT, count);
    bars(f, s + SUM_LAT, "");
    fputc('\n', f);
  }
  fprintf(f, "#PARTNERS (bytes sent; row: from rank, column: to rank)\n");
  for (int i = 0; i < a->ranks; i++) {
    fprintf(f, "%d:", i);
    for (int j = 0; j < a->ranks; j++) fprintf(f, " %llu", (unsigned long long)a->sent[(size_t)i * a->ranks + j]);
    fputc('\n', f);
  }
}
