// The options every measuring executable shares, added to its command line in one call each, with
// one meaning and one help text everywhere:
//   threads  --threads N|auto, --cpus LIST (common/cpulist.hpp), --bind POLICY (common/policies.hpp)
//   memory   --placement POLICY, --pages huge|base|system
//   isa      --isa auto|avx512|avx2|generic (common/isa.hpp, common/dispatch.hpp)
// and their resolution into what the run uses (UsageError, exit 2, for a bad value).
#pragma once
#include <string>
#include <vector>

#include "common/affinity.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"

namespace CLI {
class App;
}

namespace bw {

struct ThreadOptions {
  std::string threads, cpus, bind = "compact";
  bool auto_allowed = false;  // set by add_thread_options for the executables that choose by feedback
  // The CPU of each thread: --cpus wins over --bind; --threads caps the list or sizes the policy.
  Binding resolve() const;
  // --threads as a number (0 when not given or auto).
  int count() const;
  // --threads auto: the run times a few thread counts and keeps one (choose_threads below);
  // resolve() then gives the largest team, the one the arrays are initialised with.
  bool automatic() const { return auto_allowed && threads == "auto"; }
  // The binding of n threads under the same --cpus / --bind (a policy is resolved for n, so
  // scatter or spread of 2 threads is not the first 2 CPUs of the whole team's order).
  Binding resolve_for(int n) const;
  // The bindings --threads auto tries, up to max_threads (thread_candidates below). Call it before
  // apply_binding: once the calling thread is bound, the CPUs it may use are its one CPU.
  std::vector<Binding> candidates(int max_threads) const;
};
// allow_auto: --threads auto is offered (the executable calls choose_threads).
void add_thread_options(CLI::App& app, ThreadOptions& o, bool allow_auto = false);

struct MemoryOptions {
  std::string placement = "first-touch", pages = "system";
  Placement resolve() const;
};
void add_memory_options(CLI::App& app, MemoryOptions& o);

void add_isa_option(CLI::App& app, std::string& isa);

// The help of every --cpus option.
const char* cpus_help();

// Feedback-driven threading (Suleman, Qureshi and Patt, ASPLOS 2008) for --threads auto: the first
// steps of a run time a few thread counts in interleaved rounds, and the fewest threads that the
// decision rule (common/decide.hpp) shows to be within its tolerance of every other count run the
// rest (common/driver.hpp): a memory-bound kernel stops gaining at the bandwidth knee, and the cores
// beyond it are worth more left free. Without such evidence every thread runs.

// The counts tried out of a team of max threads: every count up to 4, then 1, 2, 4, ... and max.
std::vector<int> thread_candidates(int max);

}  // namespace bw
