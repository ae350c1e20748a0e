// Which instruction-set variant `--isa auto` runs for one kernel, chosen by speed rather than by
// the widest vectors: the variant a table of measured choices names for this micro-architecture
// (common/isa_choices.json, one row per micro-architecture of common/machine.cpp, each entry with
// the bench command and the figures that filled it); for a CPU or kernel the table does not know,
// a choice measured before on this machine (a cache file per topology digest); otherwise a short
// measurement of every variant the binary carries and the CPU offers, which is then cached; and
// when the kernel has no measurement, the widest variant. A name given with --isa is forced.
//
// Kernels name their entries by a key: "stream.<kernel>.<nt|regular>", "iso3dfd.rows",
// "peak.fma". The choice, with how it was made and on what figures, goes into config.isa_choice.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/machine.hpp"
#include "common/record.hpp"

namespace bw {

struct IsaChoice {
  std::string isa;  // the variant chosen; empty: none (the request is refused)
  // "forced" (--isa named it), "table" (a row of isa_choices.json), "cached" (measured earlier on
  // this machine), "measured" (timed now), "capability" (the widest offered: nothing measured), or
  // "only" (the one variant offered).
  std::string how;
  std::string why;  // one line
  json figures;     // {variant: figure} the choice was made on (empty when none); unit in `unit`
  std::string unit;
  json source;  // table: {microarch, command, measured, cpu, note}; cached: {file, measured}
  json to_json(const std::string& key) const;
};

// A short timing of one variant (by name) for a kernel: higher is better (GB/s, GFlop/s,
// MPoints/s). Empty: the kernel cannot be timed here (the choice falls back to the widest).
using IsaMeasure = std::function<double(const std::string& isa)>;

// The table of measured choices: the built-in one (isa_choices.json, compiled in), or the file
// $BANDWALL_ISA_CHOICES names (for trying a new row before contributing it). UsageError when that
// file is unreadable or not such a table.
const json& isa_choice_table();

// The entry of table for key on the micro-architecture called microarch, or nullptr.
const json* table_entry(const json& table, const std::string& microarch, const std::string& key);

// Where measured choices are cached: $BANDWALL_CACHE_DIR, else $XDG_CACHE_HOME/bandwall, else
// ~/.cache/bandwall; one file per machine, isa-choices-<topology digest>.json.
std::string isa_cache_path();

// The choice for key among built (the variants of the binary, widest first) for requested ("auto"
// or a name). offered: the variants this CPU runs (cpu_isas() by default; tests pass others),
// microarch: this CPU's row name ("" when common/machine.cpp knows no row), cache_path: as
// isa_cache_path(), "" for no cache. isa is empty when the request is refused (isa_refusal says
// why).
IsaChoice choose_variant(const std::string& requested, const std::string& key, const std::vector<std::string>& built,
                         const IsaMeasure& measure, const std::string& unit, const json& table,
                         const std::string& microarch, const std::vector<std::string>& offered,
                         const std::string& cache_path);

// The same on this machine: the built-in table, this CPU's micro-architecture and its cache.
IsaChoice choose_variant(const std::string& requested, const std::string& key, const std::vector<std::string>& built,
                         const IsaMeasure& measure = {}, const std::string& unit = "");

}  // namespace bw
