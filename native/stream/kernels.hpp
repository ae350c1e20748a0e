// The STREAM kernels as one table: what each computes, the bytes and flops it moves per element,
// and its chunk functions with non-temporal and regular stores. Adding a kernel is adding a row.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace bw::stream {

struct Arrays {
  double* a = nullptr;
  double* b = nullptr;
  double* c = nullptr;
};

// Processes elements [begin, end) of every array; returns the partial sum for dot, 0 otherwise.
using ChunkFn = double (*)(const Arrays&, std::size_t begin, std::size_t end, double scalar);
// The same operation on one element triple, the reference the validation replays.
using ScalarFn = void (*)(double& a, double& b, double& c, double scalar);

struct Kernel {
  std::string_view name;
  std::string_view formula;
  // STREAM counting: bytes read plus bytes written per element, without write-allocate.
  double bytes_per_element;
  // Bytes regular (cached) stores add per element: the line of the written array is read first.
  // Non-temporal stores avoid it; kernels that do not store have none.
  double write_allocate_bytes_per_element;
  double flops_per_element;
  bool uses_a, uses_b, uses_c;
  char writes;  // 'a', 'b', 'c', or 0 for dot (writes nothing, returns a sum)
  ChunkFn nt;
  ChunkFn regular;
  ScalarFn reference;
};

std::span<const Kernel> kernels();

// The names of the table, "copy, scale, ...": for help texts and messages.
std::string kernel_names();

// The kernel called name; UsageError listing the known names otherwise.
const Kernel& find_kernel(std::string_view name);

// Instruction set the kernels were compiled for ("avx512", "avx2", "sse2").
const char* isa();

}  // namespace bw::stream
