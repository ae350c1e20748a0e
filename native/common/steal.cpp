#include "common/steal.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace bw {

namespace {

constexpr int kStealColumn = 7;  // user nice system idle iowait irq softirq steal guest guest_nice

std::map<int, CpuTicks> read_cpu_ticks() {
  std::ifstream in("/proc/stat");
  std::stringstream s;
  s << in.rdbuf();
  return parse_cpu_ticks(s.str());
}

const std::map<int, CpuTicks>& start_ticks() {
  static const std::map<int, CpuTicks> start = read_cpu_ticks();
  return start;
}

}  // namespace

std::map<int, CpuTicks> parse_cpu_ticks(std::string_view text) {
  std::map<int, CpuTicks> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (!line.starts_with("cpu") || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    int cpu = 0;
    auto [p, ec] = std::from_chars(line.data() + 3, line.data() + line.size(), cpu);
    if (ec != std::errc{}) continue;
    CpuTicks t;
    const char* const last = line.data() + line.size();
    for (int column = 0; column <= kStealColumn; ++column) {
      while (p < last && *p == ' ') ++p;
      unsigned long long v = 0;
      auto [q, e] = std::from_chars(p, last, v);
      if (e != std::errc{}) break;
      p = q;
      t.total += v;
      if (column == kStealColumn) t.steal = v;
    }
    out[cpu] = t;
  }
  return out;
}

nlohmann::json steal_between(const std::map<int, CpuTicks>& before, const std::map<int, CpuTicks>& after,
                             const std::vector<int>& cpus, long ticks_per_second) {
  unsigned long long stolen = 0, whole = 0;
  auto add = [&](int cpu) {
    const auto a = before.find(cpu), b = after.find(cpu);
    if (a == before.end() || b == after.end() || b->second.total < a->second.total) return;
    stolen += b->second.steal - std::min(a->second.steal, b->second.steal);
    whole += b->second.total - a->second.total;
  };
  if (cpus.empty())
    for (const auto& [cpu, t] : after) add(cpu);
  else
    for (int cpu : cpus) add(cpu);
  if (whole == 0 || ticks_per_second <= 0) return nullptr;
  return {{"share", static_cast<double>(stolen) / static_cast<double>(whole)},
          {"seconds", static_cast<double>(stolen) / static_cast<double>(ticks_per_second)}};
}

void start_steal_clock() { start_ticks(); }

nlohmann::json steal_since_start(const std::vector<int>& cpus) {
  const auto& start = start_ticks();
  return steal_between(start, read_cpu_ticks(), cpus, sysconf(_SC_CLK_TCK));
}

}  // namespace bw
