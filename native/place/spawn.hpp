// Starting processes bound to CPUs and a NUMA memory policy, all at the same time, and collecting
// their exit status, wall time and output.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/placement.hpp"

namespace bw {

struct ProcSpec {
  std::vector<int> cpus;            // empty: leave the CPU set as it is
  std::optional<Placement> memory;  // empty: the default memory policy
  std::vector<std::string> argv;    // argv[0] is a path or a name looked up in PATH
};

struct ProcResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  double wall_s = 0;     // from fork to exit
  std::string out, err;  // stdout and stderr (their last kMaxOutput bytes)
};

inline constexpr std::size_t kMaxOutput = 1 << 20;

// Resolves a command name like execvp would; throws UsageError when none is found or it cannot run.
std::string find_command(const std::string& name);

// Called about every interval while processes run, with the ids of those still running.
using WhileRunning = std::function<void(const std::vector<int>& running)>;

// Starts every process, then waits for all of them. Each child is killed if this process dies.
// With while_running, the wait polls and calls it every interval_s seconds.
std::vector<ProcResult> spawn_all(const std::vector<ProcSpec>& specs, const WhileRunning& while_running = {},
                                  double interval_s = 0.01);

}  // namespace bw
