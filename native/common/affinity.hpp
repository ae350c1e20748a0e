// Binding the OpenMP threads of a kernel to CPUs, and checking where they really ran.
#pragma once
#include <string>
#include <vector>

namespace bw {

// Resolves a binding request into the CPU of each thread. cpus (explicit list) wins over policy;
// policy is compact, scatter, node:N or none. threads = 0 means one per CPU of the list/policy.
// Throws UsageError for CPUs not allowed, unknown policies or more threads than CPUs.
struct Binding {
  std::vector<int> cpus;  // cpus[i] is thread i's CPU; empty for "none"
  std::string policy;     // what was asked, for the record
  int threads = 0;
};
Binding resolve_binding(int threads, const std::string& cpu_list, const std::string& policy);

// The first threads CPUs of a resolved list (all of them for 0): what --threads does to --cpus.
// UsageError naming the list (text) when it has fewer than threads CPUs.
std::vector<int> cap_cpu_list(std::vector<int> cpus, int threads, const std::string& text);

// Sets the OpenMP thread count and pins thread i to cpus[i] (call once before any kernel).
// Returns the CPU each thread found itself on after binding (sched_getcpu).
std::vector<int> apply_binding(const Binding& b);

}  // namespace bw
