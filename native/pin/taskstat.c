/* What the kernel shows about one thread under /proc: last CPU, migrations, context switches. Plain
 * open/read (no stdio) so the library can call it from thread-exit and process-exit hooks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwpin.h"

static ssize_t slurp(const char* path, char* buf, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t at = 0;
  while (at + 1 < len) {
    ssize_t n = read(fd, buf + at, len - 1 - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += (size_t)n;
  }
  close(fd);
  buf[at] = '\0';
  return (ssize_t)at;
}

/* The number after "key" and its separator (spaces, tabs, ':'), or -1 when the key is absent. */
static long long field(const char* text, const char* key) {
  const char* p = strstr(text, key);
  if (!p) return -1;
  p += strlen(key);
  while (*p == ' ' || *p == '\t' || *p == ':') ++p;
  return strtoll(p, NULL, 10);
}

int bwpin_task_stat_read(int pid, int tid, struct bwpin_task_stat* out) {
  char path[96], buf[4096];
  const char* base = pid ? "/proc/%d/task/%d/%s" : "/proc/self/task/%d/%s";
  if (pid)
    snprintf(path, sizeof path, base, pid, tid, "stat");
  else
    snprintf(path, sizeof path, base, tid, "stat");
  if (slurp(path, buf, sizeof buf) <= 0) return -1;
  /* Fields after the command name (which may hold spaces and parentheses): state is field 3, the
   * last CPU field 39. */
  char* p = strrchr(buf, ')');
  if (!p) return errno = EINVAL, -1;
  int fieldno = 2;
  out->cpu = -1;
  char* save = NULL;
  for (char* tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
    if (++fieldno == 39) {
      out->cpu = atoi(tok);
      break;
    }
  if (out->cpu < 0) return errno = EINVAL, -1;
  if (pid)
    snprintf(path, sizeof path, base, pid, tid, "sched");
  else
    snprintf(path, sizeof path, base, tid, "sched");
  out->migrations = slurp(path, buf, sizeof buf) > 0 ? field(buf, "se.nr_migrations") : -1;
  if (pid)
    snprintf(path, sizeof path, base, pid, tid, "status");
  else
    snprintf(path, sizeof path, base, tid, "status");
  if (slurp(path, buf, sizeof buf) <= 0) return -1;
  out->voluntary = field(buf, "\nvoluntary_ctxt_switches");
  out->involuntary = field(buf, "nonvoluntary_ctxt_switches");
  return 0;
}
