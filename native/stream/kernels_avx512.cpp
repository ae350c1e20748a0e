// The avx512 variant of the STREAM kernels (stream/chunks.hpp), built with its own target flags.
#include "stream/chunks.hpp"
#if !defined(__AVX512F__)
#error "kernels_avx512.cpp needs -mavx512f (CMake builds it with the AVX-512 flags)"
#endif

namespace bw::stream {

extern const Variant kStreamAvx512;
constinit const Variant kStreamAvx512{"avx512", 8 * static_cast<int>(simd::kVecBytes), kTable,
                                      static_cast<int>(std::size(kTable)), kDotSteps};

}  // namespace bw::stream
