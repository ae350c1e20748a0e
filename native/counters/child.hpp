// Starting the counted command: forked and held before exec until the counters are attached, so
// the count covers the command from its first instruction and nothing of bandwall's own start.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace bw::counters {

struct Child {
  pid_t pid = -1;
  int go_fd = -1;    // write one byte: the child may exec
  int exec_fd = -1;  // close-on-exec pipe: EOF means exec succeeded, 4 bytes mean errno of a failed exec
};

// Forks the child, which waits for release() and then execvp's argv. Throws UsageError when the
// command is not found or not executable (checked before forking, like a shell).
Child hold(const std::vector<std::string>& argv);

// Lets the child exec; throws UsageError naming the command when exec fails.
void release(Child& c, const std::string& name);

struct Exit {
  int code = 0;    // exit code, or 128 + signal when killed (as a shell reports it)
  int signal = 0;  // 0 unless killed by a signal
  double wall_s = 0;
  long max_rss_kib = 0;
};
Exit wait_for(const Child& c);

}  // namespace bw::counters
