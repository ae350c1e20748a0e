/* The one CPU-list parser (see cpulist.h). Plain C with no dependency, so that the preloaded
 * libbandwall-pin.so can carry it into any program. */
#include "common/cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CPU 65535 /* beyond any machine; also the size of the bitmap of CPUs seen */
#define MAX_DIGITS 6  /* domain numbers, counts, chunks and strides */

static const struct bw_cpulist_form kForms[] = {
    {"taskset", "N[-M][,...]", "3,2,1,0", "CPUs 3, 2, 1, 0 (the order is kept: thread 0 on CPU 3)", 0},
    {"range-stride", "N-M:STRIDE", "0-7:2", "CPUs 0, 2, 4, 6 (a range with a stride)", 0},
    {"domain", "DOMAIN:LIST", "S0:0-3", "the first four cores of socket 0, counted within the socket", 1},
    {"chain", "PART@PART", "S0:0-1@S1:0-1", "two cores of socket 0, then two of socket 1", 1},
    {"expression", "E:DOMAIN:COUNT[:CHUNK:STRIDE]", "E:N:4:1:2",
     "4 CPUs of the node, in chunks of 1, every 2nd (every other core)", 1},
};

static const char* const kDomains[] = {"N", "the node (every CPU)", "S", "a socket (package)", "D", "a die",
                                       "M", "a NUMA domain",        "C", "a last-level cache", NULL};

const struct bw_cpulist_form* bw_cpulist_forms(size_t* n) {
  if (n) *n = sizeof kForms / sizeof kForms[0];
  return kForms;
}

const char* const* bw_cpulist_domains(void) { return kDomains; }

/* One parse: the list, how it is named in messages, where the CPUs go. */
struct parse {
  const char* text;
  const char* name;
  const struct bw_cpulist_topology* topo;
  unsigned flags;
  int* cpus;
  int count, cap;
  unsigned char* seen; /* bitmap of MAX_CPU + 1 bits */
  char* msg;
  size_t len;
};

/* Writes "SUBJECT<sep>REASON" into the message: SUBJECT is "CPU list 'TEXT'" or "NAME='TEXT'". */
static int fail(struct parse* p, const char* sep, const char* fmt, ...) {
  if (p->msg && p->len) {
    int at = p->name ? snprintf(p->msg, p->len, "%s='%s'%s", p->name, p->text, sep)
                     : snprintf(p->msg, p->len, "CPU list '%s'%s", p->text, sep);
    if (at >= 0 && (size_t)at < p->len) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(p->msg + at, p->len - (size_t)at, fmt, ap);
      va_end(ap);
    }
  }
  errno = EINVAL;
  return -1;
}

static int out_of_memory(void) {
  errno = ENOMEM;
  return -1;
}

static int push(struct parse* p, long cpu) {
  if (cpu > MAX_CPU) return fail(p, " ", "names CPU %ld, beyond any machine", cpu);
  const unsigned char bit = (unsigned char)(1u << (cpu % 8));
  if ((p->seen[cpu / 8] & bit) && !(p->flags & BW_CPULIST_REPEATS)) return fail(p, " ", "names CPU %ld twice", cpu);
  p->seen[cpu / 8] |= bit;
  if (p->count == p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    int* grown = realloc(p->cpus, sizeof *grown * (size_t)cap);
    if (!grown) return out_of_memory();
    p->cpus = grown;
    p->cap = cap;
  }
  p->cpus[p->count++] = (int)cpu;
  return 0;
}

/* A whole number written in [s, e): an optional minus sign and digits. */
static int whole(const char* s, const char* e, long* out) {
  const char* d = s < e && *s == '-' ? s + 1 : s;
  if (d == e || e - d > 12) return -1;
  long v = 0;
  for (const char* c = d; c < e; ++c) {
    if (!isdigit((unsigned char)*c)) return -1;
    v = 10 * v + (*c - '0');
  }
  *out = d == s ? v : -v;
  return 0;
}

/* A non-negative number of at most MAX_DIGITS digits (domain numbers, counts, chunks, strides). */
static int small(struct parse* p, const char* s, const char* e, const char* what, long* out) {
  long v = 0;
  if (s == e || *s == '-' || whole(s, e, &v) != 0)
    return fail(p, ": ", "%s '%.*s' is not a whole number", what, (int)(e - s), s);
  if (e - s > MAX_DIGITS) return fail(p, ": ", "%s '%.*s' is too large", what, (int)(e - s), s);
  *out = v;
  return 0;
}

/* One item of a taskset list, [s, e): N, N-M or N-M:STRIDE; position counts from 1. When domain is
 * set, the numbers index into its size CPUs instead of being CPUs themselves (part names it). */
static int item(struct parse* p, const char* s, const char* e, int position, const int* domain, int size,
                const char* part, int part_len) {
  if (s == e) return fail(p, ": ", "empty item at position %d", position);
  const char* colon = memchr(s, ':', (size_t)(e - s));
  const char* range_end = colon ? colon : e;
  long stride = 1, lo, hi;
  const char* dash = s + 1 < range_end ? memchr(s + 1, '-', (size_t)(range_end - s - 1)) : NULL;
  const char* lo_end = dash ? dash : range_end;
  if (whole(s, lo_end, &lo) != 0) return fail(p, ": ", "CPU '%.*s' is not a whole number", (int)(lo_end - s), s);
  hi = lo;
  if (dash && whole(dash + 1, range_end, &hi) != 0)
    return fail(p, ": ", "CPU '%.*s' is not a whole number", (int)(range_end - dash - 1), dash + 1);
  if (colon) {
    if (whole(colon + 1, e, &stride) != 0)
      return fail(p, ": ", "stride '%.*s' is not a whole number", (int)(e - colon - 1), colon + 1);
    if (stride < 1) return fail(p, " ", "has a stride below 1");
  }
  if (lo < 0 || hi < 0) return fail(p, " ", "has a negative CPU");
  if (hi < lo) return fail(p, " ", "has a descending range '%.*s'", (int)(range_end - s), s);
  if (hi > MAX_CPU) return fail(p, " ", "names CPU %ld, beyond any machine", hi);
  for (long c = lo; c <= hi; c += stride) {
    if (domain && c >= size)
      return fail(p, ": ", "'%.*s' asks for CPU %ld of a domain of %d (0-%d)", part_len, part, c, size, size - 1);
    if (push(p, domain ? domain[c] : c) != 0) return -1;
  }
  return 0;
}

/* A comma-separated list in [s, e), as CPUs or as positions in domain. */
static int list(struct parse* p, const char* s, const char* e, const int* domain, int size, const char* part,
                int part_len) {
  int position = 1;
  for (const char* at = s;; ++position) {
    const char* comma = memchr(at, ',', (size_t)(e - at));
    const char* end = comma ? comma : e;
    if (item(p, at, end, position, domain, size, part, part_len) != 0) return -1;
    if (!comma) return 0;
    at = comma + 1;
  }
}

/* "S0", "M1", "N", "C0" in [s, e): the domain's CPUs from the topology. */
static int domain(struct parse* p, const char* s, const char* e, const int** cpus, int* size) {
  if (s == e || !isupper((unsigned char)*s))
    return fail(p, ": ", "'%.*s' is not a CPU domain (N, S0, D0, M0, C0)", (int)(e - s), s);
  const char kind = *s;
  int known = 0;
  for (const char* const* d = kDomains; *d; d += 2) known |= (*d)[0] == kind;
  if (!known) return fail(p, ": ", "unknown CPU domain '%c' (use N, S, D, M or C)", kind);
  if (kind == 'N' && e - s > 1) return fail(p, ": ", "the node domain is N, not '%.*s'", (int)(e - s), s);
  if (kind != 'N' && e - s == 1) return fail(p, ": ", "domain '%c' needs its number (%c0)", kind, kind);
  long index = 0;
  if (kind != 'N' && small(p, s + 1, e, "domain number", &index) != 0) return -1;
  if (!p->topo || !p->topo->domain)
    return fail(p, ": ", "likwid's domain '%.*s' needs the machine's topology, which is not known here", (int)(e - s),
                s);
  char why[256] = "";
  if (p->topo->domain(p->topo->ctx, kind, (int)index, cpus, size, why, sizeof why) != 0)
    return fail(p, ": ", "%s", why);
  return 0;
}

/* E:DOMAIN:COUNT[:CHUNK:STRIDE] in [s, e). */
static int expression(struct parse* p, const char* s, const char* e) {
  const char* f[6];
  const char* fe[6];
  int n = 0;
  for (const char* at = s; n < 6;) {
    const char* colon = memchr(at, ':', (size_t)(e - at));
    f[n] = at;
    fe[n++] = colon ? colon : e;
    if (!colon) break;
    at = colon + 1;
  }
  const int len = (int)(e - s);
  if ((n != 3 && n != 5) || fe[n - 1] != e)
    return fail(p, ": ", "'%.*s' is not E:DOMAIN:COUNT or E:DOMAIN:COUNT:CHUNK:STRIDE", len, s);
  const int* cpus = NULL;
  int size = 0;
  long count, chunk = 1, stride = 1;
  if (domain(p, f[1], fe[1], &cpus, &size) != 0 || small(p, f[2], fe[2], "count", &count) != 0) return -1;
  if (n == 5 && (small(p, f[3], fe[3], "chunk", &chunk) != 0 || small(p, f[4], fe[4], "stride", &stride) != 0))
    return -1;
  if (count < 1 || chunk < 1 || stride < chunk)
    return fail(p, ": ", "'%.*s' needs COUNT and CHUNK of at least 1 and STRIDE of at least CHUNK", len, s);
  long taken = 0;
  for (long start = 0; taken < count; start += stride)
    for (long j = 0; j < chunk && taken < count; ++j, ++taken) {
      if (start + j >= size)
        return fail(p, ": ", "'%.*s' asks for CPU %ld of a domain of %d (0-%d)", len, s, start + j, size, size - 1);
      if (push(p, cpus[start + j]) != 0) return -1;
    }
  return 0;
}

/* Domain lists and expressions joined with @. */
static int domains(struct parse* p) {
  const char* e = p->text + strlen(p->text);
  for (const char* at = p->text;;) {
    const char* sep = memchr(at, '@', (size_t)(e - at));
    const char* end = sep ? sep : e;
    const int len = (int)(end - at);
    if (at == end) return fail(p, " ", "has an empty part between @");
    if (len >= 2 && at[0] == 'E' && at[1] == ':') {
      if (expression(p, at, end) != 0) return -1;
    } else {
      const char* colon = memchr(at, ':', (size_t)len);
      if (!colon) return fail(p, ": ", "'%.*s' needs CPUs after its domain, as in %.*s:0-1", len, at, len, at);
      const int* cpus = NULL;
      int size = 0;
      if (domain(p, at, colon, &cpus, &size) != 0) return -1;
      if (colon + 1 == end) return fail(p, ": ", "CPU list is empty after its domain '%.*s'", (int)(colon - at), at);
      if (list(p, colon + 1, end, cpus, size, at, len) != 0) return -1;
    }
    if (!sep) return 0;
    at = sep + 1;
  }
}

int bw_cpulist_parse(const char* text, const char* name, const struct bw_cpulist_topology* topo, unsigned flags,
                     int** cpus, int* count, char* msg, size_t len) {
  if (msg && len) msg[0] = '\0';
  if (!text || !cpus || !count || (flags & ~(unsigned)BW_CPULIST_REPEATS)) {
    errno = EINVAL;
    return -1;
  }
  struct parse p = {text, name, topo, flags, NULL, 0, 0, NULL, msg, len};
  if (!*text) {
    if (msg && len) snprintf(msg, len, "%s is empty", name ? name : "CPU list");
    errno = EINVAL;
    return -1;
  }
  p.seen = calloc(MAX_CPU / 8 + 1, 1);
  if (!p.seen) return out_of_memory();
  /* likwid's domains are upper-case letters (N, S0, ..., E:); anything else is a plain list. */
  int rc = isupper((unsigned char)text[0]) ? domains(&p) : list(&p, text, text + strlen(text), NULL, 0, NULL, 0);
  free(p.seen);
  if (rc != 0) {
    int err = errno;
    free(p.cpus);
    errno = err;
    return -1;
  }
  *cpus = p.cpus;
  *count = p.count;
  return 0;
}
