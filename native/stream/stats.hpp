// Bandwidth statistics of the timed repetitions of a kernel, computed in one place.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace bw::stream {

struct Stats {
  double best_s, median_s, avg_s, worst_s;
};

// Times after dropping the first `dropped` repetitions (the warm-up).
inline Stats time_stats(std::vector<double> times, std::size_t dropped) {
  times.erase(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(std::min(dropped, times.size() - 1)));
  std::sort(times.begin(), times.end());
  double sum = 0;
  for (double t : times) sum += t;
  std::size_t m = times.size();
  double median = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
  return {times.front(), median, sum / static_cast<double>(m), times.back()};
}

// Giga (1e9) units per second for amount moved in seconds.
inline double giga_per_s(double amount, double seconds) { return amount / seconds / 1e9; }

}  // namespace bw::stream
