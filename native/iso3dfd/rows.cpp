// The registry of row-kernel variants and the choice among them (the variants' files are built
// only when the compiler takes their target flags; CMake defines BANDWALL_ROWS_<ISA> for each).
#include "iso3dfd/rows.hpp"

#include <utility>

#include "common/isa.hpp"

namespace bw::iso3dfd {

#ifdef BANDWALL_ROWS_AVX512
extern const RowVariant kRowsAvx512;
#endif
#ifdef BANDWALL_ROWS_AVX2
extern const RowVariant kRowsAvx2;
#endif
extern const RowVariant kRowsGeneric;

const std::vector<const RowVariant*>& row_variants() {
  static const std::vector<const RowVariant*> all = {
#ifdef BANDWALL_ROWS_AVX512
      &kRowsAvx512,
#endif
#ifdef BANDWALL_ROWS_AVX2
      &kRowsAvx2,
#endif
      &kRowsGeneric,
  };
  return all;
}

namespace {

std::vector<std::string> built_names() {
  std::vector<std::string> names;
  for (const RowVariant* v : row_variants()) names.push_back(v->isa);
  return names;
}

}  // namespace

const RowVariant* find_row_variant(const std::string& isa) {
  const std::string name = choose_isa(isa, built_names());
  for (const RowVariant* v : row_variants())
    if (name == v->isa) return v;
  return nullptr;
}

IncoreBound incore_bound(const RowVariant& v) {
  const RowCounts& c = v.counts;
  const CorePorts& p = v.ports;
  IncoreBound b;
  if (p.loads <= 0) return b;
  const std::pair<const char*, double> limits[] = {
      {"load ports", c.loads / p.loads},
      {"FMA pipes", c.fmas / p.fma},
      {"add pipes", c.adds / p.add},
      {"FP pipes (FMAs, adds and shuffles)", (c.fmas + c.adds + c.shuffles) / p.fp}};
  for (const auto& [name, cycles] : limits)
    if (cycles > b.cycles_per_vector) b = IncoreBound{cycles, name};
  return b;
}

std::string row_variant_refusal(const std::string& isa) { return isa_refusal(isa, built_names()); }

}  // namespace bw::iso3dfd
