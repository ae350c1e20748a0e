/* Parsing the pinning variables (see bwpin.h) and deciding what the OpenMP runtimes are told.
 *
 * The runtimes are told not to bind (OMP_PROC_BIND, OMP_PLACES and GOMP_CPU_AFFINITY removed,
 * KMP_AFFINITY=disabled) whenever the library binds or is asked to leave threads free: the
 * library is then the only one that binds. Two binders would race (LLVM's runtime binds a worker
 * from inside the new thread, after anything done before it starts), and the runtimes' own rules
 * differ from MP_BLIST's (repeated CPUs, wrap-around, blocks of threads per place).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwpin.h"
#include "common/cpulist.h"

#define MAX_VARS 8
#define DEFAULT_SPIN 1000000LL

enum spin_kind { SPIN_DEFAULT_RUNTIME, SPIN_CYCLES, SPIN_FOREVER, SPIN_PASSIVE };

struct bwpin_config_s {
  int mode;
  int ncpus;
  int* cpus;
  unsigned long long skip;
  int spin_kind;
  long long spin_cycles;
  double mhz;
  const char* source;
  char spin_text[64];
  unsigned nvars;
  const char* var_name[MAX_VARS];
  char* var_value[MAX_VARS];
};

static int fail(char* msg, size_t len, const char* fmt, ...) {
  if (msg && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
  }
  errno = EINVAL;
  return -1;
}

/* The CPUs the pinned program started with. A process that the program starts (the real program
 * behind a shell wrapper, say) inherits the library and the list, and also the one CPU of the thread
 * that started it: checked against its own CPU set, the list would be refused. So the first process
 * notes its set in BANDWALL_PIN_ALLOWED (see note_allowed) and the processes it starts check against
 * that. A child narrowed on purpose (taskset inside the wrapper) is pinned from the noted set too. */
#define ALLOWED_VAR "BANDWALL_PIN_ALLOWED"

static int allowed_set(cpu_set_t* set) {
  CPU_ZERO(set);
  const char* noted = getenv(ALLOWED_VAR);
  int* cpus = NULL;
  int n = 0;
  if (noted && *noted && bw_cpulist_parse(noted, ALLOWED_VAR, NULL, 0, &cpus, &n, NULL, 0) == 0) {
    for (int i = 0; i < n; ++i)
      if (cpus[i] < CPU_SETSIZE) CPU_SET(cpus[i], set);
    free(cpus);
    if (CPU_COUNT(set) > 0) return 0;
  }
  return sched_getaffinity(0, sizeof *set, set);
}

static void format_allowed(const cpu_set_t* set, char* out, size_t len) {
  size_t at = 0;
  out[0] = '\0';
  for (int c = 0; c < CPU_SETSIZE && at < len; ++c) {
    if (!CPU_ISSET(c, set)) continue;
    int end = c;
    while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set)) ++end;
    int n = end > c ? snprintf(out + at, len - at, "%s%d-%d", at ? "," : "", c, end)
                    : snprintf(out + at, len - at, "%s%d", at ? "," : "", c);
    if (n < 0) break;
    at += (size_t)n;
    c = end;
  }
}

/* Notes this process's CPU set for the processes it starts (see allowed_set); the first one wins. */
static void note_allowed(void) {
  if (getenv(ALLOWED_VAR)) return;
  cpu_set_t set;
  char shown[1024];
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  format_allowed(&set, shown, sizeof shown);
  if (shown[0]) setenv(ALLOWED_VAR, shown, 0);
}

/* A CPU list (common/cpulist.h: taskset's forms; repeats allowed, as MP_BLIST's 0,0), each CPU one
 * the process may run on. likwid's domains need the machine's topology, which the library does not
 * load inside the program: bandwall pin --cpus resolves them and passes plain numbers. */
static int parse_list(const char* var, const char* text, int** out, int* count, char* msg, size_t len) {
  int* cpus = NULL;
  int n = 0;
  if (bw_cpulist_parse(text, var, NULL, BW_CPULIST_REPEATS, &cpus, &n, msg, len) != 0) return -1;
  cpu_set_t allowed;
  if (allowed_set(&allowed) != 0) {
    free(cpus);
    return fail(msg, len, "cannot read this process's CPU set: %s", strerror(errno));
  }
  for (int i = 0; i < n; ++i) {
    if (cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &allowed)) continue;
    char shown[256];
    format_allowed(&allowed, shown, sizeof shown);
    int cpu = cpus[i];
    free(cpus);
    return fail(msg, len, "%s='%s': CPU %d is not one this process may run on (allowed: %s)", var, text, cpu, shown);
  }
  *out = cpus;
  *count = n;
  return 0;
}

static int parse_spin(const char* var, const char* text, struct bwpin_config_s* c, int allow_passive, char* msg,
                      size_t len) {
  if (allow_passive && strcmp(text, "passive") == 0) {
    c->spin_kind = SPIN_PASSIVE;
    return 0;
  }
  char* end = NULL;
  errno = 0;
  long long v = *text ? strtoll(text, &end, 10) : 0;
  if (!*text || errno || *end || v < -1)
    return fail(msg, len, "%s='%s': expected a whole number of cycles (N >= 0), or -1 to spin forever%s", var, text,
                allow_passive ? ", or passive" : "");
  if (v == -1)
    c->spin_kind = SPIN_FOREVER;
  else if (v == 0)
    c->spin_kind = SPIN_PASSIVE;
  else {
    c->spin_kind = SPIN_CYCLES;
    c->spin_cycles = v;
  }
  return 0;
}

static double cpu_mhz(void) {
  /* Under bandwall-pin, the clock the launcher used: the current "cpu MHz" drifts with frequency
   * scaling, and a different KMP_BLOCKTIME here would make the library run the program again. */
  const char* given = getenv("BANDWALL_PIN_MHZ");
  if (given && *given) {
    char* end = NULL;
    double v = strtod(given, &end);
    if (end && !*end && v > 0) return v;
  }
  FILE* f = fopen("/proc/cpuinfo", "r");
  double mhz = 0;
  char line[256];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "cpu MHz", 7) == 0 && sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : "", "%lf", &mhz) == 1)
      break;
  if (f) fclose(f);
  return mhz > 0 ? mhz : 1000.0; /* unknown clock: 1 GHz, stated in the record */
}

static int add_var(struct bwpin_config_s* c, const char* name, const char* value) {
  if (c->nvars >= MAX_VARS) return errno = ENOMEM, -1;
  char* copy = NULL;
  if (value && !(copy = strdup(value))) return errno = ENOMEM, -1;
  c->var_name[c->nvars] = name;
  c->var_value[c->nvars++] = copy;
  return 0;
}

static int plan_vars(struct bwpin_config_s* c) {
  char buf[64];
  int rc = 0;
  if (c->mode != BWPIN_MODE_OFF) {
    /* GNU OpenMP binds nothing when none of its three binding variables is set. LLVM's needs
     * KMP_AFFINITY=disabled: without it (even with OMP_PROC_BIND=false) it sets every worker's CPU set
     * to the one the initial thread had when the runtime started, undoing the library's binding; and it
     * warns when OMP_PROC_BIND is set beside KMP_AFFINITY, so OMP_PROC_BIND is removed, not set false. */
    rc |= add_var(c, "OMP_PROC_BIND", NULL);
    rc |= add_var(c, "OMP_PLACES", NULL);
    rc |= add_var(c, "GOMP_CPU_AFFINITY", NULL);
    rc |= add_var(c, "KMP_AFFINITY", "disabled");
    const char* threads = getenv("OMP_NUM_THREADS");
    if (c->mode == BWPIN_MODE_BIND && (!threads || !*threads)) {
      snprintf(buf, sizeof buf, "%d", c->ncpus);
      rc |= add_var(c, "OMP_NUM_THREADS", buf);
    }
  }
  switch (c->spin_kind) {
    case SPIN_CYCLES: {
      c->mhz = cpu_mhz();
      long long ms = (long long)ceil((double)c->spin_cycles / (c->mhz * 1000.0));
      snprintf(buf, sizeof buf, "%lld", c->spin_cycles);
      rc |= add_var(c, "GOMP_SPINCOUNT", buf);
      snprintf(buf, sizeof buf, "%lld", ms < 1 ? 1 : ms);
      rc |= add_var(c, "KMP_BLOCKTIME", buf);
      rc |= add_var(c, "OMP_WAIT_POLICY", NULL);
      snprintf(c->spin_text, sizeof c->spin_text, "%lld cycles", c->spin_cycles);
      break;
    }
    case SPIN_FOREVER:
      rc |= add_var(c, "OMP_WAIT_POLICY", "active");
      rc |= add_var(c, "GOMP_SPINCOUNT", "infinity");
      rc |= add_var(c, "KMP_BLOCKTIME", "infinite");
      snprintf(c->spin_text, sizeof c->spin_text, "spin forever");
      break;
    case SPIN_PASSIVE:
      rc |= add_var(c, "OMP_WAIT_POLICY", "passive");
      rc |= add_var(c, "GOMP_SPINCOUNT", "0");
      rc |= add_var(c, "KMP_BLOCKTIME", "0");
      snprintf(c->spin_text, sizeof c->spin_text, "passive");
      break;
    default: snprintf(c->spin_text, sizeof c->spin_text, "runtime default"); break;
  }
  return rc ? -1 : 0;
}

static int parse_skip(const char* text, unsigned long long* out, char* msg, size_t len) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = *text && *text != '-' ? strtoull(text, &end, 0) : 0;
  if (!*text || *text == '-' || errno || *end)
    return fail(msg, len,
                "BANDWALL_PIN_SKIP='%s': expected a bit mask such as 0x1 (bit k skips the k-th created thread)", text);
  *out = v;
  return 0;
}

static int read_bind(const char* text, int* bind, char* msg, size_t len) {
  if (!strcmp(text, "yes") || !strcmp(text, "y") || !strcmp(text, "YES") || !strcmp(text, "Y"))
    *bind = 1;
  else if (!strcmp(text, "no") || !strcmp(text, "n") || !strcmp(text, "NO") || !strcmp(text, "N"))
    *bind = 0;
  else
    return fail(msg, len, "MP_BIND='%s': expected yes, y, no or n", text);
  return 0;
}

static int load(struct bwpin_config_s* c, char* msg, size_t len) {
  const char *own = getenv("BANDWALL_PIN_CPUS"), *bind_text = getenv("MP_BIND"), *blist = getenv("MP_BLIST");
  const char *spin = getenv("BANDWALL_PIN_SPIN"), *mp_spin = getenv("MP_SPIN"), *skip = getenv("BANDWALL_PIN_SKIP");
  int bind = 0;
  /* Every variable that is set is checked, even one that another overrides. */
  if (bind_text && read_bind(bind_text, &bind, msg, len)) return -1;
  if (blist && parse_list("MP_BLIST", blist, &c->cpus, &c->ncpus, msg, len)) return -1;
  if (mp_spin && parse_spin("MP_SPIN", mp_spin, c, 0, msg, len)) return -1;
  if (spin && parse_spin("BANDWALL_PIN_SPIN", spin, c, 1, msg, len)) return -1;
  if (skip && parse_skip(skip, &c->skip, msg, len)) return -1;
  if (own) {
    free(c->cpus);
    c->cpus = NULL;
    c->ncpus = 0;
    c->source = "BANDWALL_PIN_CPUS";
    if (strcmp(own, "none") == 0)
      c->mode = BWPIN_MODE_FREE;
    else if (parse_list("BANDWALL_PIN_CPUS", own, &c->cpus, &c->ncpus, msg, len))
      return -1;
    else
      c->mode = BWPIN_MODE_BIND;
  } else if (bind) {
    c->mode = BWPIN_MODE_BIND;
    c->source = blist ? "MP_BLIST" : "MP_BIND";
    if (!blist) {
      cpu_set_t allowed;
      if (allowed_set(&allowed) != 0) return fail(msg, len, "cannot read this process's CPU set: %s", strerror(errno));
      c->cpus = malloc(sizeof *c->cpus * (size_t)CPU_COUNT(&allowed));
      if (!c->cpus) return errno = ENOMEM, -1;
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) c->cpus[c->ncpus++] = cpu;
    }
  } else {
    free(c->cpus);
    c->cpus = NULL;
    c->ncpus = 0;
  }
  if (c->mode != BWPIN_MODE_OFF && c->spin_kind == SPIN_DEFAULT_RUNTIME) {
    c->spin_kind = SPIN_CYCLES; /* the seed's default */
    c->spin_cycles = DEFAULT_SPIN;
  }
  return plan_vars(c);
}

int bwpin_config_load(bwpin_config_t* config, char* msg, size_t len, unsigned long flags) {
  if (msg && len) msg[0] = '\0';
  if (!config || flags) return errno = EINVAL, -1;
  struct bwpin_config_s* c = calloc(1, sizeof *c);
  if (!c) return errno = ENOMEM, -1;
  c->source = "";
  if (load(c, msg, len) != 0) {
    int err = errno;
    bwpin_config_destroy(c);
    errno = err;
    return -1;
  }
  note_allowed();
  *config = c;
  return 0;
}

void bwpin_config_destroy(bwpin_config_t c) {
  if (!c) return;
  for (unsigned i = 0; i < c->nvars; ++i) free(c->var_value[i]);
  free(c->cpus);
  free(c);
}

int bwpin_config_mode(bwpin_config_t c) { return c->mode; }

int bwpin_config_cpus(bwpin_config_t c, const int** cpus) {
  if (cpus) *cpus = c->cpus;
  return c->mode == BWPIN_MODE_BIND ? c->ncpus : 0;
}

int bwpin_config_cpu_of(bwpin_config_t c, unsigned index) {
  if (c->mode != BWPIN_MODE_BIND || c->ncpus == 0) return -1;
  return c->cpus[index % (unsigned)c->ncpus];
}

unsigned long long bwpin_config_skip(bwpin_config_t c) { return c->skip; }
const char* bwpin_config_source(bwpin_config_t c) { return c->source; }
const char* bwpin_config_spin(bwpin_config_t c) { return c->spin_text; }
double bwpin_config_mhz(bwpin_config_t c) { return c->mhz; }

int bwpin_config_var(bwpin_config_t c, unsigned i, const char** name, const char** value) {
  if (i >= c->nvars) return errno = ERANGE, -1;
  *name = c->var_name[i];
  *value = c->var_value[i];
  return 0;
}

int bwpin_config_env_differs(bwpin_config_t c) {
  for (unsigned i = 0; i < c->nvars; ++i) {
    const char* now = getenv(c->var_name[i]);
    if (c->var_value[i] ? !now || strcmp(now, c->var_value[i]) != 0 : now != NULL) return 1;
  }
  return 0;
}

int bwpin_config_apply_env(bwpin_config_t c) {
  for (unsigned i = 0; i < c->nvars; ++i) {
    int rc = c->var_value[i] ? setenv(c->var_name[i], c->var_value[i], 1) : unsetenv(c->var_name[i]);
    if (rc != 0) return -1;
  }
  return 0;
}
