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

const RowVariant* find_row_variant(const std::string& isa) {
  for (const RowVariant* v : row_variants())
    if ((isa == "auto" || isa == v->isa) && cpu_has_isa(v->isa)) return v;
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

std::string row_variant_refusal(const std::string& isa) {
  bool known = isa == "auto";
  for (const std::string& n : isa_names()) known = known || n == isa;
  if (!known) return "unknown isa '" + isa + "' (use auto, avx512, avx2 or generic)";
  bool built = false;
  for (const RowVariant* v : row_variants()) built = built || isa == v->isa;
  if (!built) return "isa '" + isa + "' is not built into this binary (the compiler lacks its target flags)";
  std::string offered;
  for (const std::string& n : cpu_isas()) offered += (offered.empty() ? "" : ", ") + n;
  return "isa '" + isa + "' is not supported by this CPU (it offers " + offered + ")";
}

}  // namespace bw::iso3dfd
