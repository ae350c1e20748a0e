// The plain reference: the stencil written point by point, unblocked, one thread. It is what
// --verify and the tests compare the optimised kernel with, and the "plain implementation" of
// the benchmark.
#include <utility>

#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

void run_reference(Fields& f, const Grid& g, int steps, const Coefficients& c) {
  flush_denormals();
  const std::size_t sy = g.pitch(), sz = g.plane(), h = g.halo();
  for (int t = 0; t < steps; ++t) {
    for (std::size_t z = h; z < g.n3 - h; ++z)
      for (std::size_t y = h; y < g.n2 - h; ++y)
        for (std::size_t x = h; x < g.n1 - h; ++x) {
          const std::size_t i = g.index(x, y, z);
          float lap = c[0] * f.prev[i];
          for (std::size_t k = 1; k <= h; ++k)
            lap += c[k] * (f.prev[i + k] + f.prev[i - k] + f.prev[i + k * sy] + f.prev[i - k * sy] +
                           f.prev[i + k * sz] + f.prev[i - k * sz]);
          f.next[i] = 2.0f * f.prev[i] - f.next[i] + f.vel[i] * lap;
        }
    std::swap(f.prev, f.next);
  }
}

}  // namespace bw::iso3dfd
