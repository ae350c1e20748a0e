// The FMA peak: the variant chosen at start-up (or by select_isa) and the measurement over threads.
// The variants this build has come from peak_variants.hpp, which bandwall_isa_sources
// (common/isa.cmake) generates.
#include "peak/fma.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/dispatch.hpp"
#include "peak_variants.hpp"  // generated: the variants this build has

namespace bw::peak {

BANDWALL_PEAK_VARIANTS(Variant)

Dispatch<Variant>& dispatch() {
  static Dispatch<Variant> d({BANDWALL_PEAK_LIST});
  return d;
}

namespace {

const Variant* active() { return &dispatch().active(); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const std::vector<const Variant*>& variants() { return dispatch().variants(); }

const Variant* find_variant(const std::string& isa) { return dispatch().find(isa); }

std::string select_isa(const std::string& isa) { return dispatch().select(isa).isa; }

nlohmann::json isa_choice_json() { return dispatch().choice_json(); }

const Variant& variant() { return *active(); }

int lanes(Precision p) { return p == Precision::Double ? active()->lanes_dp : active()->lanes_dp * 2; }
double flops_per_iteration(Precision p) { return 2.0 * lanes(p) * variant().accumulators; }

double run_chain(Precision p, std::uint64_t iters) {
  return p == Precision::Double ? active()->chain_dp(iters) : active()->chain_sp(iters);
}

std::uint64_t calibrate(Precision p, double target_s) {
  // Grow the count until one run on the calling thread takes a tenth of the target.
  std::uint64_t iters = 1 << 12;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    volatile double sink = run_chain(p, iters);  // the result is used, so the call stays
    (void)sink;
    double s = seconds_since(t0);
    if (s > target_s / 10 || iters > (1ull << 40))
      return std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(static_cast<double>(iters) * target_s / std::max(s, 1e-9)));
    iters *= 4;
  }
}

Repetition repetition(Precision p, int nthreads, std::uint64_t iters) {
  std::vector<double> secs(static_cast<std::size_t>(nthreads));
  bool ok = true;
#pragma omp parallel num_threads(nthreads) reduction(&& : ok)
  {
#pragma omp barrier
    auto t0 = std::chrono::steady_clock::now();
    double sum = run_chain(p, iters);
    secs[static_cast<std::size_t>(omp_get_thread_num())] = seconds_since(t0);
    const int n = variant().accumulators;
    ok = std::isfinite(sum) && std::fabs(sum - n) < 1e-3 * n;
  }
  return {*std::max_element(secs.begin(), secs.end()), ok};
}

Measurement measure(Precision p, int nthreads, double target_s, int reps) {
  const std::uint64_t iters = calibrate(p, target_s);
  Measurement best{0, 0, iters, true, {}};
  for (int r = 0; r < reps; ++r) {
    const Repetition rep = repetition(p, nthreads, iters);
    double gflops = flops_per_iteration(p) * static_cast<double>(iters) * nthreads / rep.slowest_s / 1e9;
    best.checksum_ok = best.checksum_ok && rep.checksum_ok;
    best.rounds.push_back(gflops);
    if (gflops > best.gflops) {
      best.gflops = gflops;
      best.seconds = rep.slowest_s;
    }
  }
  return best;
}

}  // namespace bw::peak
