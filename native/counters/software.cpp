#include "counters/software.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace bw::counters {

namespace {

int open_event(pid_t pid, unsigned long long config, bool user_only) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.exclude_kernel = user_only ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string v;
  return in >> v ? v : "unknown";
}

}  // namespace

SoftwareCounters::SoftwareCounters(pid_t pid) {
  events_ = {{"task_clock_s", PERF_COUNT_SW_TASK_CLOCK, 1e-9, -1, ""},
             {"page_faults", PERF_COUNT_SW_PAGE_FAULTS, 1, -1, ""},
             {"context_switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 1, -1, ""},
             {"cpu_migrations", PERF_COUNT_SW_CPU_MIGRATIONS, 1, -1, ""}};
  for (auto& e : events_) {
    e.fd = open_event(pid, e.config, user_only_);
    // perf_event_paranoid >= 2 refuses kernel-mode counting to unprivileged users: count user
    // mode only and say so (context switches and migrations are then unavailable, see read()).
    if (e.fd < 0 && (errno == EACCES || errno == EPERM) && !user_only_) {
      user_only_ = true;
      e.fd = open_event(pid, e.config, true);
    }
    if (e.fd < 0) e.error = std::string("unavailable: perf_event_open: ") + std::strerror(errno);
  }
}

SoftwareCounters::~SoftwareCounters() {
  for (auto& e : events_)
    if (e.fd >= 0) close(e.fd);
}

nlohmann::json SoftwareCounters::read() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& e : events_) {
    if (e.fd < 0) {
      out[e.field] = e.error;
      continue;
    }
    if (user_only_ && (e.config == PERF_COUNT_SW_CONTEXT_SWITCHES || e.config == PERF_COUNT_SW_CPU_MIGRATIONS)) {
      // Both happen in the kernel: counted in user mode only they read 0, which is not a measurement.
      out[e.field] =
          "unavailable: perf_event_open refused kernel-mode counting (kernel.perf_event_paranoid=" + paranoid() +
          "; root or a value of 1 or less counts it)";
      continue;
    }
    unsigned long long v[3] = {0, 0, 0};  // value, time enabled, time running
    if (::read(e.fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) {
      out[e.field] = std::string("unavailable: read: ") + std::strerror(errno);
      continue;
    }
    double value = static_cast<double>(v[0]);
    if (v[2] > 0 && v[2] < v[1]) value *= static_cast<double>(v[1]) / static_cast<double>(v[2]);  // multiplexed
    if (e.scale == 1)
      out[e.field] = static_cast<unsigned long long>(value + 0.5);
    else
      out[e.field] = value * e.scale;
  }
  out["kernel_mode_counted"] = !user_only_;
  return out;
}

}  // namespace bw::counters
