// The avx512 variant of the FMA chains (peak/chain.hpp), built with its own target flags.
#include "peak/chain.hpp"
#if !defined(__AVX512F__)
#error "chain_avx512.cpp needs -mavx512f (CMake builds it with the AVX-512 flags)"
#endif

namespace bw::peak {

extern const Variant kPeakAvx512;
constinit const Variant kPeakAvx512{"avx512", kVectorBits, kFma, VD::n, kAccumulators, &chain_dp, &chain_sp};

}  // namespace bw::peak
