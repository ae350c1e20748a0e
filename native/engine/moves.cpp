#include "engine/moves.hpp"

#include <cstdint>
#include <cstring>

#include "stream/simd.hpp"

namespace bw::engine {

void cached_copy(void* dst, const void* src, std::size_t bytes) {
  using V = simd::VecD;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Head up to the destination's vector alignment, then aligned vector stores, then the rest.
  std::size_t head = (simd::kVecBytes - reinterpret_cast<std::uintptr_t>(d) % simd::kVecBytes) % simd::kVecBytes;
  if (head > bytes) head = bytes;
  std::memcpy(d, s, head);
  std::size_t i = head;
  constexpr std::size_t step = 4 * simd::kVecBytes;
  for (; i + step <= bytes; i += step) {
    auto v0 = V::load(reinterpret_cast<const double*>(s + i));
    auto v1 = V::load(reinterpret_cast<const double*>(s + i + simd::kVecBytes));
    auto v2 = V::load(reinterpret_cast<const double*>(s + i + 2 * simd::kVecBytes));
    auto v3 = V::load(reinterpret_cast<const double*>(s + i + 3 * simd::kVecBytes));
    V::store(reinterpret_cast<double*>(d + i), v0);
    V::store(reinterpret_cast<double*>(d + i + simd::kVecBytes), v1);
    V::store(reinterpret_cast<double*>(d + i + 2 * simd::kVecBytes), v2);
    V::store(reinterpret_cast<double*>(d + i + 3 * simd::kVecBytes), v3);
  }
  std::memcpy(d + i, s + i, bytes - i);
}

std::size_t touch(const void* src, std::size_t bytes) {
  const auto* s = static_cast<const unsigned char*>(src);
  std::size_t acc = 0;
  // Eight independent lines per iteration keep many misses in flight.
  std::size_t i = 0;
  for (; i + 8 * kLine <= bytes; i += 8 * kLine)
    for (std::size_t u = 0; u < 8; ++u) acc += s[i + u * kLine];
  for (; i < bytes; i += kLine) acc += s[i];
  if (bytes) acc += s[bytes - 1];  // the last line when src is not line aligned
  return acc;
}

}  // namespace bw::engine
