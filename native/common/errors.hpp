// Error kinds shared by every bandwall executable, and the main() wrapper that turns them into
// one line on stderr and the exit code: 2 for bad usage or input, 1 for a run that failed.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>

namespace bw {

// Bad usage or input (sizes, CPU lists, words): exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The run itself failed (validation, system call): exit 1.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitUsage = 2;

// Runs body and maps every exception to one line "prog: error: ..." and an exit code.
int guarded_main(const char* prog, const std::function<int()>& body);

}  // namespace bw
