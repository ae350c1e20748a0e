// The STREAM kernel table of the instruction set chosen at start-up (or by select_isa), and the
// lookups over it. The variants this build has come from stream_variants.hpp, which
// bandwall_isa_sources (common/isa.cmake) generates.
#include "stream/kernels.hpp"

#include "common/errors.hpp"
#include "common/dispatch.hpp"
#include "stream_variants.hpp"  // generated: the variants this build has

namespace bw::stream {

BANDWALL_STREAM_VARIANTS(Variant)

Dispatch<Variant>& dispatch() {
  static Dispatch<Variant> d({BANDWALL_STREAM_LIST});
  return d;
}

namespace {

const Variant* active() { return &dispatch().active(); }

}  // namespace

const std::vector<const Variant*>& variants() { return dispatch().variants(); }

const Variant* find_variant(const std::string& isa) { return dispatch().find(isa); }

std::string select_isa(const std::string& isa) { return dispatch().select(isa).isa; }

const char* isa() { return active()->isa; }

const DotSteps& dot_steps() { return active()->dot; }

int vector_bits() { return active()->vector_bits; }

std::span<const Kernel> kernels() { return active()->kernel_list(); }

std::string kernel_names() {
  std::string names;
  for (const Kernel& k : kernels()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

const Kernel& find_kernel(std::string_view name) {
  for (const Kernel& k : kernels())
    if (k.name == name) return k;
  throw UsageError("unknown kernel '" + std::string(name) + "' (known: " + kernel_names() + ")");
}

}  // namespace bw::stream
