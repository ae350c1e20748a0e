// The generic variant of the STREAM kernels: the widest vectors of the build's own baseline (-march);
// every CPU that runs the binary runs it.
#include "stream/chunks.hpp"

namespace bw::stream {

extern const Variant kStreamGeneric;
constinit const Variant kStreamGeneric{"generic", 8 * static_cast<int>(simd::kVecBytes), kTable,
                                       static_cast<int>(std::size(kTable)), kDotSteps};

}  // namespace bw::stream
