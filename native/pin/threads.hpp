// Where each thread of a pinned program ran: samples of /proc/PID/task/*/ taken from outside while it
// runs, merged with the lines the preloaded library wrote (which thread is which index, meant for which
// CPU, and a last look at each thread when it ended or the process exited).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bw::pin {

class ThreadReport {
 public:
  // One look at every thread of process pid (threads that vanished meanwhile are skipped).
  void sample(int pid);
  // Reads the library's lines (T and E, see preload.c) from path; a missing file reads as none.
  void read_library_lines(const std::string& path, int pid);
  // result.threads: one entry per thread, index order (main thread first), then threads the library
  // did not place (skipped, or unseen by it) in the order they were first seen.
  nlohmann::json to_json() const;
  // Bound threads seen on a CPU other than theirs after they bound themselves: one line each.
  std::vector<std::string> misplaced() const;
  long samples() const { return samples_; }

 private:
  struct Seen {
    long order = 0;                            // when first seen, for the threads the library did not report
    int index = -2;                            // -2: not reported by the library; -1: skipped
    int cpu_intended = -1;                     // -1: not bound
    double bound_at = 0;                       // CLOCK_MONOTONIC seconds of the library's T line (0: unknown)
    std::vector<std::pair<double, int>> cpus;  // (time, CPU) of every sample
    long long migrations = -1, voluntary = -1, involuntary = -1;
  };
  std::map<int, Seen> threads_;  // by tid
  long samples_ = 0, next_order_ = 0;
  std::map<int, double> shares(const Seen& s) const;
};

double monotonic_now();

}  // namespace bw::pin
