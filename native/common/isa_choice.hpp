// Which instruction-set variant `--isa auto` runs for one kernel. The default is the table of
// measured choices (common/isa_choices.json, one row per micro-architecture of common/machine.cpp,
// each entry with the bench command and the figures that filled it), else the machine model's
// prediction (the widest variant whose vectors the core's model executes at no lower throughput).
// A CPU or kernel the table does not know is measured on the run's own problem: every variant in
// interleaved rounds, and one replaces the default only when it is faster beyond noise (the
// decision rule, common/decide.hpp). What a race settles is cached per micro-architecture, kernel
// and size class (the memory level the run's data live in), with its date and evidence: the default
// when no variant beat it beyond noise (later runs take it without timing); a winner first as
// unconfirmed, which runs, and the next run races the default against it alone: confirmed when it
// wins again (then taken without timing), else the default stands. Among several variants one
// passes the rule by chance more often than the rule's 10%; the second race keeps such a chance
// from deciding later runs, and a run within noise from deciding differently from the next.
// `--isa measure` measures every variant again whatever the table or cache say; a name given with
// --isa is forced.
//
// Kernels name their entries by a key: "stream.<kernel>.<nt|regular>", "iso3dfd.rows", "peak.fma".
// The choice, with how it was made and on what figures, goes into config.isa_choice.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/isa.hpp"
#include "common/machine.hpp"
#include "common/record.hpp"

namespace bw {

struct IsaChoice {
  std::string isa;  // the variant chosen; empty: none (the request is refused)
  // "forced" (--isa named it), "table" (a row of isa_choices.json), "cached" (measured decisively
  // earlier on this machine for the same size class), "measured" (timed now), "model" (the machine
  // model's prediction: nothing measured), or "only" (the one variant offered).
  std::string how;
  std::string why;  // one line
  json figures;     // {variant: figure} the choice was made on (medians; empty when none); unit in `unit`
  std::string unit;
  json source;    // table: {microarch, command, measured, cpu}; cached: {file, measured}
  json decision;  // measured or cached: the decision rule's record (common/decide.hpp)
  std::string size_class;
  json to_json(const std::string& key) const;
};

// A short timing of one variant (by name) for a kernel on the run's own problem: higher is better
// (GB/s, GFlop/s, MPoints/s).
using IsaMeasure = std::function<double(const std::string& isa)>;

// What a run asks for.
struct VariantRequest {
  std::string requested = "auto";  // auto, measure, or a variant's name
  std::string key;                 // stream.triad.nt, iso3dfd.rows, peak.fma
  std::vector<std::string> built;  // the variants of the binary, widest first
  std::string unit;
  std::string size_class;  // where the run's data live (common/size_class.hpp): l2, llc, dram, core
};

// The machine the choice is made for: tests pass another.
struct ChoiceContext {
  const json* table = nullptr;           // the table of measured choices
  const Microarch* microarch = nullptr;  // this CPU's row (nullptr: no model knows it)
  std::string cpu_key;                   // the cache's name of this CPU: the row's name, else vendor-family-model
  std::vector<std::string> offered;      // the variants this CPU runs
  std::string cache_path;                // "" for no cache
  // This machine: the built-in table, this CPU's model (BANDWALL_MICROARCH may force one), its
  // variants and its cache file.
  static ChoiceContext here();
};

// The table of measured choices: the built-in one (isa_choices.json, compiled in), or the file
// $BANDWALL_ISA_CHOICES names (for trying a new row before contributing it). UsageError when that
// file is unreadable or not such a table.
const json& isa_choice_table();

// The row of table for the micro-architecture called microarch, or nullptr.
const json* table_row(const json& table, const std::string& microarch);
// The entry of table for key on the micro-architecture called microarch (its row's "kernels": the
// variants, shapes and prefetch distances; with field "models": the figures a model of bandwall
// plans with, such as "iso3dfd.time_model"), or nullptr.
const json* table_entry(const json& table, const std::string& microarch, const std::string& key,
                        const char* field = "kernels");

// Where a figure of the table came from, for a record's words: "the table of measured choices,
// <microarch>, <what> (<measured>: <command>)", the date and command those of `sub` (an object
// within the entry), else the entry's own.
std::string table_citation(const std::string& microarch, const std::string& what, const json& entry,
                           const json* sub = nullptr);

// Where measured choices are cached: $BANDWALL_CACHE_DIR, else $XDG_CACHE_HOME/bandwall, else
// ~/.cache/bandwall; one file per machine, isa-choices-<topology digest>.json.
std::string isa_cache_path();

// The machine model's prediction among candidates (widest first): the widest whose vector width
// the model executes at no lower FP throughput per cycle than a narrower one; the widest when no
// model knows the CPU. why says which.
std::string model_default(const std::vector<std::string>& candidates, const Microarch* m, std::string* why = nullptr);

// The choice; isa is empty when the request is refused (isa_refusal says why).
IsaChoice choose_variant(const VariantRequest& request, const IsaMeasure& measure, const ChoiceContext& machine);

}  // namespace bw
