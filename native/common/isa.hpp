// Instruction sets of the CPU this process runs on (CPUID, through the compiler's
// __builtin_cpu_supports), named as the kernels with run-time dispatch name their variants.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bw {

// The variants a dispatching kernel can carry, best first:
//   avx512   AVX-512 F, BW, DQ and VL (16 floats per vector)
//   avx2     AVX2 and FMA (8 floats per vector)
//   generic  the build's own baseline (-march), left to the compiler's vectoriser
const std::vector<std::string>& isa_names();

// Vector bits of a variant's name (avx512 512, avx2 256, generic 128).
int variant_bits(const std::string& isa);

// "auto" or "measure": the variant is chosen (common/isa_choice.hpp), not named.
bool is_automatic(const std::string& requested);

// The dispatch ceiling: BANDWALL_MAX_ISA=generic|avx2|avx512 (case aside), as oneDNN's
// ONEDNN_MAX_CPU_ISA and MKL's MKL_ENABLE_INSTRUCTIONS: no kernel dispatches a variant wider than it.
// A maximum: one above what the CPU runs changes nothing. Empty when unset (or set empty); UsageError
// (exit 2) for any other value. Read afresh at each call (tests set it).
std::string isa_ceiling();

// Whether the CPU itself executes the named variant, whatever the ceiling (unknown names: false).
bool cpu_supports_isa(const std::string& name);

// Whether this process may run the named variant: the CPU executes it and the ceiling allows it
// (unknown names: false; generic: always).
bool cpu_has_isa(const std::string& name);

// The variants this process may run (the CPU's, under the ceiling), best first.
std::vector<std::string> cpu_isas();

// The variant a dispatching kernel runs for requested ("auto" or a name) among those built into the
// binary (built, best first): "auto" names the best this CPU runs. Empty when there is none.
std::string choose_isa(const std::string& requested, const std::vector<std::string>& built);

// Why choose_isa(requested, built) gave nothing, in one line (unknown name, not built in, above the
// ceiling, or not offered by this CPU).
std::string isa_refusal(const std::string& requested, const std::vector<std::string>& built);

// The help text of every --isa option.
const char* isa_syntax();

// For the topology record: the variants offered (under the ceiling), those the CPU itself runs, the
// ceiling (null when none) and the CPUID features they are made of.
nlohmann::json isa_json();

}  // namespace bw
