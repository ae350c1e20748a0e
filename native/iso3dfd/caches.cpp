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

std::uint64_t llc_bytes_of(const json& entry) {
  const auto it = entry.find("llc_bytes");
  if (it == entry.end() || !it->is_number_unsigned()) return 0;
  const auto bytes = it->get<std::uint64_t>();
  return bytes >= (1u << 20) ? bytes : 0;
}

MachineCaches planned_caches(std::uint64_t l2, std::uint64_t l3, const json* entry, const std::string& citation,
                             bool l3_forced) {
  MachineCaches out;
  Caches& c = out.caches;
  c.l2 = l2;
  c.l3 = l3;
  std::string how = "default", from = "the compiled assumption";
  if (entry && llc_over_memory_of(*entry) > 0) {
    c.llc_over_memory = llc_over_memory_of(*entry);
    how = "table";
    from = citation;
  } else {
    from += citation.empty() ? std::string(" (no machine model knows this CPU)") : ": " + citation;
  }
  out.record = {
      {"l2_bytes", c.l2}, {"l3_bytes", c.l3}, {"llc_over_memory", c.llc_over_memory}, {"how", how}, {"from", from}};
  const std::uint64_t measured = entry ? llc_bytes_of(*entry) : 0;
  if (measured > 0 && !l3_forced && (l3 == 0 || measured < l3)) {
    c.l3 = measured;
    out.record["l3_bytes"] = measured;
    out.record["l3_reported_bytes"] = l3;
  }
  return out;
}

MachineCaches machine_caches(int cpu) {
  const Topology& t = Topology::instance();
  const Microarch* m = this_microarch();
  const json* e = m ? table_entry(isa_choice_table(), std::string(m->name), kTimeModelKey, "models") : nullptr;
  std::string citation;
  if (e && llc_over_memory_of(*e) > 0)
    citation = table_citation(std::string(m->name), kTimeModelKey, *e);
  else if (m)
    citation = "the table of measured choices has no " + std::string(kTimeModelKey) + " for " + std::string(m->name);
  return planned_caches(t.cache_bytes(2, cpu), t.cache_bytes(3, cpu), e, citation, t.cache_forced(3));
}

}  // namespace bw::iso3dfd
