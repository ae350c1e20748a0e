// The three arrays of an ISO3DFD grid held by the native tests (plain vectors, no placement).
#pragma once
#include <vector>

#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd::test_support {

// Each array g.lead floats before its first point, as the executables lay them out.
struct Arrays {
  std::size_t lead;
  std::vector<float> prev, next, vel;
  explicit Arrays(const Grid& g)
      : lead(g.lead), prev(g.lead + g.points()), next(g.lead + g.points()), vel(g.lead + g.points()) {}
  Fields fields() { return Fields{prev.data() + lead, next.data() + lead, vel.data() + lead}; }
};

}  // namespace bw::iso3dfd::test_support
