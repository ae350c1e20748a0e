// The command line of bandwall-pipeline and its checks: one clear UsageError per bad input
// (unknown or unavailable engine, depth or block of zero, block larger than a thread's share,
// engine CPUs that overlap the compute CPUs).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/affinity.hpp"
#include "common/harness.hpp"
#include "engine/pipeline.hpp"
#include "stream/record.hpp"

namespace bw::pipeline {

// The strategies (--strategy; the manifest's "strategies"), the first the default.
struct StrategyRow {
  const char* name;
  Strategy strategy;
  bool cpu_streams_first_input;  // the core reads src1 itself; the engine fetches the others
  const char* help;
};
const std::vector<StrategyRow>& strategies();
Strategy parse_strategy(const std::string& text);
const char* strategy_name(Strategy s);

// The STREAM run options (threads: the compute threads), then the engine's.
struct Options : stream::RunOptions {
  std::string engine = engine::default_engine(), engine_cpus, engine_mode, depth, block = "1M",
              strategy = strategies().front().name;
  bool list_engines = false;
};

// Everything a run needs, resolved and checked.
struct Setup {
  Plan plan;
  Binding binding;               // the compute threads
  std::vector<int> engine_cpus;  // helper CPUs (empty for other engines)
  std::string engine_mode;       // copy or touch
  std::size_t n = 0;             // elements per array
  int reps = 0;
  bool depth_default = false;
};

// Default queue depth: 2 for triad (the seed's companion code), 4 otherwise.
int default_depth(const std::string& kernel);

Setup resolve(const Options& o);

}  // namespace bw::pipeline
