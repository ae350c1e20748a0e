// The registry of row-kernel variants and the choice among them: the variants this build has, as
// bandwall_isa_sources (common/isa.cmake) generated them into rows_variants.hpp.
#include "iso3dfd/rows.hpp"

#include <utility>

#include "common/dispatch.hpp"
#include "rows_variants.hpp"  // generated: the variants this build has

namespace bw::iso3dfd {

BANDWALL_ROWS_VARIANTS(RowVariant)

Dispatch<RowVariant>& row_dispatch() {
  static Dispatch<RowVariant> d({BANDWALL_ROWS_LIST});
  return d;
}

const std::vector<const RowVariant*>& row_variants() { return row_dispatch().variants(); }

const RowVariant* find_row_variant(const std::string& isa) { return row_dispatch().find(isa); }

IncoreBound incore_bound(const RowVariant& v, const CpuId& cpu, const RowShape* shape, int radius) {
  const RowCounts c = (shape ? *shape : v.shapes[0]).counts_at(radius);
  IncoreBound b;
  if (c.loads <= 0) {
    b.unavailable =
        kernel_radius_index(radius) < 0 && !(shape ? *shape : v.shapes[0]).any_radius
            ? "radius " + std::to_string(radius) + " runs the generic loops; their operations are not counted"
            : std::string("the ") + v.isa + " row kernel is left to the compiler; its operations are not counted";
    return b;
  }
  const auto ports = ports_at(v.lanes * 32, &b.unavailable, cpu);
  if (!ports) return b;
  const Ports& p = *ports;
  b.ports = p;
  const std::pair<const char*, double> limits[] = {
      {"load ports", c.loads / p.loads},
      {"FMA pipes", c.fmas / p.fma},
      {"add pipes", c.adds / p.add},
      {"FP pipes (FMAs, adds and shuffles)", (c.fmas + c.adds + c.shuffles) / p.fp}};
  for (const auto& [name, cycles] : limits)
    if (cycles > b.cycles_per_vector) {
      b.cycles_per_vector = cycles;
      b.bound_by = name;
    }
  return b;
}

IncoreMix incore_mix(const RowVariant& v, const RowShape& shape, int radius, const CpuId& cpu) {
  IncoreMix m;
  const RowCounts c = shape.counts_at(radius);
  const MixFn mix = shape.mix(radius);
  if (!mix || c.loads <= 0) {
    m.unavailable =
        std::string("the ") + v.isa + " row kernel's operations are not counted at radius " + std::to_string(radius);
    return m;
  }
  // about 2 ms a timing, the best of 5 (a host's other guests slow some): some 25 ms in all
  const MixTiming t = mix(0.002, 5);
  m.seconds_per_vector = t.vector_s;
  if (const auto ports = ports_at(v.lanes * 32, &m.unavailable, cpu); ports && t.fma_s > 0) {
    m.cycles_per_vector = t.vector_s / (t.fma_s * ports->fma);
    m.clock_ghz = 1e-9 / (t.fma_s * ports->fma);
  }
  return m;
}

std::string row_variant_refusal(const std::string& isa) { return row_dispatch().refusal(isa); }

}  // namespace bw::iso3dfd
