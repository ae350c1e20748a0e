#include "common/harness.hpp"

#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/isa.hpp"
#include "common/policies.hpp"

namespace bw {

const char* cpus_help() {
  return "CPU of each thread, in order (wins over --bind): taskset's 0-3,8 or 3,2,1,0, or likwid-pin's domains "
         "S0:0-3, M1:0,1, N:0-7, C0:0-1, joined with @, and E:N:4:1:2 expressions";
}

int ThreadOptions::count() const {
  return threads.empty() ? 0 : static_cast<int>(parse_int(threads, "--threads", 1, 1 << 16));
}

Binding ThreadOptions::resolve() const { return resolve_binding(count(), cpus, bind); }

void add_thread_options(CLI::App& app, ThreadOptions& o) {
  app.add_option("--threads", o.threads, "threads (default: every CPU of --cpus or --bind)");
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
