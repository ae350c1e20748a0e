// Per-CPU machine models: one data row per micro-architecture with what its cores issue per cycle
// (vector loads, FMAs, FP adds, FP operations in all) at each vector width, chosen from CPUID's
// vendor, family and model. The in-core bounds of the kernels (iso3dfd's port bound, the clock the
// FMA peak implies) are computed from these rows; a CPU no row knows gets no bound and says why.
// Adding a CPU is adding a row to machine.cpp's table.
//
// BANDWALL_MICROARCH forces the row (a row's name such as "AMD Zen 5", or "none" for a CPU no row
// knows): every choice and model then follows that micro-architecture, so one machine can run every
// row's branch (the tests do).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/record.hpp"

namespace bw {

// Operations of one vector width a core issues per cycle. A 512-bit operation that a core splits
// into two 256-bit halves (AMD Zen 4) counts half as many per cycle as its 256-bit one.
struct Ports {
  double loads = 0, fma = 0, add = 0, fp = 0;
  bool known() const { return loads > 0; }
};

struct Microarch {
  std::string_view name;    // "AMD Zen 4"
  std::string_view vendor;  // CPUID vendor string: AuthenticAMD, GenuineIntel
  int family;               // CPUID family (base + extended)
  int model_lo, model_hi;   // CPUID model (base + extended), inclusive
  Ports p256, p512;         // per cycle at 256 and 512 bits (p512 unknown: no AVX-512)
  std::string_view note;    // how 512-bit operations are executed, and the source of the figures
  // CPUID features (common/machine.cpp's names) that identify the row when no row knows the model
  // number (a hypervisor may show a model of its own); empty: the model number alone.
  std::string_view features = {};
};

// What CPUID says of this CPU: vendor, family, model, and the features that identify a row.
struct CpuId {
  std::string vendor;
  int family = 0, model = 0;
  std::vector<std::string> features;  // of kFeatureNames below that this CPU has
  std::string forced;                 // BANDWALL_MICROARCH's value when it forced a row
};
// This CPU, or the row BANDWALL_MICROARCH names (UsageError for a name no row has).
CpuId cpuid();

// The features rows can be identified by: amx-tile, avx512-fp16.
const std::vector<std::string>& feature_names();

// The row of a CPU: by vendor, family and model, else by its features; nullptr when no row knows it.
const Microarch* find_microarch(const CpuId& id);
const Microarch* this_microarch();

// The names of the rows, in table order, each once.
std::vector<std::string> microarch_names();

// The ports of this CPU at a vector width (256 or 512; narrower widths use the 256-bit row), or
// nullopt with why in *reason.
std::optional<Ports> ports_at(int vector_bits, std::string* reason, const CpuId& id = cpuid());

// For records: {"name", "vendor", "family", "model", "note"} of this CPU's row, or
// {"unavailable": why, "vendor", "family", "model"} when no row knows it.
json microarch_json(const CpuId& id = cpuid());

}  // namespace bw
