// The data movements the software engines perform: a copy with regular (cache-allocating)
// stores, so the destination stays in the cache, and a touch that loads one word per cache line.
#pragma once
#include <cstddef>

namespace bw::engine {

inline constexpr std::size_t kLine = 64;

// Copies bytes from src to dst with regular stores (never non-temporal, unlike a large memcpy).
void cached_copy(void* dst, const void* src, std::size_t bytes);

// Loads one word of every cache line of [src, src + bytes); returns a value that depends on them
// so the loads cannot be dropped.
std::size_t touch(const void* src, std::size_t bytes);

}  // namespace bw::engine
