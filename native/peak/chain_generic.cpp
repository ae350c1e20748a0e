// The generic variant of the FMA chains: the widest vectors of the build's own baseline (-march);
// every CPU that runs the binary runs it.
#include "peak/chain.hpp"

namespace bw::peak {

extern const Variant kPeakGeneric;
constinit const Variant kPeakGeneric{"generic", kVectorBits, kFma, VD::n, kAccumulators, &chain_dp, &chain_sp};

}  // namespace bw::peak
