// The one run-time instruction-set dispatch of every kernel with variants (stream, the pipeline,
// iso3dfd's row kernels, the FMA peak). A kernel declares its variants (structs with a member
// `const char* isa`, one per file compiled with its own target flags, constinit so that no code of
// an AVX-512 file runs at start-up on a CPU without it) and lists them once, best first:
//
//   BW_ISA_VARIANT(STREAM, AVX512, kStreamAvx512)   // built when CMake defines BANDWALL_STREAM_AVX512
//   ...
//   Dispatch<Variant>& dispatch() { static Dispatch<Variant> d{{BW_ISA_LIST(...)}}; return d; }
//
// Dispatch then answers, for every kernel alike: which variants are built, which one "auto" or a
// name means on this CPU (common/isa.hpp), the one active now, and why a request is refused.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "common/isa.hpp"

namespace bw {

template <class Variant>
class Dispatch {
 public:
  // built: the variants of this binary, best first (the generic one is always there).
  explicit Dispatch(std::vector<const Variant*> built) : built_(std::move(built)), active_(find("auto")) {}

  const std::vector<const Variant*>& variants() const { return built_; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Variant* v : built_) out.emplace_back(v->isa);
    return out;
  }

  // The variant "auto" or a name gives on this CPU, or nullptr (refusal() says why).
  const Variant* find(const std::string& isa) const {
    const std::string name = choose_isa(isa, names());
    for (const Variant* v : built_)
      if (name == v->isa) return v;
    return nullptr;
  }

  std::string refusal(const std::string& isa) const { return isa_refusal(isa, names()); }

  // Makes the variant isa names the active one; UsageError (exit 2) when there is none.
  const Variant& select(const std::string& isa) {
    const Variant* v = find(isa);
    if (!v) throw UsageError(refusal(isa));
    active_ = v;
    return *v;
  }

  const Variant& active() const { return *active_; }

 private:
  std::vector<const Variant*> built_;
  const Variant* active_;
};

}  // namespace bw
