/* libbandwall-pin.so: preloaded into an unmodified program (LD_PRELOAD), binds its main thread to the
 * first CPU of the list and each thread it creates to the next one (see bwpin.h for the variables).
 *
 * How a thread is bound: pthread_create is intercepted and the new thread's start routine is wrapped,
 * so the new thread binds itself (sched_setaffinity on itself) before the program's code runs in it.
 * Binding from the creating thread after creation would leave a window in which the new thread runs
 * unbound, and would race with a runtime that binds its own threads from inside them.
 *
 * The OpenMP runtimes are told not to bind (config.c), so the library is the only binder. libgomp reads
 * its environment in its own constructor, before this one runs: when the environment lacks what the
 * configuration wants (the library was preloaded by hand), the program is executed again once, at
 * once, with the variables set. `bandwall pin` sets them before starting the program, so it is not.
 *
 * With BANDWALL_PIN_REPORT=PATH each thread appends one line when it starts ("T pid index tid cpu
 * creation time, after binding itself) and one when it ends or the process exits ("E pid tid cpu migrations voluntary
 * involuntary"); the launcher merges them with its samples of /proc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bwpin.h"
#include "common/cpulist.h"

#define MAX_THREADS 4096
#define PREFIX "libbandwall-pin: "

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

struct entry {
  int tid;
  atomic_int ended;
};

static struct {
  bwpin_config_t cfg;
  int track, bind, report_fd;
  atomic_uint created, pinned, nentries;
  struct entry entries[MAX_THREADS];
  cpu_set_t all;
  pthread_key_t key;
  create_fn real_create;
} g = {.report_fd = -1};

struct start {
  void* (*fn)(void*);
  void* arg;
  int creation, index, cpu;
};

static int gettid_(void) { return (int)syscall(SYS_gettid); }

static void put(int fd, const char* text) {
  size_t len = strlen(text);
  while (len) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    len -= (size_t)n;
  }
}

static void bind_self(int index, int cpu, const cpu_set_t* set) {
  cpu_set_t one;
  if (!set) {
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    set = &one;
  }
  if (sched_setaffinity(0, sizeof *set, set) != 0) {
    char line[160];
    snprintf(line, sizeof line, PREFIX "cannot bind thread %d to CPU %d: %s\n", index, cpu, strerror(errno));
    put(2, line);
  }
}

static void report_end(int tid) {
  struct bwpin_task_stat st;
  if (g.report_fd < 0 || bwpin_task_stat_read(0, tid, &st) != 0) return;
  char line[160];
  snprintf(line, sizeof line, "E %d %d %d %lld %lld %lld\n", (int)getpid(), tid, st.cpu, st.migrations, st.voluntary,
           st.involuntary);
  put(g.report_fd, line);
}

static struct entry* track_self(int index, int cpu, int creation) {
  int tid = gettid_();
  if (g.report_fd >= 0) {
    char line[160];
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(line, sizeof line, "T %d %d %d %d %d %lld.%09ld\n", (int)getpid(), index, tid, cpu, creation,
             (long long)now.tv_sec, now.tv_nsec);
    put(g.report_fd, line);
  }
  unsigned slot = atomic_fetch_add(&g.nentries, 1);
  if (slot >= MAX_THREADS) return NULL;
  g.entries[slot].tid = tid;
  return &g.entries[slot];
}

static void thread_end(void* p) {
  struct entry* e = p;
  if (!atomic_exchange(&e->ended, 1)) report_end(e->tid);
}

static void* trampoline(void* p) {
  struct start s = *(struct start*)p;
  free(p);
  if (g.bind) bind_self(s.index, s.cpu, s.index < 0 ? &g.all : NULL);
  struct entry* e = track_self(s.index, s.cpu, s.creation);
  if (e && g.report_fd >= 0) pthread_setspecific(g.key, e);
  return s.fn(s.arg);
}

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  if (!g.real_create) g.real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  if (!g.real_create) return EAGAIN;
  if (!g.track) return g.real_create(thread, attr, fn, arg);
  struct start* s = malloc(sizeof *s);
  if (!s) return g.real_create(thread, attr, fn, arg);
  s->fn = fn;
  s->arg = arg;
  s->creation = (int)atomic_fetch_add(&g.created, 1);
  int skipped = s->creation < 64 && ((bwpin_config_skip(g.cfg) >> s->creation) & 1ULL);
  s->index = skipped ? -1 : (int)(1 + atomic_fetch_add(&g.pinned, 1));
  s->cpu = skipped ? -1 : bwpin_config_cpu_of(g.cfg, (unsigned)s->index);
  int rc = g.real_create(thread, attr, trampoline, s);
  if (rc != 0) free(s);
  return rc;
}

/* A runtime that binds (GNU OpenMP with OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY set) has bound
 * the main thread in its own constructor, before this one: the CPU set the program started with is
 * lost. When such variables are set and the parent's CPU set holds the current one, the parent's set
 * is taken back (the program inherited it at fork). A program started by taskset from a less
 * restricted parent with those variables set would be widened too: the known limit of this guess. */
static void undo_runtime_binding(void) {
  const char* bind = getenv("OMP_PROC_BIND");
  if (!(bind && strcmp(bind, "false") != 0 && strcmp(bind, "FALSE") != 0) && !getenv("OMP_PLACES") &&
      !getenv("GOMP_CPU_AFFINITY"))
    return;
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)getppid());
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  char* p = strstr(buf, "Cpus_allowed_list:");
  if (!p) return;
  p += strlen("Cpus_allowed_list:");
  p += strspn(p, " \t");
  p[strcspn(p, "\n")] = '\0';
  int *cpus = NULL, count = 0;
  if (bw_cpulist_parse(p, "Cpus_allowed_list", NULL, 0, &cpus, &count, NULL, 0) != 0) return;
  cpu_set_t parent, now;
  CPU_ZERO(&parent);
  for (int i = 0; i < count; ++i)
    if (cpus[i] < CPU_SETSIZE) CPU_SET(cpus[i], &parent);
  free(cpus);
  if (sched_getaffinity(0, sizeof now, &now) != 0) return;
  cpu_set_t both;
  CPU_AND(&both, &parent, &now);
  if (CPU_EQUAL(&both, &now) && !CPU_EQUAL(&parent, &now)) sched_setaffinity(0, sizeof parent, &parent);
}

__attribute__((constructor)) static void bwpin_init(int argc, char** argv, char** envp) {
  (void)argc;
  (void)envp;
  char msg[512];
  undo_runtime_binding();
  if (bwpin_config_load(&g.cfg, msg, sizeof msg, 0) != 0) {
    char line[600];
    snprintf(line, sizeof line, PREFIX "error: %s\n", errno == EINVAL && msg[0] ? msg : strerror(errno));
    put(2, line);
    _exit(2);
  }
  if (bwpin_config_env_differs(g.cfg)) {
    bwpin_config_apply_env(g.cfg);
    if (!getenv("BANDWALL_PIN_REEXEC") && argv && argv[0]) {
      setenv("BANDWALL_PIN_REEXEC", "1", 1);
      execv("/proc/self/exe", argv);
      put(2,
          PREFIX "could not execute the program again with the OpenMP variables set; GNU OpenMP may not obey them\n");
    }
  }
  unsetenv("BANDWALL_PIN_REEXEC");
  const char* bind_text = getenv("MP_BIND");
  if (getenv("MP_BLIST") && !bind_text && !getenv("BANDWALL_PIN_CPUS"))
    put(2, PREFIX "MP_BLIST is set but MP_BIND is not yes: threads are not bound\n");
  const char* report = getenv("BANDWALL_PIN_REPORT");
  if (report && *report) {
    g.report_fd = open(report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (g.report_fd < 0 || pthread_key_create(&g.key, thread_end) != 0) {
      char line[600];
      snprintf(line, sizeof line, PREFIX "error: cannot write the thread report to '%s': %s\n", report,
               strerror(errno));
      put(2, line);
      _exit(1);
    }
  }
  int mode = bwpin_config_mode(g.cfg);
  g.bind = mode == BWPIN_MODE_BIND;
  g.track = mode != BWPIN_MODE_OFF || g.report_fd >= 0;
  if (g.bind) {
    const int* cpus;
    int n = bwpin_config_cpus(g.cfg, &cpus);
    CPU_ZERO(&g.all);
    for (int i = 0; i < n; ++i) CPU_SET(cpus[i], &g.all);
    bind_self(0, bwpin_config_cpu_of(g.cfg, 0), NULL);
  }
  if (g.track) track_self(0, bwpin_config_cpu_of(g.cfg, 0), -1); /* the main thread was not created */
}

__attribute__((destructor)) static void bwpin_fini(void) {
  if (g.report_fd < 0) return;
  unsigned n = atomic_load(&g.nentries);
  for (unsigned i = 0; i < n && i < MAX_THREADS; ++i)
    if (!atomic_exchange(&g.entries[i].ended, 1)) report_end(g.entries[i].tid);
}
