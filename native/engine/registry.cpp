// The one place engines are registered: adding a backend is a file and one line here.
#include <sched.h>

#include <chrono>
#include <immintrin.h>
#include <string>

#include "common/errors.hpp"
#include "engine/backends.hpp"

namespace bw::engine {

const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = {
      dsa_backend(), dsa_model_backend(), helper_backend(), memcpy_backend(), none_backend(),
  };
  return all;
}

nlohmann::json backends_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Backend& b : backends()) {
    Availability a = b.probe();
    out.push_back({{"name", b.name},
                   {"summary", b.summary},
                   {"modes", b.modes},
                   {"takes_cpus", b.takes_cpus},
                   {"hardware", b.hardware.empty() ? nlohmann::json() : nlohmann::json(b.hardware)},
                   {"hidden", b.hidden},
                   {"default", b.name == default_engine()},
                   {"queues", b.queues},
                   {"available", a.available},
                   {"reason", a.reason}});
  }
  return out;
}

const char* default_engine() { return "helper"; }

std::string names() {
  std::string out;
  for (const Backend& b : backends())
    if (!b.hidden) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

const Backend& find(std::string_view name) {
  for (const Backend& b : backends())
    if (b.name == name) return b;
  throw UsageError("unknown engine '" + std::string(name) + "' (known: " + names() + ")");
}

std::unique_ptr<Engine> make(std::string_view name, const Config& c) {
  const Backend& b = find(name);
  Availability a = b.probe();
  if (!a.available) throw UsageError(std::string(b.name) + ": unavailable: " + a.reason);
  return b.make(c);
}

void Queue::wait(Ticket t) {
  if (poll(t)) return;
  auto t0 = std::chrono::steady_clock::now();
  // Spin while the engine is about to finish; yield when it takes longer, so an engine thread that
  // shares this CPU (an oversubscribed machine) gets to run.
  for (unsigned spins = 0; !poll(t); ++spins) {
    _mm_pause();
    if (spins >= 4096) sched_yield();
  }
  stats_.waits++;
  stats_.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace bw::engine
