#include "iso3dfd/caches.hpp"

#include "common/isa_choice.hpp"
#include "common/machine.hpp"
#include "common/topology.hpp"

namespace bw::iso3dfd {

double llc_over_memory_of(const json& entry) {
  const auto it = entry.find("llc_over_memory");
  if (it == entry.end() || !it->is_number()) return 0;
  const double r = it->get<double>();
  return r >= 0.5 && r <= 20 ? r : 0;
}

MachineCaches machine_caches(int cpu) {
  MachineCaches out;
  Caches& c = out.caches;
  c.l2 = Topology::instance().cache_bytes(2, cpu);
  c.l3 = Topology::instance().cache_bytes(3, cpu);
  std::string how = "default", from = "the compiled assumption";
  const Microarch* m = this_microarch();
  const json* e = m ? table_entry(isa_choice_table(), std::string(m->name), kTimeModelKey, "models") : nullptr;
  if (e && llc_over_memory_of(*e) > 0) {
    c.llc_over_memory = llc_over_memory_of(*e);
    how = "table";
    from = table_citation(std::string(m->name), kTimeModelKey, *e);
  } else {
    from += m ? ": the table of measured choices has no " + std::string(kTimeModelKey) + " for " + std::string(m->name)
              : std::string(" (no machine model knows this CPU)");
  }
  out.record = {
      {"l2_bytes", c.l2}, {"l3_bytes", c.l3}, {"llc_over_memory", c.llc_over_memory}, {"how", how}, {"from", from}};
  return out;
}

}  // namespace bw::iso3dfd
