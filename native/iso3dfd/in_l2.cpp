#include "iso3dfd/in_l2.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace bw::iso3dfd {

namespace {

// Rows of the block at most, and at least before its rows are cut shorter, and planes at least (a
// multiple of the shape's): enough that a call's rows outnumber its entry and its halos do not
// dominate it.
constexpr std::size_t kMaxRows = 16, kMinRows = 4, kMinPlanes = 8;
// Rows are not cut shorter than this many floats (four AVX-512 vectors).
constexpr std::size_t kMinRowFloats = 64;
// Each timing calls the block function until this long has passed; the best of kTimings counts.
constexpr double kTimingSeconds = 0.002;
constexpr int kTimings = 5;

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Array = std::unique_ptr<float[], FreeDeleter>;

Array page_aligned(std::size_t bytes) {
  const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
  auto* p = static_cast<float*>(std::aligned_alloc(4096, rounded));
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return Array(p);
}

// The layout a run of these extents takes by default (row and plane padding, the lead and the offset
// between arrays), so the block's rows meet the kernel as the run's do.
Grid block_grid(std::size_t nx, std::size_t ny, std::size_t nz, int radius) {
  Grid g;
  g.radius = radius;
  const std::size_t h = g.halo();
  g.n1 = nx + 2 * h, g.n2 = ny + 2 * h, g.n3 = nz + 2 * h;
  g.p1 = padded_pitch(g.n1);
  g.p2 = padded_plane(g.p1, g.n2);
  g.lead = line_lead(g.p1, radius);
  g.offset = kArrayOffset;
  return g;
}

// The bytes a call on the block brings into cache: prev with its halos, and the rows of next and vel it
// reads and writes (their halos are never touched), in whole cache lines. At radius 7 and 8 counting the
// halos of next and vel too left no block of 64-float rows in half of a 512 KiB L2.
std::size_t touched_bytes(const Grid& g, std::size_t nx, std::size_t ny, std::size_t nz) {
  const std::size_t row_lines = (nx * sizeof(float) + 63) / 64 + 1;
  return array_bytes(g, 0) + 2 * ny * nz * row_lines * 64;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

KernelInL2 kernel_in_l2(const RowShape& shape, const Grid& run, std::uint64_t l2_bytes) {
  KernelInL2 out;
  const int r = run.radius;
  const BoxFn box = shape.box(r);
  const RowVariant* generic = find_row_variant("generic");
  if (!box || !generic) {
    out.unavailable = "the shape is not compiled for radius " + std::to_string(r);
    return out;
  }
  if (l2_bytes == 0) {
    out.unavailable = "the L2 size of this core is unknown";
    return out;
  }
  const std::size_t planes = static_cast<std::size_t>(std::max(shape.planes, 1));
  const std::size_t nz = (kMinPlanes + planes - 1) / planes * planes;
  const std::size_t h = static_cast<std::size_t>(r);
  // the run's rows, halved (whole lines) while even kMinRows rows do not fit; then fewer rows
  const auto fits = [&](std::size_t x, std::size_t y) {
    return touched_bytes(block_grid(x, y, nz, r), x, y, nz) <= l2_bytes / 2;
  };
  std::size_t nx = run.n1 > 2 * h ? run.n1 - 2 * h : 0, ny = kMaxRows;
  while (nx / 2 >= kMinRowFloats && !fits(nx, kMinRows)) nx = nx / 2 / 16 * 16;
  while (ny > 1 && !fits(nx, ny)) --ny;
  const Grid g = block_grid(nx, ny, nz, r);
  if (touched_bytes(g, nx, ny, nz) > l2_bytes / 2 || radius_path(g) != "templated") {
    out.unavailable = "no block of these rows fits in half of L2 with whole vectors";
    return out;
  }
  out.nx = nx, out.ny = ny, out.nz = nz, out.bytes = touched_bytes(g, nx, ny, nz);

  Array a[3] = {page_aligned(array_bytes(g, 0)), page_aligned(array_bytes(g, 1)), page_aligned(array_bytes(g, 2))};
  float* prev = a[0].get() + g.lead_of(0);
  float* next = a[1].get() + g.lead_of(1);
  float* vel = a[2].get() + g.lead_of(2);
  const std::size_t n = g.points();
  // values of order one that vary from point to point, so the stencil's terms weigh in the update and
  // the check sees them (a smooth field's Laplacian vanishes below the update's rounding)
  std::uint32_t state = 2463534242u;
  const auto draw = [&state] {
    state ^= state << 13, state ^= state >> 17, state ^= state << 5;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
  };
  for (std::size_t i = 0; i < n; ++i) prev[i] = draw(), next[i] = draw(), vel[i] = 0.1f * draw();
  const Box b{h, h + nx, h, h + ny, h, h + nz};
  const Coefficients c = coefficients(r);
  flush_denormals();

  // one step by the generic variant's loops and by the shape, from the same next
  Array check = page_aligned(array_bytes(g, 1));
  float* ref = check.get() + g.lead_of(1);
  std::memcpy(ref, next, n * sizeof(float));
  generic->shapes[0].box(r)(c, prev, ref, vel, g, b);
  box(c, prev, next, vel, g, b);
  out.max_rel_difference = compare(next, ref, n).max_rel;
  if (!(out.max_rel_difference <= 1e-5))
    throw std::runtime_error("the row kernel in L2 differs from the generic loops by " +
                             std::to_string(out.max_rel_difference) + " of the norm at radius " + std::to_string(r));

  // the update alternates next between two values (next' = 2 prev + vel lap(prev) - next): no drift
  const double points = static_cast<double>(nx * ny * nz);
  double best = 0;
  for (int t = 0; t < kTimings; ++t) {
    long calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double s = 0;
    do {
      for (int k = 0; k < 8; ++k) box(c, prev, next, vel, g, b);
      calls += 8;
      s = seconds_since(t0);
    } while (s < kTimingSeconds);
    const double per_point = s / (points * static_cast<double>(calls));
    if (best == 0 || per_point < best) best = per_point;
  }
  out.seconds_per_point = best;
  return out;
}

}  // namespace bw::iso3dfd
