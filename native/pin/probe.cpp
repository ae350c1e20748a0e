// pin-probe-cxx: the C++ twin of bandwall-pin-probe (probe.c) for the pinning tests: an OpenMP
// program written in C++ (g++, GNU OpenMP) whose threads each run compute-bound rounds between
// barriers and note the CPU they are on; it prints the same lines as the C probe, with "probe":"cxx".
//
//   pin-probe-cxx [ROUNDS [WORK]]   (default 200 rounds of 200000 multiply-adds per thread)
#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace {

// x <- a*x + b, n times from 0: the same chain as the C probe, whose result every thread must match.
double chain(long n, double a, double b) {
  double x = 0;
  for (long i = 0; i < n; ++i) x = a * x + b;
  return x;
}

struct Seen {
  double sum = 0;
  int last = -1;
  std::set<int> cpus;
};

std::string list(const std::set<int>& cpus) {
  std::string out;
  for (int c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::atol(argv[1]) : 200, work = argc > 2 ? std::atol(argv[2]) : 200000;
  if (rounds < 1 || work < 1) {
    std::fprintf(stderr, "pin-probe-cxx: error: ROUNDS and WORK must be positive whole numbers\n");
    return 2;
  }
  const double a = 1.0 - 1.0 / (1 << 20), b = 1.0;
  std::vector<Seen> seen(static_cast<std::size_t>(omp_get_max_threads()));
  int threads = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
#pragma omp single
    threads = omp_get_num_threads();
    Seen& mine = seen[t];
    for (long r = 0; r < rounds; ++r) {
      mine.sum += chain(work, a, b);
      mine.cpus.insert(sched_getcpu());
#pragma omp barrier
    }
    mine.last = sched_getcpu();
  }
  const double seconds = omp_get_wtime() - t0;
  double expect = 0;
  const double one = chain(work, a, b);
  for (long r = 0; r < rounds; ++r) expect += one;
  bool ok = threads > 0 && static_cast<std::size_t>(threads) <= seen.size();
  for (int t = 0; ok && t < threads; ++t) ok = seen[static_cast<std::size_t>(t)].sum == expect;
  std::string cpus, sets;
  for (int t = 0; ok && t < threads; ++t) {
    const Seen& s = seen[static_cast<std::size_t>(t)];
    cpus += (t ? "," : "") + std::to_string(s.last);
    sets += std::string(t ? "," : "") + "[" + list(s.cpus) + "]";
  }
  std::printf("time %.6f s\n", seconds);
  std::printf(
      "{\"probe\":\"cxx\",\"threads\":%d,\"seconds\":%.6f,\"valid\":%s,\"thread_cpus\":[%s],\"cpus_seen\":[%s]}\n",
      threads, seconds, ok ? "true" : "false", cpus.c_str(), sets.c_str());
  if (!ok) {
    std::fprintf(stderr, "pin-probe-cxx: error: checksum wrong\n");
    return 1;
  }
  return 0;
}
