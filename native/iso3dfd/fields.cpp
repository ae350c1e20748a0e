// Coefficients, block decomposition, initialisation (serial and first-touch), norms.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

std::array<double, kMaxRadius + 1> fd_weights(int radius) {
  // Fornberg's weights of the second derivative on the 2R+1 points -R .. R, in the closed form the
  // recursion gives for a centred stencil: w[k] = 2 (-1)^(k+1) (R!)^2 / (k^2 (R-k)! (R+k)!), and
  // the centre makes the weights sum to zero.
  std::array<double, kMaxRadius + 1> w{};
  for (int k = 1; k <= radius; ++k) {
    double ratio = 1;  // (R!)^2 / ((R-k)! (R+k)!) = prod_{j=1..k} (R-k+j) / (R+j)
    for (int j = 1; j <= k; ++j) ratio *= static_cast<double>(radius - k + j) / (radius + j);
    w[static_cast<std::size_t>(k)] = (k % 2 ? 2.0 : -2.0) * ratio / (static_cast<double>(k) * k);
    w[0] -= 2 * w[static_cast<std::size_t>(k)];
  }
  return w;
}

Coefficients coefficients(int radius) {
  // The seed prints its 16th-order weights to 8 digits (and its 4th, 7.572087e-2, is not the exact
  // 7.542087e-2): kept, so that the seed's command line gives the seed's output.
  constexpr double kSeed[kSeedRadius + 1] = {-3.0548446,  1.7777778,    -3.1111111e-1, 7.572087e-2, -1.76767677e-2,
                                             3.480962e-3, -5.180005e-4, 5.074287e-5,   -2.42812e-6};
  std::array<double, kMaxRadius + 1> c = fd_weights(radius);
  if (radius == kSeedRadius) std::copy(std::begin(kSeed), std::end(kSeed), c.begin());
  const double scale = 1.0 / (static_cast<double>(kDxyz) * kDxyz);
  Coefficients out{};
  out[0] = static_cast<float>(3.0 * c[0] * scale);
  for (int k = 1; k <= radius; ++k) out[static_cast<std::size_t>(k)] = static_cast<float>(c[k] * scale);
  return out;
}

std::size_t array_bytes(const Grid& g, int k) { return (g.lead_of(k) + g.points()) * sizeof(float); }

std::size_t arrays_bytes(const Grid& g) { return array_bytes(g, 0) + array_bytes(g, 1) + array_bytes(g, 2); }

Fields fields_in(const Buffer& prev, const Buffer& next, const Buffer& vel, const Grid& g) {
  return Fields{prev.as<float>() + g.lead_of(0), next.as<float>() + g.lead_of(1), vel.as<float>() + g.lead_of(2)};
}

std::vector<std::size_t> x_cuts(const Grid& g, std::size_t b1) {
  // Cuts at multiples of b1 from the row's start (the first block is the shorter): with a row
  // length and b1 that are multiples of the vector width, every block but the first and last
  // starts and ends on a vector boundary of the row kernel, so no vector is computed twice. A last
  // piece shorter than half a block joins the block before it.
  // Counted from the start of the 64-byte line at or before the interior's first point, where rows
  // start on lines (x = 0 on one, or the interior's first point with a lead).
  const std::size_t h = g.halo(), o = h - std::min(h, (g.lead + h) % 16);
  std::vector<std::size_t> xs{h};
  for (std::size_t x = o + ((h - o) / b1 + 1) * b1; x < g.n1 - h; x += b1) xs.push_back(x);
  if (xs.size() > 1 && 2 * (g.n1 - h - xs.back()) < b1) xs.pop_back();
  xs.push_back(g.n1 - h);
  return xs;
}

std::vector<Box> decompose_planes(const Grid& g, const Blocks& b, std::size_t z0, std::size_t z1, bool to_edges) {
  std::vector<Box> out;
  const std::size_t h = g.halo();
  const std::vector<std::size_t> xs = x_cuts(g, b.b1);
  for (std::size_t z = z0; z < z1; z += b.b3)
    for (std::size_t y = h; y < g.n2 - h; y += b.b2)
      for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
        Box box{xs[i], xs[i + 1], y, std::min(y + b.b2, g.n2 - h), z, std::min(z + b.b3, z1)};
        if (to_edges) {
          if (box.x0 == h) box.x0 = 0;
          if (box.y0 == h) box.y0 = 0;
          if (box.z0 == h) box.z0 = 0;
          if (box.x1 == g.n1 - h) box.x1 = g.n1;
          if (box.y1 == g.n2 - h) box.y1 = g.n2;
          if (box.z1 == g.n3 - h) box.z1 = g.n3;
        }
        out.push_back(box);
      }
  return out;
}

std::vector<Box> decompose(const Grid& g, const Blocks& b, bool to_edges) {
  return decompose_planes(g, b, g.halo(), g.n3 - g.halo(), to_edges);
}

std::vector<std::size_t> slabs(const Grid& g, int threads) {
  const std::size_t t = static_cast<std::size_t>(std::max(threads, 1)), planes = g.n3 - 2 * g.halo();
  std::vector<std::size_t> s(t + 1);
  for (std::size_t i = 0; i <= t; ++i) s[i] = g.halo() + planes * i / t;
  return s;
}

namespace {

void init_box(const Fields& f, const Grid& g, const Box& b) {
  for (std::size_t z = b.z0; z < b.z1; ++z)
    for (std::size_t y = b.y0; y < b.y1; ++y) {
      std::size_t row = g.index(0, y, z);
      for (std::size_t x = b.x0; x < b.x1; ++x) {
        f.prev[row + x] = 0.0f;
        f.next[row + x] = 0.0f;
        f.vel[row + x] = kVelocity;
      }
    }
}

}  // namespace

void add_source(float* prev, const Grid& g) {
  // The seed's nested cubes: s = 5 .. 1 writes 1, 10, 100, 1000, 1e4 into [c-s, c+s).
  const long lo = g.radius;
  float val = 1.0f;
  for (long s = 5; s >= 0; --s) {
    const long c3 = static_cast<long>(g.n3) / 2, c2 = static_cast<long>(g.n2) / 4, c1 = static_cast<long>(g.n1) / 4;
    for (long z = std::max(c3 - s, lo); z < std::min(c3 + s, static_cast<long>(g.n3) - lo); ++z)
      for (long y = std::max(c2 - s, lo); y < std::min(c2 + s, static_cast<long>(g.n2) - lo); ++y)
        for (long x = std::max(c1 - s, lo); x < std::min(c1 + s, static_cast<long>(g.n1) - lo); ++x)
          prev[g.index(static_cast<std::size_t>(x), static_cast<std::size_t>(y), static_cast<std::size_t>(z))] = val;
    val *= 10.0f;
  }
}

double window_bytes(const Grid& g, const Blocks& b, int planes) {
  const double h = 2.0 * g.radius;
  const double b1 = static_cast<double>(std::min(b.b1, g.n1 - 2 * g.halo()));
  const double b2 = static_cast<double>(std::min(b.b2, g.n2 - 2 * g.halo()));
  return (b1 + h) * (b2 + h) * (h + planes) * sizeof(float);
}

bw::PageSplit initialise(const Fields& f, const Grid& g, const Blocks& b, bool serial, int threads) {
  bw::PageSplit split;
  if (serial) {
    init_box(f, g, Box{0, g.n1, 0, g.n2, 0, g.n3});
    split.mode = "serial";
  } else {
    const auto s = slabs(g, threads);
    // Thread t touches planes [s[t], s[t+1]), the first and last thread the halo planes too.
    // from each buffer's start (page-aligned), before the array's lead; the record sums the three
    // arrays' huge pages split (offset from one another, next's and vel's cuts may fall inside a
    // huge page where prev's fall on a boundary) and keeps the mode of the most split
    int k = 0, pages_split = 0;
    for (float* a : {f.prev, f.next, f.vel}) {
      std::vector<std::size_t> cuts;
      for (std::size_t t = 1; t + 1 < s.size(); ++t) cuts.push_back((g.lead_of(k) + s[t] * g.plane()) * sizeof(float));
      const bw::PageSplit one = bw::split_pages_at(a - g.lead_of(k), array_bytes(g, k), cuts);
      pages_split += one.pages_split;
      if (k == 0 || one.pages_split > split.pages_split || one.mode.rfind("base pages throughout", 0) == 0) split = one;
      ++k;
    }
    split.pages_split = pages_split;
#pragma omp parallel num_threads(threads)
    {
      // By the team's real size (as run() does), which OMP_THREAD_LIMIT may make smaller.
      const auto mine = slabs(g, omp_get_num_threads());
      const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
      for (const Box& box : decompose_planes(g, b, mine[t], mine[t + 1], true)) init_box(f, g, box);
    }
  }
  add_source(f.prev, g);
  return split;
}

double l2_norm(const float* a, std::size_t n) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * a[i];
  return std::sqrt(sum);
}

Difference compare(const float* a, const float* ref, std::size_t n) {
  double max_abs = 0, max_ref = 0;
#pragma omp parallel for reduction(max : max_abs, max_ref) schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(a[i]) - ref[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  Difference d;
  d.max_abs = max_abs;
  d.max_rel = max_ref > 0 ? max_abs / max_ref : max_abs;
  return d;
}

}  // namespace bw::iso3dfd
