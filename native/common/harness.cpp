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

std::vector<Binding> ThreadOptions::candidates(int max_threads) const {
  std::vector<Binding> out;
  for (int n : thread_candidates(max_threads)) out.push_back(resolve_for(n));
  return out;
}

void add_thread_options(CLI::App& app, ThreadOptions& o, bool allow_auto) {
  o.auto_allowed = allow_auto;
  app.add_option("--threads", o.threads,
                 allow_auto
                     ? "threads, or auto: the first steps time a few counts in interleaved rounds, and the fewest "
                       "shown to be within 3% of the others beyond noise run the rest, else every thread "
                       "(default: every CPU of --cpus or --bind)"
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
