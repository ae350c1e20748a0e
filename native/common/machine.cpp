#include "common/machine.hpp"

#include <cpuid.h>

#include <array>
#include <cstring>
#include <span>

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
};

std::string hex(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

}  // namespace

CpuId cpuid() {
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
  return id;
}

const Microarch* find_microarch(const CpuId& id) {
  for (const Microarch& m : std::span(kRows))
    if (m.vendor == id.vendor && m.family == id.family && id.model >= m.model_lo && id.model <= m.model_hi) return &m;
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
               " (common/machine.cpp has rows for AMD Zen 1-5 and Intel Skylake-SP to Emerald Rapids)");
  const Ports& p = vector_bits > 256 ? m->p512 : m->p256;
  if (!p.known()) return why(std::string(m->name) + " has no " + std::to_string(vector_bits) + "-bit row");
  return p;
}

json microarch_json(const CpuId& id) {
  const Microarch* m = find_microarch(id);
  json j = {{"vendor", id.vendor}, {"family", id.family}, {"model", id.model}};
  if (!m) {
    std::string reason;
    ports_at(256, &reason, id);
    j["unavailable"] = reason;
    return j;
  }
  j["name"] = m->name;
  j["note"] = m->note;
  return j;
}

}  // namespace bw
