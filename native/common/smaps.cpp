#include "common/smaps.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace bw {

SmapsTotals smaps_totals(const void* ptr, std::size_t bytes) {
  const auto lo = reinterpret_cast<std::uintptr_t>(ptr), hi = lo + (bytes ? bytes : 1);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  SmapsTotals out;
  while (std::getline(smaps, line)) {
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find_first_not_of("0123456789abcdef") == dash) {  // a mapping's header: start-end perms ...
      const auto start = std::stoull(line.substr(0, dash), nullptr, 16);
      const auto end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = start < hi && lo < end;
      out.found = out.found || inside;
      continue;
    }
    if (!inside) continue;
    std::istringstream in(line);  // a field: "Name:   value kB"
    std::string key;
    std::uint64_t kb = 0;
    if (!(in >> key >> kb)) continue;
    if (key == "Rss:") out.rss_bytes += kb * 1024;
    if (key == "AnonHugePages:") out.anon_huge_bytes += kb * 1024;
  }
  return out;
}

}  // namespace bw
