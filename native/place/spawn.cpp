#include "place/spawn.hpp"

#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/errors.hpp"

namespace bw {
namespace {

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool runnable(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string read_all(int fd) {
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0) return {};
  off_t start = size > static_cast<off_t>(kMaxOutput) ? size - static_cast<off_t>(kMaxOutput) : 0;
  std::string out(static_cast<std::size_t>(size - start), '\0');
  ssize_t got = pread(fd, out.data(), out.size(), start);
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
}

// In the child, between fork and exec: only async-signal-safe calls and a message on failure.
[[noreturn]] void child_fail(const char* what) {
  const char* msg = std::strerror(errno);
  (void)!write(2, what, std::strlen(what));
  (void)!write(2, ": ", 2);
  (void)!write(2, msg, std::strlen(msg));
  (void)!write(2, "\n", 1);
  _exit(126);
}

}  // namespace

std::string find_command(const std::string& name) {
  if (name.empty()) throw UsageError("no command given");
  if (name.find('/') != std::string::npos) {
    if (access(name.c_str(), F_OK) != 0) throw UsageError("command '" + name + "' does not exist");
    if (!runnable(name)) throw UsageError("command '" + name + "' is not an executable file");
    return name;
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(candidate)) return candidate;
  }
  throw UsageError("command '" + name + "' not found in PATH");
}

std::vector<ProcResult> spawn_all(const std::vector<ProcSpec>& specs, const WhileRunning& while_running,
                                  double interval_s) {
  std::vector<ProcResult> results(specs.size());
  std::vector<pid_t> pids(specs.size(), -1);
  std::vector<int> out_fd(specs.size(), -1), err_fd(specs.size(), -1);
  std::vector<double> start(specs.size(), 0);
  // Everything the child needs is prepared before fork.
  std::vector<std::vector<char*>> argvs(specs.size());
  std::vector<std::string> paths(specs.size());
  std::vector<cpu_set_t> sets(specs.size());
  std::vector<struct bitmask*> masks(specs.size(), nullptr);
  std::vector<int> modes(specs.size(), MPOL_DEFAULT);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    paths[i] = find_command(specs[i].argv.at(0));
    for (auto& a : specs[i].argv) argvs[i].push_back(const_cast<char*>(a.c_str()));
    argvs[i].push_back(nullptr);
    CPU_ZERO(&sets[i]);
    for (int c : specs[i].cpus) CPU_SET(c, &sets[i]);
    if (specs[i].memory) {
      const Placement& p = *specs[i].memory;
      if (p.policy->mode < 0) throw UsageError("memory policy '" + p.str() + "' cannot be given to a process");
      modes[i] = p.policy->mode;
      if (numa_available() < 0) throw RunError("memory policy " + p.str() + " needs NUMA support in the kernel");
      masks[i] = numa_allocate_nodemask();
      for (int n : p.nodes) numa_bitmask_setbit(masks[i], static_cast<unsigned>(n));
    }
    out_fd[i] = memfd_create("bandwall-launch-out", MFD_CLOEXEC);
    err_fd[i] = memfd_create("bandwall-launch-err", MFD_CLOEXEC);
    if (out_fd[i] < 0 || err_fd[i] < 0) throw RunError(std::string("memfd_create failed: ") + std::strerror(errno));
  }
  pid_t parent = getpid();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    start[i] = now();
    pid_t pid = fork();
    if (pid < 0) {
      int err = errno;
      for (std::size_t j = 0; j < i; ++j) kill(pids[j], SIGKILL);
      throw RunError(std::string("fork failed: ") + std::strerror(err));
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(126);
      if (dup2(out_fd[i], 1) < 0 || dup2(err_fd[i], 2) < 0) child_fail("bandwall-launch: dup2");
      if (!specs[i].cpus.empty() && sched_setaffinity(0, sizeof(cpu_set_t), &sets[i]) != 0)
        child_fail("bandwall-launch: sched_setaffinity");
      if (masks[i] && set_mempolicy(modes[i], masks[i]->maskp, masks[i]->size + 1) != 0)
        child_fail("bandwall-launch: set_mempolicy");
      execv(paths[i].c_str(), argvs[i].data());
      child_fail("bandwall-launch: exec");
    }
    pids[i] = pid;
  }
  std::vector<int> running(pids.begin(), pids.end());
  timespec pause{static_cast<time_t>(interval_s),
                 static_cast<long>(1e9 * (interval_s - static_cast<long>(interval_s)))};
  for (std::size_t left = specs.size(); left > 0;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, while_running ? WNOHANG : 0);
    if (pid == 0) {
      while_running(running);
      nanosleep(&pause, nullptr);
      continue;
    }
    if (pid > 0) running.erase(std::remove(running.begin(), running.end(), pid), running.end());
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw RunError(std::string("waitpid failed: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (pids[i] != pid) continue;
      results[i].wall_s = now() - start[i];
      if (WIFEXITED(status)) {
        results[i].exit_code = WEXITSTATUS(status);
      } else if (WIFSIGNALED(status)) {
        results[i].signal = WTERMSIG(status);
      }
      --left;
    }
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    results[i].out = read_all(out_fd[i]);
    results[i].err = read_all(err_fd[i]);
    close(out_fd[i]);
    close(err_fd[i]);
    if (masks[i]) numa_free_nodemask(masks[i]);
  }
  return results;
}

}  // namespace bw
