// The avx2 variant of the STREAM kernels (stream/chunks.hpp), built with its own target flags.
#include "stream/chunks.hpp"
#if !defined(__AVX2__) || !defined(__FMA__) || defined(__AVX512F__)
#error "kernels_avx2.cpp needs -mavx2 -mfma -mno-avx512f (CMake builds it with them)"
#endif

namespace bw::stream {

extern const Variant kStreamAvx2;
constinit const Variant kStreamAvx2{"avx2", 8 * static_cast<int>(simd::kVecBytes), kTable,
                                    static_cast<int>(std::size(kTable)), kDotSteps};

}  // namespace bw::stream
