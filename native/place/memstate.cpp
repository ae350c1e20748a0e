#include "place/memstate.hpp"

#include <numa.h>
#include <numaif.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/errors.hpp"
#include "common/smaps.hpp"

#ifndef MPOL_F_STATIC_NODES
#define MPOL_F_STATIC_NODES (1 << 15)
#endif
#ifndef MPOL_F_RELATIVE_NODES
#define MPOL_F_RELATIVE_NODES (1 << 14)
#endif
#ifndef MPOL_LOCAL
#define MPOL_LOCAL 4
#endif

namespace bw {

nlohmann::json memory_policy() {
  int mode = 0;
  std::vector<unsigned long> mask(16, 0);  // 1024 nodes
  unsigned long maxnode = mask.size() * 8 * sizeof(unsigned long);
  if (get_mempolicy(&mode, mask.data(), maxnode, nullptr, 0) != 0)
    throw RunError(std::string("get_mempolicy failed: ") + std::strerror(errno));
  nlohmann::json nodes = nlohmann::json::array();
  for (unsigned long n = 0; n < maxnode; ++n)
    if (mask[n / (8 * sizeof(unsigned long))] & (1UL << (n % (8 * sizeof(unsigned long))))) nodes.push_back(n);
  int base = mode & ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES);
  const char* name = "unknown";
  switch (base) {
    case MPOL_DEFAULT: name = "default"; break;
    case MPOL_BIND: name = "bind"; break;
    case MPOL_INTERLEAVE: name = "interleave"; break;
    case MPOL_PREFERRED: name = "preferred"; break;
    case MPOL_LOCAL: name = "local"; break;
    default: break;
  }
  return {{"mode", name}, {"nodes", nodes}};
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!f || !std::getline(f, line)) return "unavailable";
  auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "unavailable";
  return line.substr(open + 1, close - open - 1);
}

int numa_balancing() {
  std::ifstream f("/proc/sys/kernel/numa_balancing");
  int v = -1;
  return f >> v ? v : -1;
}

std::size_t huge_page_bytes(const void* ptr) { return smaps_totals(ptr, 0).anon_huge_bytes; }

}  // namespace bw
