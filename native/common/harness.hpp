// The options every measuring executable shares, added to its command line in one call each, with
// one meaning and one help text everywhere:
//   threads  --threads N|auto, --cpus LIST (common/cpulist.hpp), --bind POLICY (common/policies.hpp)
//   memory   --placement POLICY, --pages huge|base|system
//   isa      --isa auto|avx512|avx2|generic (common/isa.hpp, common/dispatch.hpp)
// and their resolution into what the run uses (UsageError, exit 2, for a bad value).
#pragma once
#include <functional>
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
// iterations of a run time a few thread counts, and the fewest threads whose rate is within
// kThreadsTolerance of the best rate run the rest: a memory-bound kernel stops gaining at the
// bandwidth knee, and the cores beyond it are worth more left free.
inline constexpr double kThreadsTolerance = 0.03;

// The counts tried out of a team of max threads: every count up to 4, then 1, 2, 4, ... and max.
std::vector<int> thread_candidates(int max);

// Index of the fewest threads (counts ascending) whose rate is within tolerance of the best rate.
std::size_t fewest_within(const std::vector<int>& counts, const std::vector<double>& rates,
                          double tolerance = kThreadsTolerance);

struct ThreadChoice {
  Binding binding;        // the chosen team, already bound
  std::vector<int> seen;  // the CPU each of its threads found itself on
  int trials = 0;         // iterations the choice used
  json record;            // config.threads_choice: candidates, their rates, the rule and why
};

// Times trial(n), one iteration of the kernel on n threads returning its rate in unit (higher is
// better), for every candidate binding (ThreadOptions::candidates) in `rounds` rotated rounds; keeps
// each candidate's best rate, applies the rule above and binds the chosen team. `note` says what
// the trials share with the run (how the arrays were placed).
ThreadChoice choose_threads(const std::vector<Binding>& candidates, const std::function<double(int)>& trial,
                            const std::string& unit, int rounds, const std::string& note);

}  // namespace bw
