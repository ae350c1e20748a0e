// The options every measuring executable shares, added to its command line in one call each, with
// one meaning and one help text everywhere:
//   threads  --threads N, --cpus LIST (common/cpulist.hpp), --bind POLICY (common/policies.hpp)
//   memory   --placement POLICY, --pages huge|base|system
//   isa      --isa auto|avx512|avx2|generic (common/isa.hpp, common/dispatch.hpp)
// and their resolution into what the run uses (UsageError, exit 2, for a bad value).
#pragma once
#include <string>

#include "common/affinity.hpp"
#include "common/placement.hpp"

namespace CLI {
class App;
}

namespace bw {

struct ThreadOptions {
  std::string threads, cpus, bind = "compact";
  // The CPU of each thread: --cpus wins over --bind; --threads caps the list or sizes the policy.
  Binding resolve() const;
  // --threads as a number (0 when not given).
  int count() const;
};
void add_thread_options(CLI::App& app, ThreadOptions& o);

struct MemoryOptions {
  std::string placement = "first-touch", pages = "system";
  Placement resolve() const;
};
void add_memory_options(CLI::App& app, MemoryOptions& o);

void add_isa_option(CLI::App& app, std::string& isa);

// The help of every --cpus option.
const char* cpus_help();

}  // namespace bw
