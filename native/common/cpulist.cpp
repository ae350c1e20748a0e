#include "common/cpulist.hpp"

#include <cctype>
#include <set>
#include <string>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/topology.hpp"

namespace bw {
namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

long number(std::string_view text, std::string_view list, std::string_view what) {
  std::string t(text);
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("CPU list " + quoted(list) + ": " + std::string(what) + " " + quoted(text) +
                     " is not a whole number");
  if (t.size() > 6)
    throw UsageError("CPU list " + quoted(list) + ": " + std::string(what) + " " + quoted(text) + " is too large");
  return std::stol(t);
}

// "S0", "M1", "N", "C0": the domain's CPUs in likwid's order.
std::vector<int> domain(std::string_view name, std::string_view list, const Topology& topo) {
  if (name.empty() || !std::isupper(static_cast<unsigned char>(name[0])))
    throw UsageError("CPU list " + quoted(list) + ": " + quoted(name) + " is not a CPU domain (N, S0, D0, M0, C0)");
  const char kind = name[0];
  if (kind == 'N' && name.size() > 1)
    throw UsageError("CPU list " + quoted(list) + ": the node domain is N, not " + quoted(name));
  if (kind != 'N' && name.size() == 1)
    throw UsageError("CPU list " + quoted(list) + ": domain " + quoted(name) + " needs its number (" +
                     std::string(1, kind) + "0)");
  const long index = kind == 'N' ? 0 : number(name.substr(1), list, "domain number");
  try {
    return topo.domain_cpus(kind, static_cast<int>(index));
  } catch (const UsageError& e) {
    throw UsageError("CPU list " + quoted(list) + ": " + e.what());
  }
}

std::vector<int> pick(const std::vector<int>& cpus, const std::vector<int>& positions, std::string_view part,
                      std::string_view list) {
  std::vector<int> out;
  for (int p : positions) {
    if (p >= static_cast<int>(cpus.size()))
      throw UsageError("CPU list " + quoted(list) + ": " + quoted(part) + " asks for CPU " + std::to_string(p) +
                       " of a domain of " + std::to_string(cpus.size()) + " (0-" + std::to_string(cpus.size() - 1) +
                       ")");
    out.push_back(cpus[static_cast<std::size_t>(p)]);
  }
  return out;
}

// E:DOMAIN:COUNT[:CHUNK:STRIDE]
std::vector<int> expression(std::string_view part, std::string_view list, const Topology& topo) {
  std::vector<std::string_view> f;
  for (std::size_t at = 0;;) {
    auto colon = part.find(':', at);
    f.push_back(part.substr(at, colon == std::string_view::npos ? std::string_view::npos : colon - at));
    if (colon == std::string_view::npos) break;
    at = colon + 1;
  }
  if (f.size() != 3 && f.size() != 5)
    throw UsageError("CPU list " + quoted(list) + ": " + quoted(part) +
                     " is not E:DOMAIN:COUNT or E:DOMAIN:COUNT:CHUNK:STRIDE");
  const std::vector<int> cpus = domain(f[1], list, topo);
  const long count = number(f[2], list, "count"), chunk = f.size() == 5 ? number(f[3], list, "chunk") : 1,
             stride = f.size() == 5 ? number(f[4], list, "stride") : 1;
  if (count < 1 || chunk < 1 || stride < chunk)
    throw UsageError("CPU list " + quoted(list) + ": " + quoted(part) +
                     " needs COUNT and CHUNK of at least 1 and STRIDE of at least CHUNK");
  std::vector<int> positions;
  for (long start = 0; static_cast<long>(positions.size()) < count; start += stride)
    for (long j = 0; j < chunk && static_cast<long>(positions.size()) < count; ++j)
      positions.push_back(static_cast<int>(start + j));
  return pick(cpus, positions, part, list);
}

}  // namespace

std::vector<int> resolve_cpu_list(std::string_view text, const Topology& topo) {
  // likwid's domains are upper-case letters (N, S0, ..., E:); anything else is a plain list.
  if (text.empty() || !std::isupper(static_cast<unsigned char>(text[0]))) return parse_cpu_list(text);
  std::vector<int> out;
  std::set<int> seen;
  for (std::size_t at = 0;;) {
    const auto end = text.find('@', at);
    const std::string_view part = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (part.empty()) throw UsageError("CPU list " + quoted(text) + " has an empty part between @");
    std::vector<int> cpus;
    if (part.rfind("E:", 0) == 0) {
      cpus = expression(part, text, topo);
    } else {
      const auto colon = part.find(':');
      if (colon == std::string_view::npos)
        throw UsageError("CPU list " + quoted(text) + ": " + quoted(part) + " needs CPUs after its domain, as in " +
                         std::string(part) + ":0-1");
      const std::string inner(part.substr(colon + 1));
      std::vector<int> positions;
      try {
        positions = parse_cpu_list(inner);
      } catch (const UsageError& e) {
        throw UsageError("CPU list " + quoted(text) + ": " + e.what());
      }
      cpus = pick(domain(part.substr(0, colon), text, topo), positions, part, text);
    }
    for (int c : cpus) {
      if (!seen.insert(c).second)
        throw UsageError("CPU list " + quoted(text) + " names CPU " + std::to_string(c) + " twice");
      out.push_back(c);
    }
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return out;
}

std::vector<int> resolve_cpu_list(std::string_view text) { return resolve_cpu_list(text, Topology::instance()); }

}  // namespace bw
