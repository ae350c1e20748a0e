#include "common/cpulist.hpp"

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "common/cpulist.h"
#include "common/errors.hpp"
#include "common/topology.hpp"

namespace bw {
namespace {

// The topology input of the C parser: a domain's CPUs from hwloc, kept until the next call.
struct Domains {
  const Topology* topo;
  std::vector<int> last;
};

int domain_cpus(void* ctx, char kind, int index, const int** cpus, int* count, char* msg, size_t len) {
  auto* d = static_cast<Domains*>(ctx);
  try {
    d->last = d->topo->domain_cpus(kind, index);
  } catch (const UsageError& e) {
    std::snprintf(msg, len, "%s", e.what());
    return -1;
  }
  *cpus = d->last.data();
  *count = static_cast<int>(d->last.size());
  return 0;
}

std::vector<int> parse(std::string_view text, const Topology& topo) {
  const std::string s(text);
  Domains d{&topo, {}};
  const bw_cpulist_topology input{domain_cpus, &d};
  int* cpus = nullptr;
  int count = 0;
  char msg[512];
  if (bw_cpulist_parse(s.c_str(), nullptr, &input, 0, &cpus, &count, msg, sizeof msg) != 0) {
    if (errno == ENOMEM) throw std::bad_alloc();
    throw UsageError(msg);
  }
  std::unique_ptr<int, void (*)(void*)> hold(cpus, std::free);
  return std::vector<int>(cpus, cpus + count);
}

}  // namespace

std::vector<int> resolve_cpu_list(std::string_view text, const Topology& topo) { return parse(text, topo); }

std::vector<int> resolve_cpu_list(std::string_view text) { return resolve_cpu_list(text, Topology::instance()); }

}  // namespace bw
