// The STREAM kernel table of the instruction set chosen at start-up (or by select_isa), and the
// lookups over it. The variants' files are built only when the compiler takes their target flags;
// CMake defines BANDWALL_STREAM_<ISA> for each.
#include "stream/kernels.hpp"

#include "common/errors.hpp"
#include "common/isa.hpp"

namespace bw::stream {

#ifdef BANDWALL_STREAM_AVX512
extern const Variant kStreamAvx512;
#endif
#ifdef BANDWALL_STREAM_AVX2
extern const Variant kStreamAvx2;
#endif
extern const Variant kStreamGeneric;

namespace {

std::vector<std::string> built_names() {
  std::vector<std::string> names;
  for (const Variant* v : variants()) names.push_back(v->isa);
  return names;
}

const Variant*& active() {
  static const Variant* v = find_variant("auto");
  return v;
}

}  // namespace

const std::vector<const Variant*>& variants() {
  static const std::vector<const Variant*> all = {
#ifdef BANDWALL_STREAM_AVX512
      &kStreamAvx512,
#endif
#ifdef BANDWALL_STREAM_AVX2
      &kStreamAvx2,
#endif
      &kStreamGeneric,
  };
  return all;
}

const Variant* find_variant(const std::string& isa) {
  const std::string name = choose_isa(isa, built_names());
  for (const Variant* v : variants())
    if (name == v->isa) return v;
  return nullptr;
}

std::string select_isa(const std::string& isa) {
  const Variant* v = find_variant(isa);
  if (!v) throw UsageError(isa_refusal(isa, built_names()));
  active() = v;
  return v->isa;
}

const char* isa() { return active()->isa; }

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
