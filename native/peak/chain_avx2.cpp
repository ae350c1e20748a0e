// The avx2 variant of the FMA chains (peak/chain.hpp), built with its own target flags.
#include "peak/chain.hpp"
#if !defined(__AVX2__) || !defined(__FMA__) || defined(__AVX512F__)
#error "chain_avx2.cpp needs -mavx2 -mfma -mno-avx512f (CMake builds it with them)"
#endif

namespace bw::peak {

extern const Variant kPeakAvx2;
constinit const Variant kPeakAvx2{"avx2", kVectorBits, kFma, VD::n, kAccumulators, &chain_dp, &chain_sp};

}  // namespace bw::peak
