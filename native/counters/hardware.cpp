#include "counters/hardware.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#ifdef BANDWALL_HAVE_PAPI
#include <papi.h>
#endif

namespace bw::counters {

#ifndef BANDWALL_HAVE_PAPI

std::string papi_status() { return "unavailable: bandwall was built without PAPI (pkg-config papi not found)"; }
nlohmann::json list_events() { return {{"papi", papi_status()}, {"components", nlohmann::json::array()}}; }
struct HardwareCounters::Impl {
  std::vector<std::string> names;
};
HardwareCounters::HardwareCounters(pid_t, const std::vector<std::string>& names) : impl_(new Impl{names}) {}
HardwareCounters::~HardwareCounters() = default;
void HardwareCounters::start() {}
void HardwareCounters::stop() {}
nlohmann::json HardwareCounters::read() const {
  nlohmann::json out = nlohmann::json::object();
  for (auto& n : impl_->names) out[n] = papi_status();
  return out;
}

#else

namespace {

// Whether the kernel counts a hardware event at all: PAPI's "Event does not exist" on a machine
// without a PMU (a VM without PMU passthrough) says more with the kernel's own answer beside it.
const std::string& pmu_probe() {
  static const std::string reason = [] {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd >= 0) {
      close(fd);
      return std::string();
    }
    return std::string("perf_event_open of a hardware event (instructions): ") + std::strerror(errno) +
           (errno == ENOENT || errno == EOPNOTSUPP ? ", no hardware PMU is exposed here" : "");
  }();
  return reason;
}

std::string why(const char* call, int code) {
  std::string out = std::string("unavailable: ") + call + ": " + PAPI_strerror(code);
  if (!pmu_probe().empty()) out += " (" + pmu_probe() + ")";
  return out;
}

// Initialises PAPI once; "" when it worked, otherwise the reason.
const std::string& init() {
  static const std::string reason = [] {
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT)
      return v > 0 ? std::string("unavailable: PAPI_library_init: header and library versions differ")
                   : why("PAPI_library_init", v);
    return std::string();
  }();
  return reason;
}

// One event set per PAPI component: the CPU component's set follows the command, others count
// machine-wide (uncore events carry their CPU in the name, e.g. :cpu=0).
struct Set {
  int cidx = -1;
  int handle = PAPI_NULL;
  std::vector<std::string> names;
  std::string error;  // set-wide failure
  bool running = false;
  std::vector<long long> values;
};

}  // namespace

std::string papi_status() {
  if (!init().empty()) return init();
  int enabled = 0;
  std::string reasons;
  for (int c = 0; c < PAPI_num_components(); ++c) {
    const PAPI_component_info_t* info = PAPI_get_component_info(c);
    if (!info) continue;
    if (!info->disabled)
      ++enabled;
    else if (std::string(info->name).rfind("perf_event", 0) == 0)
      reasons += std::string(reasons.empty() ? "" : "; ") + info->name + ": " + info->disabled_reason;
  }
  if (!enabled) return "unavailable: " + (reasons.empty() ? "no enabled PAPI component" : reasons);
  // PAPI lists the CPU's events from libpfm4 tables even where the kernel cannot count them.
  return pmu_probe().empty() ? "available" : "available (events listed; " + pmu_probe() + ")";
}

nlohmann::json list_events() {
  nlohmann::json out = {{"papi", papi_status()}, {"components", nlohmann::json::array()}};
  if (!init().empty()) return out;
  nlohmann::json presets = nlohmann::json::array();
  int code = PAPI_PRESET_MASK;
  if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) do {
      PAPI_event_info_t info;
      if (PAPI_get_event_info(code, &info) == PAPI_OK && info.count > 0) presets.push_back(info.symbol);
    } while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
  out["presets"] = presets;
  for (int c = 0; c < PAPI_num_components(); ++c) {
    const PAPI_component_info_t* info = PAPI_get_component_info(c);
    if (!info) continue;
    nlohmann::json comp = {{"name", info->name}, {"disabled", info->disabled ? info->disabled_reason : ""}};
    nlohmann::json names = nlohmann::json::array();
    int ev = PAPI_NATIVE_MASK;
    if (!info->disabled && PAPI_enum_cmp_event(&ev, PAPI_ENUM_FIRST, c) == PAPI_OK) do {
        char name[PAPI_MAX_STR_LEN];
        if (PAPI_event_code_to_name(ev, name) == PAPI_OK) names.push_back(name);
        // Unit masks, as EVENT:UMASK (qualifiers with a value, such as :cpu=0, are left out).
        int um = ev;
        if (PAPI_enum_cmp_event(&um, PAPI_NTV_ENUM_UMASKS, c) == PAPI_OK) do {
            if (PAPI_event_code_to_name(um, name) == PAPI_OK && !std::strchr(name, '=')) names.push_back(name);
          } while (PAPI_enum_cmp_event(&um, PAPI_NTV_ENUM_UMASKS, c) == PAPI_OK);
      } while (PAPI_enum_cmp_event(&ev, PAPI_ENUM_EVENTS, c) == PAPI_OK);
    comp["events"] = names;
    out["components"].push_back(comp);
  }
  return out;
}

struct HardwareCounters::Impl {
  std::vector<std::string> names;
  std::map<std::string, std::string> refused;  // name -> reason
  std::vector<Set> sets;
  pid_t pid;
};

HardwareCounters::HardwareCounters(pid_t pid, const std::vector<std::string>& names) : impl_(new Impl) {
  impl_->names = names;
  impl_->pid = pid;
  if (names.empty()) return;
  if (!init().empty()) {
    for (auto& n : names) impl_->refused[n] = init();
    return;
  }
  for (auto& n : names) {
    int code = 0;
    if (int rc = PAPI_event_name_to_code(n.c_str(), &code); rc != PAPI_OK) {
      impl_->refused[n] = why("PAPI_event_name_to_code", rc);
      continue;
    }
    int cidx = PAPI_get_event_component(code);
    Set* set = nullptr;
    for (auto& s : impl_->sets)
      if (s.cidx == cidx) set = &s;
    if (!set) {
      impl_->sets.push_back(Set{});
      set = &impl_->sets.back();
      set->cidx = cidx;
      if (int rc = PAPI_create_eventset(&set->handle); rc != PAPI_OK)
        set->error = why("PAPI_create_eventset", rc);
      else if (int rc2 = PAPI_assign_eventset_component(set->handle, cidx); rc2 != PAPI_OK)
        set->error = why("PAPI_assign_eventset_component", rc2);
      const PAPI_component_info_t* info = PAPI_get_component_info(cidx);
      bool follows_task = info && std::string(info->name) == "perf_event";
      if (set->error.empty() && follows_task) {
        PAPI_option_t opt{};
        opt.inherit.eventset = set->handle;
        opt.inherit.inherit = PAPI_INHERIT_ALL;
        if (int rc = PAPI_set_opt(PAPI_INHERIT, &opt); rc != PAPI_OK)
          set->error = why("PAPI_set_opt(PAPI_INHERIT)", rc);
        else if (int rc2 = PAPI_attach(set->handle, static_cast<unsigned long>(pid)); rc2 != PAPI_OK)
          set->error = why("PAPI_attach", rc2);
      }
    }
    if (!set->error.empty()) {
      impl_->refused[n] = set->error;
      continue;
    }
    if (int rc = PAPI_add_named_event(set->handle, n.c_str()); rc != PAPI_OK) {
      impl_->refused[n] = why("PAPI_add_named_event", rc);
      continue;
    }
    set->names.push_back(n);
  }
}

HardwareCounters::~HardwareCounters() {
  for (auto& s : impl_->sets) {
    if (s.handle == PAPI_NULL) continue;
    if (s.running) {
      std::vector<long long> v(s.names.size());
      PAPI_stop(s.handle, v.data());
    }
    PAPI_cleanup_eventset(s.handle);
    PAPI_destroy_eventset(&s.handle);
  }
}

void HardwareCounters::start() {
  for (auto& s : impl_->sets) {
    if (s.names.empty()) continue;
    if (int rc = PAPI_start(s.handle); rc != PAPI_OK) {
      for (auto& n : s.names) impl_->refused[n] = why("PAPI_start", rc);
      s.names.clear();
      continue;
    }
    s.running = true;
  }
}

void HardwareCounters::stop() {
  for (auto& s : impl_->sets) {
    if (!s.running) continue;
    s.values.assign(s.names.size(), 0);
    if (int rc = PAPI_stop(s.handle, s.values.data()); rc != PAPI_OK) {
      for (auto& n : s.names) impl_->refused[n] = why("PAPI_stop", rc);
      s.values.clear();
    }
    s.running = false;
  }
}

nlohmann::json HardwareCounters::read() const {
  nlohmann::json out = nlohmann::json::object();
  for (auto& [n, reason] : impl_->refused) out[n] = reason;
  for (auto& s : impl_->sets)
    for (std::size_t i = 0; i < s.values.size() && i < s.names.size(); ++i) out[s.names[i]] = s.values[i];
  return out;
}

#endif

}  // namespace bw::counters
