// Software events of the kernel, counted for a process and every thread and child it creates
// (perf_event_open with inherit): task clock, page faults, context switches, CPU migrations.
#pragma once
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bw::counters {

class SoftwareCounters {
 public:
  // Opens the events on pid (not yet exec'd), enabled at its exec. An event the kernel refuses
  // reads "unavailable: <strerror>" in the result.
  explicit SoftwareCounters(pid_t pid);
  ~SoftwareCounters();
  SoftwareCounters(const SoftwareCounters&) = delete;
  SoftwareCounters& operator=(const SoftwareCounters&) = delete;

  // result.software: task_clock_s, page_faults, context_switches, cpu_migrations (numbers or
  // "unavailable: <reason>"), and whether kernel-mode events were excluded.
  nlohmann::json read() const;

 private:
  struct Event {
    std::string field;
    unsigned long long config;
    double scale;
    int fd = -1;
    std::string error;
  };
  std::vector<Event> events_;
  bool user_only_ = false;
};

}  // namespace bw::counters
