#include "counters/child.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/errors.hpp"

namespace bw::counters {

namespace {

std::chrono::steady_clock::time_point g_start;

bool executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Where execvp would find name: a path with a slash as it is, otherwise the first hit on PATH.
bool findable(const std::string& name) {
  if (name.find('/') != std::string::npos) return executable_file(name);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t at = 0;
  while (at <= dirs.size()) {
    std::size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(at, end - at);
    if (executable_file((dir.empty() ? "." : dir) + "/" + name)) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

Child hold(const std::vector<std::string>& argv) {
  if (argv.empty()) throw UsageError("no command to count (usage: bandwall-counters [OPTIONS] -- COMMAND ...)");
  if (argv[0].empty() || !findable(argv[0]))
    throw UsageError("command '" + argv[0] + "' not found or not an executable file");
  int go[2], ex[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0)
    throw RunError(std::string("pipe failed: ") + std::strerror(errno));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw RunError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {  // child: async-signal-safe calls only
    char b;
    close(go[1]);
    close(ex[0]);
    if (read(go[0], &b, 1) != 1) _exit(127);
    execvp(args[0], args.data());
    int err = errno;
    ssize_t w = write(ex[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  close(go[0]);
  close(ex[1]);
  return Child{pid, go[1], ex[0]};
}

void release(Child& c, const std::string& name) {
  g_start = std::chrono::steady_clock::now();
  char b = 1;
  if (write(c.go_fd, &b, 1) != 1) throw RunError(std::string("cannot start the command: ") + std::strerror(errno));
  close(c.go_fd);
  int err = 0;
  ssize_t n = read(c.exec_fd, &err, sizeof err);
  close(c.exec_fd);
  if (n == static_cast<ssize_t>(sizeof err)) {
    waitpid(c.pid, nullptr, 0);
    throw UsageError("cannot run '" + name + "': " + std::strerror(err));
  }
}

Exit wait_for(const Child& c) {
  int status = 0;
  rusage ru{};
  while (wait4(c.pid, &status, 0, &ru) < 0)
    if (errno != EINTR) throw RunError(std::string("wait failed: ") + std::strerror(errno));
  Exit e;
  e.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  e.max_rss_kib = ru.ru_maxrss;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.code = 128 + e.signal;
  } else {
    e.code = WEXITSTATUS(status);
  }
  return e;
}

}  // namespace bw::counters
