#include "iso3dfd/selfcheck.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

namespace bw::iso3dfd {
namespace {

// Relative error allowed against the magnitude of the terms of the formula at the point: one step of
// float arithmetic (about 50 operations, FMA or not, in any order) stays far below it, a kernel that
// computes the stencil wrongly lands far above it.
constexpr double kTolerance = 1e-5;
// Absolute slack for points where everything is denormal: the kernels flush denormals to zero.
constexpr double kFloor = 1e-35;
// Points per dimension of the lattice, blocks whose edges are sampled, offsets around the source.
constexpr std::size_t kLattice = 6;
constexpr std::size_t kBlocks = 12;
constexpr long kSourceOffsets[] = {-9, -4, -1, 0, 3, 8};

}  // namespace

SelfCheck::SelfCheck(const Grid& g, const Blocks& b) : g_(g) {
  const std::size_t h = g.halo();
  std::set<std::size_t> picked;
  auto add = [&](std::size_t x, std::size_t y, std::size_t z) {
    if (x >= h && x < g.n1 - h && y >= h && y < g.n2 - h && z >= h && z < g.n3 - h) picked.insert(g.index(x, y, z));
  };
  // A lattice over the interior, from the first interior point to the last (beside the halo).
  auto along = [&](std::size_t n, std::size_t j) { return h + j * (n - 2 * h - 1) / (kLattice - 1); };
  for (std::size_t k = 0; k < kLattice; ++k)
    for (std::size_t j = 0; j < kLattice; ++j)
      for (std::size_t i = 0; i < kLattice; ++i) add(along(g.n1, i), along(g.n2, j), along(g.n3, k));
  // The edges of blocks spread over the grid: where vectors are masked and block boundaries meet.
  const auto boxes = decompose(g, b);
  const std::size_t step = std::max<std::size_t>(1, (boxes.size() + kBlocks - 1) / kBlocks);
  for (std::size_t i = 0; i < boxes.size(); i += step) {
    const Box& x = boxes[i];
    for (std::size_t xx : {x.x0, x.x0 + 1, x.x1 - 2, x.x1 - 1})
      for (std::size_t yy : {x.y0, x.y1 - 1})
        for (std::size_t zz : {x.z0, x.z1 - 1}) add(xx, yy, zz);
  }
  // Around the source, where the wave is not zero from the first step on.
  const long c1 = static_cast<long>(g.n1) / 4, c2 = static_cast<long>(g.n2) / 4, c3 = static_cast<long>(g.n3) / 2;
  for (long dz : kSourceOffsets)
    for (long dy : kSourceOffsets)
      for (long dx : {-5L, 0L, 4L})
        if (c1 + dx >= 0 && c2 + dy >= 0 && c3 + dz >= 0)
          add(static_cast<std::size_t>(c1 + dx), static_cast<std::size_t>(c2 + dy), static_cast<std::size_t>(c3 + dz));
  index_.assign(picked.begin(), picked.end());
  older_.resize(index_.size());
}

void SelfCheck::before_last_step(const Fields& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t s = 0; s < index_.size(); ++s) older_[s] = f.next[index_[s]];
  kept_ = true;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool SelfCheck::after_last_step(const Fields& f, const Coefficients& c) {
  if (!kept_) return true;
  checked_ = true;
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t sy = g_.pitch(), sz = g_.plane();
  const float* p = f.next;  // the field of the step before: the last step read it and did not write it
  for (std::size_t s = 0; s < index_.size(); ++s) {
    const std::size_t i = index_[s];
    double lap = c[0] * static_cast<double>(p[i]);
    double size = std::fabs(lap);
    for (std::size_t k = 1; k <= g_.halo(); ++k) {
      const double sum =
          static_cast<double>(p[i + k]) + p[i - k] + p[i + k * sy] + p[i - k * sy] + p[i + k * sz] + p[i - k * sz];
      const double mag = std::fabs(p[i + k]) + std::fabs(p[i - k]) + std::fabs(p[i + k * sy]) +
                         std::fabs(p[i - k * sy]) + std::fabs(p[i + k * sz]) + std::fabs(p[i - k * sz]);
      lap += c[k] * sum;
      size += std::fabs(c[k]) * mag;
    }
    const double vel = f.vel[i];
    const double expected = 2.0 * p[i] - older_[s] + vel * lap;
    const double scale = 2.0 * std::fabs(p[i]) + std::fabs(older_[s]) + std::fabs(vel) * size;
    const double err = std::fabs(static_cast<double>(f.prev[i]) - expected);
    const double rel = err <= kFloor ? 0.0 : scale > 0 ? err / scale : INFINITY;  // denormal noise is no error
    if (!(err <= kTolerance * scale + kFloor)) ++wrong_;                          // also counts NaN
    if (!(rel <= max_rel_)) {
      max_rel_ = std::isnan(rel) ? INFINITY : rel;
      worst_ = i;
    }
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return passed();
}

json SelfCheck::to_json() const {
  json out = {{"checked", checked_}, {"points", checked_ ? index_.size() : 0}};
  if (checked_) {
    out["passed"] = passed();
    out["wrong"] = wrong_;
    out["max_rel_error"] = max_rel_;
    out["tolerance"] = kTolerance;
    out["seconds"] = seconds_;
    out["method"] =
        "sampled points of the last step (a lattice reaching the halo, block edges, the source) recomputed with the "
        "scalar formula from the step before, error relative to the magnitude of the formula's terms";
  }
  return out;
}

std::string SelfCheck::failure_message() const {
  const std::size_t p = g_.pitch();
  const std::size_t x = worst_ % p, y = worst_ % g_.plane() / p, z = worst_ / g_.plane();
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "self-check failed: %zu of %zu sampled points of the last step differ from the scalar formula "
                "(worst at x=%zu y=%zu z=%zu, relative error %.3e, tolerance %.1e)",
                wrong_, index_.size(), x, y, z, max_rel_, kTolerance);
  return buf;
}

}  // namespace bw::iso3dfd
