// The generic variant of the row kernel: the plain loops, vectorised by the compiler for the
// build's baseline (-march); every x86-64 CPU that runs the binary runs it.
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {
namespace {

void box(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g, const Box& b) {
  const std::size_t sy = g.n1, sz = g.n1 * g.n2, r = g.halo();
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

constexpr RowShape kShapes[] = {{.planes = 1, .vectors = 1, .any_radius = &box}};

}  // namespace

extern const RowVariant kRowsGeneric;
constinit const RowVariant kRowsGeneric{
    "generic", 1, "plain loops vectorised by the compiler (omp simd) for the build's -march", kShapes, 1};

}  // namespace bw::iso3dfd
