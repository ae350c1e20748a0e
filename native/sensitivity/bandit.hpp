// The bandwidth bandit: threads that take memory bandwidth and next to no cache (Eklöv et al., the
// Bandwidth Bandit). Its patterns:
//   strided  one 64-byte line of every 4 KiB page of its own buffer, always at the same offset in
//            the page: its lines fall in 1/64 of the sets of any cache indexed by the address bits
//            below the page, and the buffer is large enough that every line misses even there.
//            The loads are independent, so a thread keeps as many misses in flight as its core
//            allows.
//   write    whole lines written in order with non-temporal stores: to memory without a place in
//            any cache, and more bandwidth from one core than loads can take.
//   mixed    both at once, a line read and a line written (the default of bandwall sensitivity:
//            reads and writes, as programs have them, and no cache).
// A dose is a duty cycle: in each period of 1 ms a thread runs for duty x 1 ms and sleeps the rest.
//
// Two more patterns make co-runners for calibration: triad (STREAM's triad over three arrays, a
// co-runner of known bandwidth, counted as STREAM counts it) and compute (multiply-adds in
// registers: a co-runner that takes no memory, beside which the bandit is timed "alone", so that a
// busy neighbour core's cost to its clock and power budget is not taken for bandwidth).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sensitivity/worker.hpp"

namespace bw::sensitivity {

inline constexpr std::size_t kLine = 64;
inline constexpr std::size_t kPage = 4096;
inline constexpr double kPeriodSeconds = 1e-3;

// The bytes of one thread's buffer: 4 LLCs over the threads, at least 32 MiB, whole pages.
std::uint64_t bandit_buffer_bytes(std::uint64_t llc_bytes, int threads);

// Offsets (bytes from the buffer's start) of the lines one strided pass reads, in order.
std::vector<std::uint64_t> bandit_lines(std::uint64_t buffer_bytes);

// Seconds of a period a thread reads at a dose (duty in (0, 1]) and when it sleeps.
double busy_seconds(double duty);

enum class Pattern { strided, write, mixed, triad, compute };
// The patterns as a table of words (common/words.hpp), the default (mixed) first; bandit: one of the
// bandit's own patterns (a dose of bandwidth), not a co-runner for calibration (triad, compute).
struct PatternRow {
  const char* name;
  Pattern pattern;
  bool bandit;
  const char* help;
};
const std::vector<PatternRow>& patterns();
Pattern parse_pattern(const std::string& text);  // its name (pattern_name); UsageError otherwise
const char* pattern_name(Pattern p);
// Bytes from one line a thread reads to the next: a page (strided, mixed), a line (the others).
std::uint64_t stride_bytes(Pattern p);

struct BanditSample {
  double seconds = 0;
  double duty = 0;
  std::vector<std::uint64_t> bytes;  // per thread
  double gbps() const;
};

class Bandit {
 public:
  Bandit(const std::vector<int>& cpus, std::uint64_t buffer_bytes_per_thread, Pattern pattern = Pattern::strided);
  ~Bandit();
  void start(double duty);  // UsageError unless 0 < duty <= 1, or when already running
  BanditSample stop();      // UsageError when not running
  bool running() const { return running_; }
  const std::vector<int>& cpus() const { return cpus_; }
  std::uint64_t buffer_bytes() const { return bytes_; }

 private:
  struct Slot;
  std::vector<int> cpus_;
  std::uint64_t bytes_;
  Pattern pattern_;
  std::vector<std::unique_ptr<Slot>> slots_;  // before the workers: they are joined before it is freed
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> go_{false};
  bool running_ = false;
  double duty_ = 0, t0_ = 0;
};

}  // namespace bw::sensitivity
