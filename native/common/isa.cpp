#include "common/isa.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/errors.hpp"

namespace bw {
namespace {

struct Feature {
  const char* name;
  bool present;
};

// __builtin_cpu_supports needs literal names, hence one line per feature.
std::vector<Feature> features() {
  __builtin_cpu_init();
  return {{"sse4_2", __builtin_cpu_supports("sse4.2") != 0},     {"avx", __builtin_cpu_supports("avx") != 0},
          {"avx2", __builtin_cpu_supports("avx2") != 0},         {"fma", __builtin_cpu_supports("fma") != 0},
          {"avx512f", __builtin_cpu_supports("avx512f") != 0},   {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
          {"avx512dq", __builtin_cpu_supports("avx512dq") != 0}, {"avx512vl", __builtin_cpu_supports("avx512vl") != 0}};
}

bool has(const char* name) {
  for (const Feature& f : features())
    if (std::string(f.name) == name) return f.present;
  return false;
}

}  // namespace

int variant_bits(const std::string& isa) { return isa == "avx512" ? 512 : isa == "avx2" ? 256 : 128; }

bool is_automatic(const std::string& requested) { return requested == "auto" || requested == "measure"; }

const std::vector<std::string>& isa_names() {
  static const std::vector<std::string> names = {"avx512", "avx2", "generic"};
  return names;
}

std::string isa_ceiling() {
  const char* v = std::getenv("BANDWALL_MAX_ISA");
  if (!v || !*v) return "";
  std::string name(v);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::vector<std::string>& names = isa_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw UsageError(std::string("BANDWALL_MAX_ISA='") + v + "' is not a variant (use generic, avx2 or avx512)");
  return name;
}

bool cpu_supports_isa(const std::string& name) {
  if (name == "generic") return true;
  if (name == "avx2") return has("avx2") && has("fma");
  if (name == "avx512") return has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl") && has("fma");
  return false;
}

bool cpu_has_isa(const std::string& name) {
  if (!cpu_supports_isa(name)) return false;
  const std::string ceiling = isa_ceiling();
  return ceiling.empty() || variant_bits(name) <= variant_bits(ceiling);
}

std::vector<std::string> cpu_isas() {
  std::vector<std::string> out;
  for (const std::string& n : isa_names())
    if (cpu_has_isa(n)) out.push_back(n);
  return out;
}

std::string choose_isa(const std::string& requested, const std::vector<std::string>& built) {
  for (const std::string& n : built)
    if ((is_automatic(requested) || requested == n) && cpu_has_isa(n)) return n;
  return "";
}

std::string isa_refusal(const std::string& requested, const std::vector<std::string>& built) {
  const std::vector<std::string>& names = isa_names();
  if (!is_automatic(requested) && std::find(names.begin(), names.end(), requested) == names.end())
    return "unknown isa '" + requested + "' (use auto, measure, avx512, avx2 or generic)";
  if (!is_automatic(requested) && std::find(built.begin(), built.end(), requested) == built.end())
    return "isa '" + requested + "' is not built into this binary (the compiler lacks its target flags)";
  std::string offered;
  for (const std::string& n : cpu_isas()) offered += (offered.empty() ? "" : ", ") + n;
  if (!is_automatic(requested) && cpu_supports_isa(requested))
    return "isa '" + requested + "' is above the ceiling BANDWALL_MAX_ISA=" + isa_ceiling() + " (allowed: " + offered +
           ")";
  return "isa '" + requested + "' is not supported by this CPU (it offers " + offered + ")";
}

const char* isa_syntax() {
  return "instruction set of the kernel: auto (the table of measured choices for this CPU, else a choice measured "
         "before on data of the same size class, else every variant timed on the run's own data, one replacing the "
         "machine model's default only when faster beyond noise), measure (time them now whatever the table or "
         "cache say), avx512, avx2 or generic (the build's baseline)";
}

nlohmann::json isa_json() {
  nlohmann::json feats = nlohmann::json::object();
  for (const Feature& f : features()) feats[f.name] = f.present;
  std::vector<std::string> cpu;
  for (const std::string& n : isa_names())
    if (cpu_supports_isa(n)) cpu.push_back(n);
  const std::string ceiling = isa_ceiling();
  return {{"offered", cpu_isas()},
          {"cpu_offered", cpu},
          {"ceiling", ceiling.empty() ? nlohmann::json(nullptr) : nlohmann::json(ceiling)},
          {"features", feats}};
}

}  // namespace bw
