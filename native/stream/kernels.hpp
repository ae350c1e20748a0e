// The STREAM kernels as one table: what each computes, the bytes and flops it moves per element,
// and its chunk functions with non-temporal and regular stores. Adding a kernel is adding a row
// (stream/chunks.hpp). The table is built once per instruction set (AVX-512, AVX2 + FMA, and the
// build's baseline), each in its own file with its own target flags, and the one this CPU runs
// best is chosen at start-up (common/isa.hpp); select_isa() forces another.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/dispatch.hpp"

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

// The dot kernel's order of operations, resumable across blocks: the pipeline computes a chunk block
// by block and must give the same sum, bit for bit, as the dot kernel of the same variant (a scalar
// head, groups of four vectors into four accumulators, then on the last block single vectors into the
// first accumulator and a scalar tail). The state holds the accumulators of any vector width.
struct DotState {
  double sum = 0.0;
  alignas(64) double acc[4 * 8] = {};
};
struct DotSteps {
  void (*scalar)(DotState& s, const double* a, const double* b, std::size_t n);
  void (*body)(DotState& s, const double* a, const double* b, std::size_t n, bool last);
  double (*total)(const DotState& s);
};

// One instruction set's table. A plain array: a variant is initialised at compile time
// (constinit), since no code of its file may run at start-up on a CPU that lacks its instructions.
struct Variant {
  const char* isa;  // avx512, avx2 or generic (common/isa.hpp's names)
  int vector_bits;  // width of the vectors its chunk functions use
  const Kernel* table;
  int nkernels;
  DotSteps dot;
  std::span<const Kernel> kernel_list() const { return {table, static_cast<std::size_t>(nkernels)}; }
};

// The variants built into this binary, best first (generic is always there).
const std::vector<const Variant*>& variants();

// Their dispatch (common/dispatch.hpp): the active variant and how it was chosen.
Dispatch<Variant>& dispatch();

// The variant named isa ("auto": the best) if it is built in and this CPU runs it, else nullptr.
const Variant* find_variant(const std::string& isa);

// Makes the variant named isa ("auto" or a name) the one kernels() gives; UsageError (one line)
// when it is not built in or this CPU lacks it. Returns the name chosen.
std::string select_isa(const std::string& isa);

// config.isa_choice: the active variant, how it was chosen and on what figures (stream/choice.cpp,
// apart from the kernels, which the pipeline's tests also build alone). The choice itself is the
// measuring driver's (stream/measurement.hpp, common/driver.hpp).
nlohmann::json isa_choice_json();

// The kernel table of the chosen variant.
std::span<const Kernel> kernels();

// The names of the table, "copy, scale, ...": for help texts and messages.
std::string kernel_names();

// The kernel called name; UsageError listing the known names otherwise.
const Kernel& find_kernel(std::string_view name);

// The chosen variant's dot steps (for a dot computed block by block).
const DotSteps& dot_steps();

// The chosen variant's instruction set (avx512, avx2, generic) and vector width in bits.
const char* isa();
int vector_bits();

}  // namespace bw::stream
