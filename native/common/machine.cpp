#include "common/machine.hpp"

#include <cpuid.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <span>

#include "common/errors.hpp"

namespace bw {
namespace {

// Per cycle and core: vector loads, FMAs, FP adds, FP operations in all (FMA, add, multiply and
// shuffle pipes together), at 256 and at 512 bits. Sources: AMD's Software Optimization Guides for
// families 17h, 19h and 1Ah; Intel's Optimization Reference Manual (Skylake-SP, Ice Lake-SP, Golden
// Cove). Zen 1 splits every 256-bit operation into two 128-bit halves; Zen 4 splits 512-bit ones.
constexpr Microarch kRows[] = {
    {"AMD Zen",
     "AuthenticAMD",
     0x17,
     0x00,
     0x2f,
     {1, 1, 1, 2},
     {},
     "256-bit operations split into two 128-bit halves; no AVX-512"},
    {"AMD Zen 2",
     "AuthenticAMD",
     0x17,
     0x30,
     0xff,
     {2, 2, 2, 4},
     {},
     "two 256-bit loads, two FMA and two FP-add pipes; no AVX-512"},
    {"AMD Zen 3",
     "AuthenticAMD",
     0x19,
     0x00,
     0x0f,
     {2, 2, 2, 4},
     {},
     "two 256-bit loads (three of 128 bits), two FMA and two FP-add pipes; no AVX-512"},
    {"AMD Zen 3",
     "AuthenticAMD",
     0x19,
     0x20,
     0x5f,
     {2, 2, 2, 4},
     {},
     "two 256-bit loads (three of 128 bits), two FMA and two FP-add pipes; no AVX-512"},
    {"AMD Zen 4",
     "AuthenticAMD",
     0x19,
     0x10,
     0x1f,
     {2, 2, 2, 4},
     {1, 1, 1, 2},
     "AVX-512 executed on 256-bit units: a 512-bit operation takes two slots"},
    {"AMD Zen 4",
     "AuthenticAMD",
     0x19,
     0x60,
     0xaf,
     {2, 2, 2, 4},
     {1, 1, 1, 2},
     "AVX-512 executed on 256-bit units: a 512-bit operation takes two slots"},
    {"AMD Zen 5",
     "AuthenticAMD",
     0x1a,
     0x00,
     0xff,
     {4, 2, 2, 4},
     {2, 2, 2, 4},
     "full-width AVX-512: two 512-bit loads (four of 256 bits), two FMA and two FP-add pipes"},
    {"Intel Skylake-SP",
     "GenuineIntel",
     6,
     0x55,
     0x55,
     {2, 2, 2, 3},
     {2, 2, 2, 2},
     "512-bit FMAs on ports 0+1 fused and 5 (one 512-bit FMA unit on some Silver and Gold 5xxx parts)"},
    {"Intel Ice Lake-SP",
     "GenuineIntel",
     6,
     0x6a,
     0x6c,
     {2, 2, 2, 3},
     {2, 2, 2, 2},
     "512-bit FMAs on ports 0+1 fused and 5"},
    {"Intel Sapphire Rapids",
     "GenuineIntel",
     6,
     0x8f,
     0x8f,
     {3, 2, 2, 3},
     {2, 2, 2, 2},
     "three 256-bit or two 512-bit loads; 512-bit FMAs on ports 0+1 fused and 5"},
    {"Intel Emerald Rapids", "GenuineIntel", 6, 0xcf, 0xcf, {3, 2, 2, 3}, {2, 2, 2, 2}, "as Sapphire Rapids"},
    {"Intel Granite Rapids",
     "GenuineIntel",
     6,
     0xad,
     0xae,
     {3, 2, 2, 3},
     {2, 2, 2, 2},
     "Redwood Cove cores: as Sapphire Rapids"},
    // A hypervisor may show a model number of its own (seen: model 0xa7, a client part's number,
    // on a guest with AMX and a 480 MiB L3). AMX tiles and AVX512-FP16 exist only on the Golden
    // Cove server cores and their successors (Sapphire, Emerald and Granite Rapids), whose ports
    // are the same; matched by these features only when no row knows the model number.
    {"Intel Xeon with AMX",
     "GenuineIntel",
     6,
     0x00,
     0xff,
     {3, 2, 2, 3},
     {2, 2, 2, 2},
     "a model number no row knows, with AMX and AVX512-FP16: a Golden Cove-class server core (Sapphire, Emerald or "
     "Granite Rapids); ports as Sapphire Rapids",
     "amx-tile avx512-fp16"},
};

std::string hex(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

bool has_features(const CpuId& id, std::string_view wanted) {
  std::size_t at = 0;
  while (at < wanted.size()) {
    std::size_t end = wanted.find(' ', at);
    if (end == std::string_view::npos) end = wanted.size();
    const std::string f(wanted.substr(at, end - at));
    if (!f.empty() && std::find(id.features.begin(), id.features.end(), f) == id.features.end()) return false;
    at = end + 1;
  }
  return true;
}

CpuId real_cpuid() {
  CpuId id;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return id;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  id.vendor = vendor;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return id;
  const int base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  id.family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  id.model = base_family == 0xf || base_family == 6 ? base_model | (((a >> 16) & 0xf) << 4) : base_model;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (d & (1u << 24)) id.features.push_back("amx-tile");
    if (d & (1u << 23)) id.features.push_back("avx512-fp16");
  }
  return id;
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = {"amx-tile", "avx512-fp16"};
  return names;
}

std::vector<std::string> microarch_names() {
  std::vector<std::string> out;
  for (const Microarch& m : std::span(kRows))
    if (std::find(out.begin(), out.end(), std::string(m.name)) == out.end()) out.emplace_back(m.name);
  return out;
}

CpuId cpuid() {
  const char* forced = std::getenv("BANDWALL_MICROARCH");
  if (!forced || !*forced) return real_cpuid();
  CpuId id;
  id.forced = forced;
  if (std::string(forced) == "none") {
    id.vendor = "UnknownVendor";
    return id;
  }
  for (const Microarch& m : std::span(kRows))
    if (m.name == forced) {
      id.vendor = m.vendor, id.family = m.family, id.model = m.model_lo;
      std::string_view f = m.features;
      while (!f.empty()) {
        const std::size_t end = std::min(f.find(' '), f.size());
        id.features.emplace_back(f.substr(0, end));
        f.remove_prefix(std::min(end + 1, f.size()));
      }
      return id;
    }
  std::string names;
  for (const std::string& n : microarch_names()) names += (names.empty() ? "" : ", ") + n;
  throw UsageError("BANDWALL_MICROARCH '" + std::string(forced) +
                   "' names no machine model (use none or one of: " + names + ")");
}

const Microarch* find_microarch(const CpuId& id) {
  for (const Microarch& m : std::span(kRows))  // by model number first
    if (m.features.empty() && m.vendor == id.vendor && m.family == id.family && id.model >= m.model_lo &&
        id.model <= m.model_hi)
      return &m;
  for (const Microarch& m : std::span(kRows))
    if (!m.features.empty() && m.vendor == id.vendor && m.family == id.family && id.model >= m.model_lo &&
        id.model <= m.model_hi && has_features(id, m.features))
      return &m;
  return nullptr;
}

const Microarch* this_microarch() {
  static const Microarch* m = find_microarch(cpuid());
  return m;
}

std::optional<Ports> ports_at(int vector_bits, std::string* reason, const CpuId& id) {
  const Microarch* m = find_microarch(id);
  auto why = [&](std::string text) {
    if (reason) *reason = std::move(text);
    return std::nullopt;
  };
  if (!m)
    return why("no machine model for " + id.vendor + " family " + hex(id.family) + " model " + hex(id.model) +
               " (common/machine.cpp has rows for AMD Zen 1-5 and Intel Skylake-SP to Granite Rapids)");
  const Ports& p = vector_bits > 256 ? m->p512 : m->p256;
  if (!p.known()) return why(std::string(m->name) + " has no " + std::to_string(vector_bits) + "-bit row");
  return p;
}

json microarch_json(const CpuId& id) {
  const Microarch* m = find_microarch(id);
  json j = {{"vendor", id.vendor}, {"family", id.family}, {"model", id.model}};
  if (!m && !id.forced.empty()) j["forced"] = "BANDWALL_MICROARCH=" + id.forced;
  if (!m) {
    std::string reason;
    ports_at(256, &reason, id);
    j["unavailable"] = reason;
    return j;
  }
  j["name"] = m->name;
  j["note"] = m->note;
  if (!m->features.empty()) j["identified_by"] = std::string(m->features);
  if (!id.forced.empty()) j["forced"] = "BANDWALL_MICROARCH=" + id.forced;
  return j;
}

}  // namespace bw
