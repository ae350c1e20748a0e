// The generic variant of the row kernel: the plain loops, vectorised by the compiler for the
// build's baseline (-march); every x86-64 CPU that runs the binary runs it. The radius is a
// compile-time constant, for every radius from 1 to kMaxRadius (the loop over distances unrolls):
// these loops are also what a vector variant runs at a radius it is not compiled for.
#include <array>
#include <utility>

#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {
namespace {

template <int R>
void box_at(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g, const Box& b) {
  const std::size_t sy = g.pitch(), sz = g.plane(), r = R;
  for (std::size_t z = b.z0; z < b.z1; ++z)
    for (std::size_t y = b.y0; y < b.y1; ++y) {
      const std::size_t base = g.index(0, y, z);
      const float* __restrict p = prev + base;
      float* __restrict n = next + base;
      const float* __restrict v = vel + base;
#pragma omp simd
      for (std::size_t x = b.x0; x < b.x1; ++x) {
        float lap = c[0] * p[x];
        for (std::size_t k = 1; k <= r; ++k)
          lap += c[k] * (p[x + k] + p[x - k] + p[x + k * sy] + p[x - k * sy] + p[x + k * sz] + p[x - k * sz]);
        n[x] = 2.0f * p[x] - n[x] + v[x] * lap;
      }
    }
}

// box_at<R> for R = 1 .. kMaxRadius, at index R - 1.
template <std::size_t... I>
constexpr std::array<BoxFn, sizeof...(I)> boxes(std::index_sequence<I...>) {
  return {&box_at<static_cast<int>(I) + 1>...};
}
constexpr auto kBoxes = boxes(std::make_index_sequence<kMaxRadius>{});

void box(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g, const Box& b) {
  kBoxes[static_cast<std::size_t>(g.radius - 1)](c, prev, next, vel, g, b);
}

constexpr RowShape kShapes[] = {{.planes = 1, .vectors = 1, .any_radius = &box}};

}  // namespace

extern const RowVariant kRowsGeneric;
constinit const RowVariant kRowsGeneric{
    "generic", 1, "plain loops vectorised by the compiler (omp simd) for the build's -march", kShapes, 1};

}  // namespace bw::iso3dfd
