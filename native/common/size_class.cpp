#include "common/size_class.hpp"

#include "common/args.hpp"
#include "common/topology.hpp"

namespace bw {

std::string size_class(std::uint64_t bytes, const std::vector<int>& cpus_in) {
  if (bytes == 0) return "core";
  const std::vector<int> cpus = cpus_in.empty() || cpus_in[0] < 0 ? allowed_cpus() : cpus_in;
  const Topology& t = Topology::instance();
  std::uint64_t l2 = 0;
  for (int c : cpus) l2 += t.cache_bytes(2, c);
  if (l2 && bytes <= l2) return "l2";
  const std::uint64_t llc = t.llc_bytes(cpus);
  if (llc && bytes <= llc) return "llc";
  return "dram";
}

}  // namespace bw
