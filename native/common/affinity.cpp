#include "common/affinity.hpp"

#include <omp.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "common/args.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/topology.hpp"

namespace bw {

std::vector<int> cap_cpu_list(std::vector<int> cpus, int threads, const std::string& text) {
  if (threads > static_cast<int>(cpus.size()))
    throw UsageError(std::to_string(threads) + " threads asked for but CPU list '" + text + "' has only " +
                     std::to_string(cpus.size()) + " CPUs");
  if (threads > 0) cpus.resize(static_cast<std::size_t>(threads));
  return cpus;
}

Binding resolve_binding(int threads, const std::string& cpu_list, const std::string& policy) {
  Binding b;
  auto allowed = allowed_cpus();
  if (threads < 0) throw UsageError("thread count must be at least 1");
  if (!cpu_list.empty()) {
    b.cpus = resolve_cpu_list(cpu_list);
    check_cpus_allowed(b.cpus);
    b.cpus = cap_cpu_list(b.cpus, threads, cpu_list);
    b.policy = "list";
  } else if (policy.empty() || policy == "none") {
    if (threads > static_cast<int>(allowed.size()))
      throw UsageError(std::to_string(threads) + " threads asked for but only " + std::to_string(allowed.size()) +
                       " CPUs are available (" + format_cpu_list(allowed) + ")");
    b.policy = "none";
    b.threads = threads > 0 ? threads : static_cast<int>(allowed.size());
    return b;
  } else {
    b.cpus = Topology::instance().order(policy, threads, allowed);
    b.policy = policy;
  }
  b.threads = static_cast<int>(b.cpus.size());
  return b;
}

std::vector<int> apply_binding(const Binding& b) {
  omp_set_dynamic(0);
  omp_set_num_threads(b.threads);
  std::vector<int> seen(static_cast<std::size_t>(b.threads), -1);
  int failed = 0, team = 0;
#pragma omp parallel num_threads(b.threads) reduction(+ : failed)
  {
    int t = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    if (!b.cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(b.cpus[static_cast<std::size_t>(t)], &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) ++failed;
    }
    seen[static_cast<std::size_t>(t)] = sched_getcpu();
  }
  if (team != b.threads)  // a run never reports more threads than it ran
    throw RunError("the OpenMP runtime gave " + std::to_string(team) + " of the " + std::to_string(b.threads) +
                   " threads asked for");
  if (failed) throw RunError("could not bind " + std::to_string(failed) + " threads: " + std::strerror(errno));
  return seen;
}

}  // namespace bw
