// The grid's dimensions as the command lines of bandwall-iso3dfd and bandwall-iso3dfd-mpi take them.
#include <string>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

std::size_t parse_dimension(const std::string& text, const char* name) {
  const long v = parse_int(text, name, 0, kMaxDim);
  if (v < static_cast<long>(kMinDim))
    throw UsageError(std::string(name) + " '" + text + "' is below the minimum " + std::to_string(kMinDim) +
                     " (2*HALF_LENGTH+1: the halo of 8 on each side and one interior point)");
  return static_cast<std::size_t>(v);
}

}  // namespace bw::iso3dfd
