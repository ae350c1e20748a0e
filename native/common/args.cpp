#include "common/args.hpp"

#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "common/errors.hpp"

namespace bw {
namespace {

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

long to_long(std::string_view text, std::string_view what) {
  long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty())
    throw UsageError(std::string(what) + " " + in_quotes(text) + " is not a whole number");
  return v;
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  std::string t = lower(text);
  std::size_t pos = 0;
  while (pos < t.size() && (std::isdigit(static_cast<unsigned char>(t[pos])) || t[pos] == '.')) ++pos;
  if (pos == 0) {
    if (!t.empty() && t[0] == '-') throw UsageError(std::string(what) + " " + in_quotes(text) + " is negative");
    throw UsageError(std::string(what) + " " + in_quotes(text) + " is not a size (examples: 4096, 64K, 512M, 2G)");
  }
  double number = 0;
  try {
    std::size_t used = 0;
    number = std::stod(t.substr(0, pos), &used);
    if (used != pos) throw std::invalid_argument("x");
  } catch (const std::exception&) {
    throw UsageError(std::string(what) + " " + in_quotes(text) + " is not a size (examples: 4096, 64K, 512M, 2G)");
  }
  std::string unit = t.substr(pos);
  static const std::pair<const char*, double> units[] = {{"", 1.0},
                                                         {"b", 1.0},
                                                         {"k", 1024.0},
                                                         {"kb", 1024.0},
                                                         {"kib", 1024.0},
                                                         {"m", 1048576.0},
                                                         {"mb", 1048576.0},
                                                         {"mib", 1048576.0},
                                                         {"g", 1073741824.0},
                                                         {"gb", 1073741824.0},
                                                         {"gib", 1073741824.0},
                                                         {"t", 1099511627776.0},
                                                         {"tb", 1099511627776.0},
                                                         {"tib", 1099511627776.0}};
  for (auto& [name, mult] : units) {
    if (unit == name) {
      double bytes = number * mult;
      if (!std::isfinite(bytes) || bytes > 1.8e19)
        throw UsageError(std::string(what) + " " + in_quotes(text) + " is too large");
      if (bytes < 1.0) throw UsageError(std::string(what) + " " + in_quotes(text) + " must be greater than zero");
      return static_cast<std::uint64_t>(bytes);
    }
  }
  throw UsageError(std::string(what) + " " + in_quotes(text) + " has an unknown unit " + in_quotes(unit) +
                   " (use K, M, G or T)");
}

long parse_int(std::string_view text, std::string_view what, long lo, long hi) {
  std::string t(text);
  if (!t.empty() && t[0] == '+') t.erase(0, 1);
  long v = to_long(t, what);
  if (v < lo || v > hi)
    throw UsageError(std::string(what) + " " + in_quotes(text) + " is out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return v;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

void check_cpus_allowed(const std::vector<int>& cpus) {
  auto allowed = allowed_cpus();
  for (int c : cpus)
    if (!std::binary_search(allowed.begin(), allowed.end(), c))
      throw UsageError("CPU " + std::to_string(c) +
                       " is not available to this process (allowed: " + format_cpu_list(allowed) + ")");
}

std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  long pages = sysconf(_SC_AVPHYS_PAGES);
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

void check_fits_in_memory(std::uint64_t bytes, std::string_view what) {
  std::uint64_t avail = available_memory();
  if (bytes > avail)
    throw UsageError(std::string(what) + " needs " + format_bytes(bytes) + " but only " + format_bytes(avail) +
                     " of memory is available");
}

void refuse_empty_options(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    // Not given, a flag, or a positional (whose own parser names the parameter it stands for).
    if (opt->count() == 0 || opt->get_items_expected_max() == 0 || opt->get_positional()) continue;
    for (const std::string& value : opt->results())
      if (value.find_first_not_of(" \t\n") == std::string::npos)
        throw UsageError(opt->get_name() + " is empty: give it a value or leave it out for the default");
  }
}

bool parse_command_line(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  refuse_empty_options(app);
  return true;
}

int tool_main(const char* prog, const std::string& about, int argc, const char* const* argv,
              const std::function<void(CLI::App&)>& add, const std::function<int()>& run) {
  return guarded_main(prog, [&] {
    CLI::App app{about};
    add(app);
    return parse_command_line(app, argc, argv) ? run() : 0;
  });
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string join(const std::vector<int>& values, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(values[i]);
  }
  return out;
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string or_list(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

}  // namespace bw
