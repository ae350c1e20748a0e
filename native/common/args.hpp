// Parsing of the inputs every executable shares: sizes with units, counts (CPU lists: common/cpulist.hpp).
// Each parser throws bw::UsageError with a message that names the offending text.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.hpp"

namespace CLI {
class App;
}

namespace bw {

// "512M", "2G", "64k", "1.5GiB", "1000000" (bytes). Units are binary (K = 1024).
std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

// A whole number in [lo, hi]; what names the option in the message.
long parse_int(std::string_view text, std::string_view what, long lo, long hi);

// CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

// Throws UsageError unless every CPU of list is in allowed_cpus().
void check_cpus_allowed(const std::vector<int>& cpus);

// Bytes of memory available now (MemAvailable), for refusing sizes before allocating.
std::uint64_t available_memory();

// Refuses (UsageError) a total allocation that does not fit in available memory, naming both.
void check_fits_in_memory(std::uint64_t bytes, std::string_view what);

// After CLI11 has parsed: refuses (UsageError) every option given with an empty or blank value
// ("--size ''"), which would otherwise read as the option left out and silently pick its default.
void refuse_empty_options(const CLI::App& app);

// The command-line step of every executable's main (inside guarded_main): parses argv into app,
// refusing a parse error or an empty option value with UsageError (exit 2). Returns false when
// --help was asked for and printed: the caller then exits 0.
bool parse_command_line(CLI::App& app, int argc, const char* const* argv);

// A whole main: guarded_main(prog) around a CLI11 app described by about, filled by add, parsed by
// parse_command_line, then run (not called after --help).
int tool_main(const char* prog, const std::string& about, int argc, const char* const* argv,
              const std::function<void(CLI::App&)>& add, const std::function<int()>& run);

// The one CPU-list formatter: {0,1,2,3,8} -> "0-3,8" (runs as ranges, in the order given).
std::string format_cpu_list(const std::vector<int>& cpus);
// Numbers joined as written: {0,2,3} -> "0,2,3" (NUMA node lists of placements).
std::string join(const std::vector<int>& values, std::string_view sep = ",");
std::string format_bytes(std::uint64_t bytes);
// Words as a message lists them: {"a", "b", "c"} -> "a, b or c".
std::string or_list(const std::vector<std::string>& words);

// The row of a table of words (rows with a `name`) that text names; UsageError "unknown <what>
// 'text' (use a, b or c)" otherwise.
template <class Row>
const Row& find_word(const std::vector<Row>& rows, const std::string& text, const std::string& what) {
  std::vector<std::string> names;
  for (const Row& r : rows) {
    if (text == r.name) return r;
    names.emplace_back(r.name);
  }
  throw UsageError("unknown " + what + " '" + text + "' (use " + or_list(names) + ")");
}

}  // namespace bw
