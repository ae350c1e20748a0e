#include "common/ompenv.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Filled by bw_ompenv_capture before any constructor runs; pointers into the original environment
// strings, which live for the whole process.
constexpr int kMaxVars = 1024;
const char* g_vars[kMaxVars];
int g_count = 0;
int g_dropped = 0;  // variables beyond kMaxVars: left in place, listed as not removed
bool g_captured = false;
bool g_restored = false;

// How idle threads wait at barriers (spin, then sleep): the user's choice, kept, since it does not
// decide where threads run or how many there are (a slow emulator or an oversubscribed node needs
// passive waiting). Everything else is removed.
constexpr const char* kKept[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"};

bool kept(const char* entry) {
  for (const char* k : kKept) {
    std::size_t n = std::strlen(k);
    if (std::strncmp(entry, k, n) == 0 && entry[n] == '=') return true;
  }
  return false;
}

bool prefixed(const char* s) {
  return std::strncmp(s, "OMP_", 4) == 0 || std::strncmp(s, "GOMP_", 5) == 0 || std::strncmp(s, "KMP_", 4) == 0;
}

// JSON strings must be UTF-8; a hostile value may not be.
std::string printable(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (ok && (len > 1 || c >= 0x20)) {
      out.append(s, i, len);
      i += len;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    }
  }
  return out;
}

}  // namespace

extern "C" void bw_ompenv_capture(char** envp) {
  if (g_captured || envp == nullptr) return;
  g_captured = true;
  char** w = envp;
  for (char** r = envp; *r; ++r) {
    if (prefixed(*r) && std::strchr(*r, '=')) {
      if (g_count < kMaxVars) {
        g_vars[g_count++] = *r;
        if (!kept(*r)) continue;
      } else {
        ++g_dropped;
      }
    }
    *w++ = *r;
  }
  *w = nullptr;
}

namespace bw {

bool is_openmp_variable(const std::string& name) { return prefixed(name.c_str()); }

std::string openmp_env_action(const std::string& name) {
  static const char* const binding[] = {"OMP_PROC_BIND", "OMP_PLACES",        "GOMP_CPU_AFFINITY",   "KMP_AFFINITY",
                                        "KMP_HW_SUBSET", "KMP_PLACE_THREADS", "OMP_DISPLAY_AFFINITY"};
  static const char* const count[] = {"OMP_NUM_THREADS",
                                      "OMP_THREAD_LIMIT",
                                      "OMP_DYNAMIC",
                                      "OMP_MAX_ACTIVE_LEVELS",
                                      "OMP_NESTED",
                                      "KMP_ALL_THREADS",
                                      "KMP_DEVICE_THREAD_LIMIT",
                                      "KMP_TEAMS_THREAD_LIMIT",
                                      "KMP_LIBRARY"};
  const std::string removed = "removed before the OpenMP runtime started";
  for (const char* b : binding)
    if (name == b) return removed + "; bandwall binds its threads itself (--cpus / --bind)";
  for (const char* c : count)
    if (name == c) return removed + "; the thread count comes from --threads or the CPU set";
  for (const char* k : kKept)
    if (name == k) return "kept: it sets how idle threads wait, not where they run";
  return removed;
}

nlohmann::json openmp_env_record() {
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < g_count; ++i) {
    std::string entry = g_vars[i];
    auto eq = entry.find('=');
    std::string name = printable(entry.substr(0, eq)), value = printable(entry.substr(eq + 1));
    std::string action = openmp_env_action(name);
    if (g_restored && action.rfind("removed", 0) == 0)
      action = "passed to the launched command; " + action + " in bandwall itself";
    else if (g_restored)
      action = "passed to the launched command; " + action;
    out[name] = {{"value", value}, {"action", action}};
  }
  if (g_dropped > 0)
    out["..."] = {{"value", std::to_string(g_dropped) + " more variables"},
                  {"action", "left in place: more than " + std::to_string(kMaxVars) + " OpenMP variables"}};
  return out;
}

void restore_openmp_env() {
  for (int i = 0; i < g_count; ++i) {
    if (kept(g_vars[i])) continue;
    std::string entry = g_vars[i];
    auto eq = entry.find('=');
    setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
  }
  g_restored = true;
}

}  // namespace bw
