// The three arrays of an ISO3DFD grid held by the native tests (plain vectors, no placement).
#pragma once
#include <vector>

#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd::test_support {

struct Arrays {
  std::vector<float> prev, next, vel;
  explicit Arrays(const Grid& g) : prev(g.points()), next(g.points()), vel(g.points()) {}
  Fields fields() { return Fields{prev.data(), next.data(), vel.data()}; }
};

}  // namespace bw::iso3dfd::test_support
