// The one run-time instruction-set dispatch of every kernel with variants (stream and the pipeline,
// iso3dfd's row kernels, the FMA peak). A variant is a struct with a member `const char* isa`, defined
// constinit in a file of its own compiled with its instruction set's target flags (stream/kernels_avx512.cpp),
// so that no code of an AVX-512 file runs at start-up on a CPU without it. CMake's bandwall_isa_sources()
// (common/isa.cmake) is the one registration: it builds such a file only where the compiler takes its
// flags, and generates <prefix>_variants.hpp naming the variants built, widest first (the generic
// file is always built). The kernel's dispatch file (stream/kernels.cpp, iso3dfd/rows.cpp,
// peak/fma.cpp) declares and lists them from it, with no line per variant:
//
//   #include "stream_variants.hpp"  // generated
//   BANDWALL_STREAM_VARIANTS(Variant)
//   Dispatch<Variant>& dispatch() {
//     static Dispatch<Variant> d({BANDWALL_STREAM_LIST});
//     return d;
//   }
//
// Adding an instruction set's variant of a kernel is its file and one word in that kernel's
// bandwall_isa_sources call.
//
// Dispatch then answers, for every kernel alike: which variants are built (variants(), names()); which
// one a name means on this CPU (find(); "auto": the widest it runs; common/isa.hpp) and why a request
// is refused (refusal()); select() makes a named one active without timing anything; choose() makes
// active the one a request ("auto", "measure" or a name) means, by the table of measured choices, a
// choice cached on this machine, the machine model or a short timing on the run's own data
// (common/isa_choice.hpp), use() switching variants during that timing; active() is the variant in
// use and choice_json() how it was chosen (a record's config.isa_choice). The measuring driver
// (common/driver.hpp) makes the choice for every kernel alike through choose_with().
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/isa_choice.hpp"

namespace bw {

template <class Variant>
class Dispatch {
 public:
  // built: the variants of this binary, widest first (the generic one is always there).
  explicit Dispatch(std::vector<const Variant*> built) : built_(std::move(built)), active_(find("auto")) {
    choice_.isa = active_->isa, choice_.how = "model", choice_.why = "the widest variant this CPU runs";
  }

  const std::vector<const Variant*>& variants() const { return built_; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Variant* v : built_) out.emplace_back(v->isa);
    return out;
  }

  // The variant a name gives on this CPU ("auto": the widest), or nullptr (refusal() says why).
  const Variant* find(const std::string& isa) const {
    const std::string name = choose_isa(isa, names());
    for (const Variant* v : built_)
      if (name == v->isa) return v;
    return nullptr;
  }

  std::string refusal(const std::string& isa) const { return isa_refusal(isa, names()); }

  // Makes the variant isa names the active one ("auto": the widest, not timed); UsageError (exit 2)
  // when there is none.
  const Variant& select(const std::string& isa) {
    const Variant* v = find(isa);
    if (!v) throw UsageError(refusal(isa));
    active_ = v;
    choice_ = {v->isa,
               isa == "auto" ? "model" : "forced",
               isa == "auto" ? "the widest variant this CPU runs" : "--isa " + isa + " names it",
               json::object(),
               "",
               json::object(),
               json(),
               ""};
    key_.clear();
    return *v;
  }

  // Makes the variant a request means the active one: "auto" and "measure" by the table, the model
  // or speed (common/isa_choice.hpp), where measure times one variant briefly on the run's own data
  // (higher is better, in request.unit). UsageError when there is none.
  const Variant& choose(VariantRequest request, const std::function<double(const Variant&)>& measure = {},
                        const ChoiceContext& machine = ChoiceContext::here()) {
    IsaMeasure by_name;
    if (measure) by_name = [&](const std::string& name) { return measure(*named(name)); };
    request.built = names();
    IsaChoice c = choose_variant(request, by_name, machine);
    const Variant* v = c.isa.empty() ? nullptr : named(c.isa);
    if (!v) throw UsageError(refusal(request.requested));
    active_ = v;
    choice_ = std::move(c);
    key_ = request.key;
    return *v;
  }

  // Makes a variant active by name for a while (the trials of a choice); the choice stays recorded.
  void use(const std::string& name) {
    if (const Variant* v = named(name)) active_ = v;
  }

  // Makes the variant named isa the active one for good, with how and why it replaced the one chosen
  // (a later choice on the run's data, such as a shape race that timed it with its own shape): the
  // record then says so, with the earlier choice under "replaced". False when no such variant is built.
  bool revise(const std::string& isa, const std::string& how, const std::string& why, const json& decision) {
    const Variant* v = named(isa);
    if (!v) return false;
    IsaChoice earlier = choice_;
    active_ = v;
    choice_ = {};
    choice_.isa = v->isa, choice_.how = how, choice_.why = why, choice_.decision = decision;
    choice_.size_class = earlier.size_class, choice_.unit = earlier.unit;
    choice_.source = {{"replaced", earlier.to_json(key_)}};
    return true;
  }

  const Variant& active() const { return *active_; }

  // config.isa_choice of records: the variant, how it was chosen and on what figures.
  json choice_json() const { return choice_.to_json(key_); }

 private:
  const Variant* named(const std::string& name) const {
    for (const Variant* v : built_)
      if (name == v->isa) return v;
    return nullptr;
  }

  std::vector<const Variant*> built_;
  const Variant* active_;
  IsaChoice choice_;
  std::string key_;
};

}  // namespace bw
