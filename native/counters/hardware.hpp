// Hardware events through PAPI: core events attached to the command (and inherited by its
// threads), other components' events (uncore: memory controllers, data fabric) counted for the
// whole machine while the command runs. Nothing here knows about groups or metrics: the front end
// resolves a group into PAPI event names and computes metrics from the counts.
#pragma once
#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bw::counters {

// "available", or "unavailable: <reason>" when PAPI cannot count here (not built in, library
// initialisation failed, or every component is disabled), with PAPI's own reason.
std::string papi_status();

// The events PAPI lists on this machine: presets it can count and native event names
// (pmu::EVENT), per component, with each component's disabled reason.
nlohmann::json list_events();

class HardwareCounters {
 public:
  // Prepares names for pid (held before exec). Events PAPI refuses are remembered with the reason.
  HardwareCounters(pid_t pid, const std::vector<std::string>& names);
  ~HardwareCounters();
  HardwareCounters(const HardwareCounters&) = delete;
  HardwareCounters& operator=(const HardwareCounters&) = delete;
  void start();
  void stop();
  // name -> count, or "unavailable: <reason>".
  nlohmann::json read() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bw::counters
