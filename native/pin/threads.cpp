#include "pin/threads.hpp"

#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "pin/bwpin.h"

namespace bw::pin {

double monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void ThreadReport::sample(int pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<int> tids;
  while (dirent* e = readdir(d))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.push_back(std::atoi(e->d_name));
  closedir(d);
  std::sort(tids.begin(), tids.end());
  double now = monotonic_now();
  for (int tid : tids) {
    bwpin_task_stat st{};
    if (bwpin_task_stat_read(pid, tid, &st) != 0) continue;
    auto [it, fresh] = threads_.try_emplace(tid);
    Seen& s = it->second;
    if (fresh) s.order = next_order_++;
    s.cpus.emplace_back(now, st.cpu);
    s.migrations = st.migrations;
    s.voluntary = st.voluntary;
    s.involuntary = st.involuntary;
  }
  ++samples_;
}

void ThreadReport::read_library_lines(const std::string& path, int pid) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string kind;
    int line_pid = 0, tid = 0;
    ss >> kind >> line_pid;
    if (line_pid != pid) continue;  // a child process the program started
    if (kind == "T") {
      int index = 0, cpu = -1, creation = 0;
      double at = 0;
      ss >> index >> tid >> cpu >> creation >> at;
      if (!ss && !ss.eof()) continue;
      auto [it, fresh] = threads_.try_emplace(tid);
      if (fresh) it->second.order = next_order_++;
      it->second.index = index;
      it->second.cpu_intended = cpu;
      it->second.bound_at = at;
    } else if (kind == "E") {
      int cpu = -1;
      long long mig = -1, vol = -1, invol = -1;
      ss >> tid >> cpu >> mig >> vol >> invol;
      if (!ss && !ss.eof()) continue;
      auto [it, fresh] = threads_.try_emplace(tid);
      if (fresh) it->second.order = next_order_++;
      it->second.cpus.emplace_back(monotonic_now(), cpu);  // the look at exit counts as one sample
      it->second.migrations = mig;
      it->second.voluntary = vol;
      it->second.involuntary = invol;
    }
  }
}

std::map<int, double> ThreadReport::shares(const Seen& s) const {
  std::map<int, double> out;
  long n = 0;
  for (auto& [t, cpu] : s.cpus)
    if (t >= s.bound_at) ++out[cpu], ++n;
  for (auto& [cpu, share] : out) share /= static_cast<double>(n);
  return out;
}

nlohmann::json ThreadReport::to_json() const {
  std::vector<std::pair<int, const Seen*>> order;
  for (auto& [tid, s] : threads_) order.emplace_back(tid, &s);
  auto key = [](const std::pair<int, const Seen*>& p) {
    const Seen& s = *p.second;
    return s.index >= 0 ? std::make_pair(0L, static_cast<long>(s.index)) : std::make_pair(1L, s.order);
  };
  std::sort(order.begin(), order.end(), [&](auto& a, auto& b) { return key(a) < key(b); });
  nlohmann::json out = nlohmann::json::array();
  for (auto& [tid, sp] : order) {
    const Seen& s = *sp;
    nlohmann::json seen = nlohmann::json::object();
    for (auto& [cpu, share] : shares(s)) seen[std::to_string(cpu)] = share;
    auto num = [](long long v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
    out.push_back({{"index", s.index >= 0 ? nlohmann::json(s.index) : nlohmann::json(nullptr)},
                   {"tid", tid},
                   {"cpu_intended", s.cpu_intended >= 0 ? nlohmann::json(s.cpu_intended) : nlohmann::json(nullptr)},
                   {"skipped", s.index == -1},
                   {"cpus_seen", seen},
                   {"samples", s.cpus.size()},
                   {"migrations", num(s.migrations)},
                   {"voluntary_switches", num(s.voluntary)},
                   {"involuntary_switches", num(s.involuntary)}});
  }
  return out;
}

std::vector<std::string> ThreadReport::misplaced() const {
  std::vector<std::string> out;
  for (auto& [tid, s] : threads_) {
    if (s.cpu_intended < 0) continue;
    for (auto& [cpu, share] : shares(s))
      if (cpu != s.cpu_intended) {
        std::ostringstream msg;
        msg << "thread " << s.index << " (tid " << tid << ") was meant for CPU " << s.cpu_intended
            << " but was seen on CPU " << cpu << " in " << static_cast<int>(100 * share + 0.5) << "% of samples";
        out.push_back(msg.str());
      }
  }
  return out;
}

}  // namespace bw::pin
