#include "common/harness.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "common/args.hpp"
#include "common/cpulist.h"
#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/policies.hpp"

namespace bw {

const char* cpus_help() {
  // From the grammar's table (common/cpulist.h): an example of every form, as the front end says it.
  static const std::string text = [] {
    std::size_t n = 0;
    const bw_cpulist_form* forms = bw_cpulist_forms(&n);
    std::string out = "CPU of each thread in order (wins over --bind): ";
    for (std::size_t i = 0; i < n; ++i)
      out += std::string(i ? ", " : "") + forms[i].example + " (" + forms[i].name + ")";
    return out;
  }();
  return text.c_str();
}

int ThreadOptions::count() const {
  return threads.empty() || automatic() ? 0 : static_cast<int>(parse_int(threads, "--threads", 1, 1 << 16));
}

Binding ThreadOptions::resolve() const { return resolve_binding(count(), cpus, bind); }

Binding ThreadOptions::resolve_for(int n) const { return resolve_binding(n, cpus, bind); }

std::vector<int> thread_candidates(int max) {
  std::vector<int> c;
  for (int n = 1; n <= max; n = n < 4 ? n + 1 : 2 * n) c.push_back(n);
  if (c.empty() || c.back() != max) c.push_back(max);
  return c;
}

std::size_t fewest_within(const std::vector<int>& counts, const std::vector<double>& rates, double tolerance) {
  if (counts.empty() || counts.size() != rates.size()) throw RunError("thread choice: no rates to choose from");
  const double best = *std::max_element(rates.begin(), rates.end());
  std::size_t pick = 0;
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (rates[i] >= (1.0 - tolerance) * best && (rates[pick] < (1.0 - tolerance) * best || counts[i] < counts[pick]))
      pick = i;
  return pick;
}

std::vector<Binding> ThreadOptions::candidates(int max_threads) const {
  std::vector<Binding> out;
  for (int n : thread_candidates(max_threads)) out.push_back(resolve_for(n));
  return out;
}

ThreadChoice choose_threads(const std::vector<Binding>& bindings, const std::function<double(int)>& trial,
                            const std::string& unit, int rounds, const std::string& note) {
  if (bindings.empty()) throw RunError("thread choice: no candidate thread counts");
  std::vector<int> counts;
  for (const auto& b : bindings) counts.push_back(b.threads);
  const int max_threads = counts.back();
  std::vector<std::vector<double>> rates(counts.size());
  ThreadChoice out;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < counts.size(); ++j) {  // rotated: no count always runs first
      const std::size_t i = (j + static_cast<std::size_t>(r)) % counts.size();
      apply_binding(bindings[i]);
      rates[i].push_back(trial(counts[i]));
      ++out.trials;
    }
  std::vector<double> best(counts.size());
  json candidates = json::array();
  for (std::size_t i = 0; i < counts.size(); ++i) {
    best[i] = *std::max_element(rates[i].begin(), rates[i].end());
    candidates.push_back({{"threads", counts[i]}, {"rate", best[i]}, {"rates", rates[i]}});
  }
  const std::size_t pick = fewest_within(counts, best, kThreadsTolerance);
  const double top = *std::max_element(best.begin(), best.end());
  char why[256];
  std::snprintf(why, sizeof why, "%d of %d threads: %.4g %s, %.1f%% of the best (%.4g); the fewest within %.0f%%",
                counts[pick], max_threads, best[pick], unit.c_str(), 100.0 * best[pick] / top, top,
                100.0 * kThreadsTolerance);
  out.binding = bindings[pick];
  out.seen = apply_binding(out.binding);
  out.record = {{"how", "feedback"},
                {"rule", "the fewest threads whose best rate is within 3% of the best candidate's"},
                {"tolerance", kThreadsTolerance},
                {"unit", unit},
                {"rounds", rounds},
                {"trial_iterations", out.trials},
                {"candidates", candidates},
                {"chosen", counts[pick]},
                {"max_threads", max_threads},
                {"why", why},
                {"note", note}};
  return out;
}

void add_thread_options(CLI::App& app, ThreadOptions& o, bool allow_auto) {
  o.auto_allowed = allow_auto;
  app.add_option("--threads", o.threads,
                 allow_auto ? "threads, or auto: the first iterations time a few counts and the fewest within 3% of "
                              "the best run the rest (default: every CPU of --cpus or --bind)"
                            : "threads (default: every CPU of --cpus or --bind)");
  app.add_option("--cpus", o.cpus, cpus_help());
  app.add_option("--bind", o.bind, binding_syntax())->capture_default_str();
}

Placement MemoryOptions::resolve() const {
  Placement p = Placement::parse(placement);
  p.pages = parse_pages(pages);
  return p;
}

void add_memory_options(CLI::App& app, MemoryOptions& o) {
  app.add_option("--placement", o.placement, placement_syntax())->capture_default_str();
  app.add_option("--pages", o.pages, "huge (transparent huge pages asked for), base (4 KiB pages) or system")
      ->capture_default_str();
}

void add_isa_option(CLI::App& app, std::string& isa) {
  app.add_option("--isa", isa, isa_syntax())->capture_default_str();
}

}  // namespace bw
