/* libbandwall-pin: the pinning configuration of an unmodified program, read from its environment.
 *
 * The same code decides for the preloaded library (libbandwall-pin.so, in the program) and for the
 * launcher (bandwall-pin, before it starts the program), so both accept and refuse the same values.
 *
 * Variables read (seed semantics of PGI's runtime, plus bandwall's own):
 *   MP_BIND=yes|y|no|n     bind threads 1:1 to CPUs (default no)
 *   MP_BLIST=3,2,1,0       thread i on the i-th CPU; repeats allowed (0,0); threads beyond the list
 *                          wrap around to its start. Without it, MP_BIND=yes uses the CPUs the
 *                          process may run on, in ascending order.
 *   MP_SPIN=N|-1           cycles an idle thread spins at a barrier before giving up its CPU
 *                          (default 1000000 when binding; -1 never gives it up)
 *   BANDWALL_PIN_CPUS      LIST or "none": set by `bandwall pin`, wins over MP_BIND / MP_BLIST
 *   BANDWALL_PIN_SKIP      skip mask (hex 0x.. or decimal): bit k set leaves the k-th created thread
 *                          unpinned (likwid-pin -s); it does not take a CPU from the list
 *   BANDWALL_PIN_SPIN      N, -1 or passive: wins over MP_SPIN
 *   BANDWALL_PIN_ALLOWED   set by the library in the first process it loads in: the CPUs that process
 *                          started with. Processes it starts check lists against these, not against
 *                          the one CPU they inherit from the pinned thread that started them.
 *   BANDWALL_PIN_MHZ       the CPU clock bandwall-pin turned cycles into KMP_BLOCKTIME with (else the
 *                          current "cpu MHz" of /proc/cpuinfo)
 *
 * Every function returns 0 (or a count) on success and -1 with errno set on failure: EINVAL for a
 * malformed value (the message buffer then holds one line naming the variable and the value) or an
 * unknown flag, ENOMEM when memory runs out, ERANGE for an index past the end.
 */
#ifndef BWPIN_H
#define BWPIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bwpin_config_s* bwpin_config_t;

enum bwpin_mode {
  BWPIN_MODE_OFF = 0,  /* the library stays out of the way (MP_BIND=no or unset) */
  BWPIN_MODE_BIND = 1, /* each thread bound to its CPU of the list */
  BWPIN_MODE_FREE = 2  /* no thread bound, and the OpenMP runtimes told not to bind either */
};

/* Reads the variables above. flags must be 0. On EINVAL, msg (of len bytes) receives the reason. */
int bwpin_config_load(bwpin_config_t* config, char* msg, size_t len, unsigned long flags);
void bwpin_config_destroy(bwpin_config_t config);

int bwpin_config_mode(bwpin_config_t config);
/* Number of CPUs in the list; *cpus points at them (owned by config). 0 when not binding. */
int bwpin_config_cpus(bwpin_config_t config, const int** cpus);
/* CPU of pinned thread index (0 = the main thread), wrapping around the list; -1 when not binding. */
int bwpin_config_cpu_of(bwpin_config_t config, unsigned index);
unsigned long long bwpin_config_skip(bwpin_config_t config);
/* Which variable chose the CPUs: "BANDWALL_PIN_CPUS", "MP_BLIST", "MP_BIND" or "" when off. */
const char* bwpin_config_source(bwpin_config_t config);
/* The spin policy in words ("1000000 cycles", "spin forever", "passive", "runtime default"). */
const char* bwpin_config_spin(bwpin_config_t config);
/* CPU clock (MHz) used to turn cycles into KMP_BLOCKTIME milliseconds; 0 when not needed. */
double bwpin_config_mhz(bwpin_config_t config);

/* The i-th OpenMP runtime variable the configuration wants: *value NULL means "unset it".
 * Returns 0, or -1 with ERANGE past the last one. */
int bwpin_config_var(bwpin_config_t config, unsigned i, const char** name, const char** value);
/* 1 when the environment differs from what the configuration wants (a variable to set or unset). */
int bwpin_config_env_differs(bwpin_config_t config);
/* Sets and unsets the variables in this process's environment. */
int bwpin_config_apply_env(bwpin_config_t config);

/* What the kernel says about one thread: the CPU it last ran on (/proc/PID/task/TID/stat field 39),
 * its migrations (sched: se.nr_migrations, -1 when the kernel does not show it) and its voluntary
 * and involuntary context switches (status). pid 0 means this process. */
struct bwpin_task_stat {
  int cpu;
  long long migrations;
  long long voluntary;
  long long involuntary;
};
int bwpin_task_stat_read(int pid, int tid, struct bwpin_task_stat* out);

#ifdef __cplusplus
}
#endif
#endif
