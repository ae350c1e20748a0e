/* The one CPU-list parser of bandwall, in C: the C++ executables (common/cpulist.hpp wraps it), the
 * pinning launcher and the preloaded libbandwall-pin.so (pin/config.c, pin/preload.c) all read CPU
 * lists here, so a list means the same everywhere. The forms, each a row of bw_cpulist_forms():
 *
 *   0-3,8   3,2,1,0   0-7:2        OS CPU numbers in thread order (taskset; a range may have a stride)
 *   S0:0-3  M1:0,1  N:0-7  C0:0-1   likwid-pin's thread domains (N node, S socket, D die, M NUMA domain,
 *                                   C last-level cache): numbers count within the domain, physical
 *                                   cores first, then their second hardware threads
 *   S0:0-1@S1:0-1                   domain lists joined with @
 *   E:S0:4   E:N:4:1:2              expressions: COUNT CPUs of a domain, CHUNK of them together every
 *                                   STRIDE (defaults 1 and 1)
 *
 * The domain forms need the machine: the caller gives a bw_cpulist_topology whose domain() answers
 * the CPUs of a domain in likwid's order (the C++ side from hwloc). Without one they are refused.
 * A CPU named twice (unless BW_CPULIST_REPEATS), a number past the end of its domain and a domain
 * the machine does not have are refused with one line naming the list.
 */
#ifndef BANDWALL_CPULIST_H
#define BANDWALL_CPULIST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The CPUs (OS numbers) of domain kind ('N', 'S', 'D', 'M' or 'C') and index, in likwid's order.
 * *cpus stays owned by the callee and valid until its next call. Returns 0, or -1 with one line in
 * msg (len bytes) when the machine has no such domain. */
typedef int (*bw_cpulist_domain_fn)(void* ctx, char kind, int index, const int** cpus, int* count, char* msg,
                                    size_t len);

struct bw_cpulist_topology {
  bw_cpulist_domain_fn domain;
  void* ctx;
};

enum bw_cpulist_flags {
  BW_CPULIST_REPEATS = 1 /* a CPU may be named more than once (MP_BLIST's 0,0) */
};

/* Parses text into *cpus (malloc'd, the caller frees it) and *count, in thread order. name says
 * what the list is for messages: NULL gives "CPU list '0,0' names CPU 0 twice", "MP_BLIST" gives
 * "MP_BLIST='0,0' names CPU 0 twice". topo may be NULL (the domain forms are then refused).
 * Returns 0, or -1 with errno EINVAL (msg holds one line) or ENOMEM. */
int bw_cpulist_parse(const char* text, const char* name, const struct bw_cpulist_topology* topo, unsigned flags,
                     int** cpus, int* count, char* msg, size_t len);

/* The grammar, one row per form: how it is written, an example, what the example means. */
struct bw_cpulist_form {
  const char* name;    /* taskset, range-stride, domain, chain, expression */
  const char* syntax;  /* "S0:0-3" style pattern */
  const char* example; /* a list of the form */
  const char* meaning; /* what the example names */
  int needs_topology;  /* 1 when the form counts within the machine's domains */
};

/* The rows, in the order a help text lists them; *n receives how many. */
const struct bw_cpulist_form* bw_cpulist_forms(size_t* n);

/* The domain letters and what each is ("S" -> "socket (package)"), NULL-terminated pairs. */
const char* const* bw_cpulist_domains(void);

#ifdef __cplusplus
}
#endif
#endif
