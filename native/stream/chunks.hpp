// Chunk functions of the STREAM kernels and the kernel table, written once for the vector type of
// the file that includes this header (stream/simd.hpp); each instruction-set variant
// (kernels_avx512.cpp, kernels_avx2.cpp, kernels_generic.cpp) includes it once, compiled with its
// own target flags. Each chunk function aligns the written array with a scalar head, runs an
// unrolled vector body with non-temporal or regular stores, and finishes with a scalar tail.
#pragma once
#include "stream/kernels.hpp"
#include "stream/simd.hpp"

namespace bw::stream {
namespace {

using V = simd::VecD;
constexpr std::size_t L = V::lanes;
constexpr std::size_t kUnroll = 4;

template <bool NT>
inline void put(double* p, V::T v) {
  if constexpr (NT)
    V::stream(p, v);
  else
    V::store(p, v);
}

// Elements before dst + begin reaches vector alignment (never more than end - begin).
inline std::size_t head_end(const double* dst, std::size_t begin, std::size_t end) {
  std::size_t i = begin;
  while (i < end && !simd::aligned(dst + i)) ++i;
  return i;
}

// Runs body(i) for full unrolled blocks, then single vectors, from i to the last full vector;
// returns where the scalar tail starts.
template <class Body>
inline std::size_t vector_loop(std::size_t i, std::size_t end, Body body) {
  for (; i + kUnroll * L <= end; i += kUnroll * L)
    for (std::size_t u = 0; u < kUnroll; ++u) body(i + u * L);
  for (; i + L <= end; i += L) body(i);
  return i;
}

template <bool NT>
double copy(const Arrays& x, std::size_t begin, std::size_t end, double) {
  double* __restrict c = x.c;
  const double* __restrict a = x.a;
  std::size_t i = begin, h = head_end(c, begin, end);
  for (; i < h; ++i) c[i] = a[i];
  i = vector_loop(i, end, [&](std::size_t j) { put<NT>(c + j, V::load(a + j)); });
  for (; i < end; ++i) c[i] = a[i];
  if constexpr (NT) _mm_sfence();
  return 0.0;
}

template <bool NT>
double scale(const Arrays& x, std::size_t begin, std::size_t end, double s) {
  double* __restrict b = x.b;
  const double* __restrict c = x.c;
  const V::T vs = V::set1(s);
  std::size_t i = begin, h = head_end(b, begin, end);
  for (; i < h; ++i) b[i] = s * c[i];
  i = vector_loop(i, end, [&](std::size_t j) { put<NT>(b + j, V::mul(vs, V::load(c + j))); });
  for (; i < end; ++i) b[i] = s * c[i];
  if constexpr (NT) _mm_sfence();
  return 0.0;
}

template <bool NT>
double add(const Arrays& x, std::size_t begin, std::size_t end, double) {
  double* __restrict c = x.c;
  const double* __restrict a = x.a;
  const double* __restrict b = x.b;
  std::size_t i = begin, h = head_end(c, begin, end);
  for (; i < h; ++i) c[i] = a[i] + b[i];
  i = vector_loop(i, end, [&](std::size_t j) { put<NT>(c + j, V::add(V::load(a + j), V::load(b + j))); });
  for (; i < end; ++i) c[i] = a[i] + b[i];
  if constexpr (NT) _mm_sfence();
  return 0.0;
}

template <bool NT>
double triad(const Arrays& x, std::size_t begin, std::size_t end, double s) {
  double* __restrict a = x.a;
  const double* __restrict b = x.b;
  const double* __restrict c = x.c;
  const V::T vs = V::set1(s);
  std::size_t i = begin, h = head_end(a, begin, end);
  for (; i < h; ++i) a[i] = b[i] + s * c[i];
  i = vector_loop(i, end, [&](std::size_t j) { put<NT>(a + j, V::fma(vs, V::load(c + j), V::load(b + j))); });
  for (; i < end; ++i) a[i] = b[i] + s * c[i];
  if constexpr (NT) _mm_sfence();
  return 0.0;
}

// BabelStream's nstream: a accumulates over the repetitions (its validation replays every one).
template <bool NT>
double nstream(const Arrays& x, std::size_t begin, std::size_t end, double s) {
  double* __restrict a = x.a;
  const double* __restrict b = x.b;
  const double* __restrict c = x.c;
  const V::T vs = V::set1(s);
  std::size_t i = begin, h = head_end(a, begin, end);
  for (; i < h; ++i) a[i] += b[i] + s * c[i];
  i = vector_loop(i, end, [&](std::size_t j) {
    put<NT>(a + j, V::add(V::load(a + j), V::fma(vs, V::load(c + j), V::load(b + j))));
  });
  for (; i < end; ++i) a[i] += b[i] + s * c[i];
  if constexpr (NT) _mm_sfence();
  return 0.0;
}

// The dot kernel in steps (kernels.hpp, DotSteps), which the pipeline also takes block by block:
// four accumulators per unrolled block hide the add latency; a does the aligning. The steps are
// never inlined nor cloned (noipa): the compiler may contract and order an inlined copy's additions
// otherwise (it did at AVX2), and the pipeline's sum must equal the CPU-only kernel's to the last
// bit, so both run the same machine code.
[[gnu::noipa]] void dot_scalar(DotState& s, const double* a, const double* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) s.sum += a[i] * b[i];
}

[[gnu::noipa]] void dot_body(DotState& s, const double* a, const double* b, std::size_t n, bool last) {
  V::T acc[kUnroll];
  for (std::size_t u = 0; u < kUnroll; ++u) acc[u] = V::load(s.acc + u * L);
  std::size_t i = 0;
  for (; i + kUnroll * L <= n; i += kUnroll * L)
    for (std::size_t u = 0; u < kUnroll; ++u) acc[u] = V::fma(V::load(a + i + u * L), V::load(b + i + u * L), acc[u]);
  if (last) {
    for (; i + L <= n; i += L) acc[0] = V::fma(V::load(a + i), V::load(b + i), acc[0]);
    for (; i < n; ++i) s.sum += a[i] * b[i];
  }
  for (std::size_t u = 0; u < kUnroll; ++u) V::store(s.acc + u * L, acc[u]);
}

[[gnu::noipa]] double dot_total(const DotState& s) {
  V::T acc[kUnroll];
  for (std::size_t u = 0; u < kUnroll; ++u) acc[u] = V::load(s.acc + u * L);
  return s.sum + V::sum(V::add(V::add(acc[0], acc[1]), V::add(acc[2], acc[3])));
}

constexpr DotSteps kDotSteps{dot_scalar, dot_body, dot_total};

double dot(const Arrays& x, std::size_t begin, std::size_t end, double) {
  const std::size_t h = head_end(x.a, begin, end);
  DotState s;
  dot_scalar(s, x.a + begin, x.b + begin, h - begin);
  dot_body(s, x.a + h, x.b + h, end - h, true);
  return dot_total(s);
}

// Compile-time constant: no code of a variant file may run before the CPU is known to have its
// instruction set.
constinit const Kernel kTable[] = {
    {"copy", "c[i] = a[i]", 16, 8, 0, true, false, true, 'c', copy<true>, copy<false>,
     [](double& a, double&, double& c, double) { c = a; }},
    {"scale", "b[i] = s * c[i]", 16, 8, 1, false, true, true, 'b', scale<true>, scale<false>,
     [](double&, double& b, double& c, double s) { b = s * c; }},
    {"add", "c[i] = a[i] + b[i]", 24, 8, 1, true, true, true, 'c', add<true>, add<false>,
     [](double& a, double& b, double& c, double) { c = a + b; }},
    {"triad", "a[i] = b[i] + s * c[i]", 24, 8, 2, true, true, true, 'a', triad<true>, triad<false>,
     [](double& a, double& b, double& c, double s) { a = b + s * c; }},
    {"nstream", "a[i] += b[i] + s * c[i]", 32, 0, 3, true, true, true, 'a', nstream<true>, nstream<false>,
     [](double& a, double& b, double& c, double s) { a += b + s * c; }},
    {"dot", "sum += a[i] * b[i]", 16, 0, 2, true, true, false, 0, dot, dot, [](double&, double&, double&, double) {}},
};

}  // namespace

}  // namespace bw::stream
