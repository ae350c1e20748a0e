#include "stream/runner.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>

namespace bw::stream {

std::pair<std::size_t, std::size_t> chunk(std::size_t n, int t, int nthreads) {
  auto edge = [&](int i) -> std::size_t {
    if (i >= nthreads) return n;
    std::size_t e = static_cast<std::size_t>((static_cast<unsigned __int128>(n) * static_cast<unsigned>(i)) /
                                             static_cast<unsigned>(nthreads));
    return e / kChunkAlign * kChunkAlign;
  };
  return {edge(t), edge(t + 1)};
}

namespace {

void fill(const Kernel& k, const Arrays& x, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    if (k.uses_a) x.a[i] = kInitA;
    if (k.uses_b) x.b[i] = kInitB;
    if (k.uses_c) x.c[i] = kInitC;
  }
}

}  // namespace

void initialise(const Kernel& k, const Arrays& x, std::size_t n, int nthreads, bool serial) {
  if (serial) {
    fill(k, x, 0, n);
    return;
  }
#pragma omp parallel num_threads(nthreads)
  {
    auto [b, e] = chunk(n, omp_get_thread_num(), nthreads);
    fill(k, x, b, e);
  }
}

double run_once(const Kernel& k, const Arrays& x, std::size_t n, int nthreads, bool nt, double* secs) {
  ChunkFn fn = nt ? k.nt : k.regular;
  double sum = 0.0;
  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(nthreads) reduction(+ : sum)
  {
    auto [b, e] = chunk(n, omp_get_thread_num(), nthreads);
    sum += fn(x, b, e, kScalar);
  }
  auto t1 = std::chrono::steady_clock::now();
  *secs = std::chrono::duration<double>(t1 - t0).count();
  return sum;
}

Validation validate(const Kernel& k, const Arrays& x, std::size_t n, int reps, int nthreads, double dot_sum) {
  Validation v;
  double ea = kInitA, eb = kInitB, ec = kInitC;
  for (int r = 0; r < reps; ++r) k.reference(ea, eb, ec, kScalar);
  const std::pair<char, std::pair<double*, double>> arrays[] = {{'a', {k.uses_a ? x.a : nullptr, ea}},
                                                                {'b', {k.uses_b ? x.b : nullptr, eb}},
                                                                {'c', {k.uses_c ? x.c : nullptr, ec}}};
  for (auto& [name, ptr_expected] : arrays) {
    auto [p, expected] = ptr_expected;
    if (!p) continue;
    double err = 0.0;
    std::size_t wrong = 0;
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(+ : err, wrong)
    for (std::size_t i = 0; i < n; ++i) {
      double e = std::fabs(p[i] - expected);
      err += e;
      if (!(e <= kEpsilon * std::fabs(expected))) ++wrong;  // also catches NaN
    }
    double rel = err / static_cast<double>(n) / std::fabs(expected);
    v.arrays.push_back({name, expected, rel, wrong});
    if (!(rel <= kEpsilon) || wrong > 0) {
      v.passed = false;
      char buf[200];
      std::snprintf(buf, sizeof buf, "array %c: %zu of %zu elements differ from %g (average relative error %.3g)", name,
                    wrong, n, expected, rel);
      if (v.message.empty()) v.message = buf;
    }
  }
  if (k.writes == 0) {
    v.dot_expected = static_cast<double>(n) * ea * eb;
    v.dot_got = dot_sum;
    v.dot_rel_error = std::fabs(dot_sum - v.dot_expected) / std::fabs(v.dot_expected);
    if (!(v.dot_rel_error <= kEpsilon)) {
      v.passed = false;
      char buf[200];
      std::snprintf(buf, sizeof buf, "dot sum %.17g differs from %.17g (relative error %.3g)", dot_sum, v.dot_expected,
                    v.dot_rel_error);
      if (v.message.empty()) v.message = buf;
    }
  }
  return v;
}

void inject_error_for_tests(const Kernel& k, const Arrays& x, std::size_t n, double& dot_sum) {
  if (!std::getenv("BANDWALL_STREAM_INJECT_ERROR")) return;
  double* w = k.writes == 'a' ? x.a : k.writes == 'b' ? x.b : k.writes == 'c' ? x.c : nullptr;
  if (w)
    w[n / 2] += 1.0;
  else
    dot_sum += 1.0;
}

}  // namespace bw::stream
