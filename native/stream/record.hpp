// The parts of a STREAM record that bandwall-stream and bandwall-pipeline both write: bandwidth
// statistics with the traffic accounting, the kernel's configuration, the validation, and the
// record itself with the page map of every array.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/affinity.hpp"
#include "common/harness.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "stream/kernels.hpp"
#include "stream/runner.hpp"

namespace CLI {
class App;
}

namespace bw::stream {

// The store kinds of a kernel that writes (--stores; the manifest's "stores"), the first the default.
struct StoreKind {
  const char* name;
  bool nt;
  const char* help;
};
const std::vector<StoreKind>& store_kinds();
// Whether the store kind called text is non-temporal; UsageError naming the kinds otherwise.
bool parse_stores(const std::string& text);

// What every executable that runs a STREAM kernel (bandwall-stream, bandwall-pipeline) takes:
// the kernel, its arrays and repetitions, the threads (auto allowed) and the memory options.
struct RunOptions {
  std::string kernel = "triad", stores = store_kinds().front().name, size, reps = "20";
  ThreadOptions threads;
  MemoryOptions memory;
};
// --kernel, --stores, --size, --reps, the thread and the memory options, with one help text each.
void add_run_options(CLI::App& app, RunOptions& o);

// result: bandwidth best/median/avg/min/max, GFlop/s, times, and the traffic with and without
// write-allocate (counted only for regular stores of a kernel that writes).
json bandwidth_result(const Kernel& k, std::size_t n, const std::vector<double>& times, std::size_t dropped, bool nt,
                      const std::vector<int>& threads_ran_on);

// config: the kernel, sizes, stores, repetitions, threads and the instruction set that ran.
json kernel_config(const Kernel& k, std::size_t n, int arrays, bool nt, const std::string& stores_requested, int reps,
                   int threads, bool size_default);

json validation_json(const Kernel& k, const Validation& v);

// The kernel table (name, formula, bytes and flops per element, whether it stores): what
// bandwall-stream --list-kernels and the manifest print for the front end.
json kernels_json();

}  // namespace bw::stream
