#include "engine/options.hpp"

#include <algorithm>

#include "common/args.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/topology.hpp"

namespace bw::pipeline {

int default_depth(const std::string& kernel) { return kernel == "triad" ? 2 : 4; }

const std::vector<StrategyRow>& strategies() {
  static const std::vector<StrategyRow> rows = {
      {"all", Strategy::All, false, "the engine fetches every input"},
      {"split", Strategy::Split, true, "the core streams the first input itself, the engine fetches the others"},
  };
  return rows;
}

Strategy parse_strategy(const std::string& text) { return find_word(strategies(), text, "strategy").strategy; }

const char* strategy_name(Strategy s) {
  for (const StrategyRow& r : strategies())
    if (r.strategy == s) return r.name;
  return "?";
}

namespace {

constexpr std::uint64_t kBlockUnit = 4096;

// The engines that run on CPUs of their own (helper), as a message names them.
std::string engines_with_cpus() {
  std::string names;
  for (const engine::Backend& b : engine::backends())
    if (b.takes_cpus && !b.hidden) names += (names.empty() ? "" : " or ") + std::string(b.name);
  return names;
}

// The helper's CPUs: as given, or the allowed CPUs the compute threads leave free.
std::vector<int> helper_cpus(const Options& o, const Binding& b) {
  std::vector<int> cpus;
  if (!o.engine_cpus.empty()) {
    cpus = resolve_cpu_list(o.engine_cpus);
    check_cpus_allowed(cpus);
  } else {
    for (int c : allowed_cpus())
      if (std::find(b.cpus.begin(), b.cpus.end(), c) == b.cpus.end()) cpus.push_back(c);
    if (cpus.empty())
      throw UsageError(
          "no CPU is left for the helper engine: every allowed CPU computes (give --engine-cpus and "
          "fewer --threads or --cpus)");
  }
  for (int c : cpus)
    if (std::find(b.cpus.begin(), b.cpus.end(), c) != b.cpus.end())
      throw UsageError("engine CPU " + std::to_string(c) + " is also a compute CPU (" + format_cpu_list(b.cpus) +
                       "): helpers need cores of their own");
  return cpus;
}

}  // namespace

Setup resolve(const Options& o) {
  Setup s;
  const stream::Kernel& k = stream::find_kernel(o.kernel);
  s.plan.kernel = &k;
  s.plan.nt = stream::parse_stores(o.stores) && k.writes != 0;
  s.plan.strategy = parse_strategy(o.strategy);
  s.depth_default = o.depth.empty();
  s.plan.depth =
      s.depth_default ? default_depth(o.kernel) : static_cast<int>(parse_int(o.depth, "--queue-depth", 1, 64));
  std::uint64_t block = parse_size(o.block, "--block");
  if (block % kBlockUnit)
    throw UsageError("--block '" + o.block + "' is not a multiple of 4 KiB (blocks are whole pages)");
  s.plan.block_elems = block / sizeof(double);
  s.reps = static_cast<int>(parse_int(o.reps, "--reps", 1, 1 << 24));

  // The engine: known, available here, and able to do what the mode asks.
  const engine::Backend& be = engine::find(o.engine);
  engine::Availability av = be.probe();
  if (!av.available) throw UsageError(std::string(be.name) + ": unavailable: " + av.reason);
  s.engine_mode = o.engine_mode.empty() ? std::string(be.modes.front()) : o.engine_mode;
  if (s.engine_mode != "copy" && s.engine_mode != "touch")
    throw UsageError("unknown engine mode '" + s.engine_mode + "' (use copy or touch)");
  if (std::find(be.modes.begin(), be.modes.end(), s.engine_mode) == be.modes.end())
    throw UsageError("engine " + o.engine + " has no " + s.engine_mode + " mode (" + std::string(be.summary) +
                     "; use --engine-mode " + std::string(be.modes.front()) + " or leave it out)");
  s.plan.kind = s.engine_mode == "copy" ? engine::Kind::Copy : engine::Kind::Fill;

  int threads = o.threads.count();
  if (threads == 0 && o.threads.cpus.empty() && be.takes_cpus) {
    // Without a count, the compute threads take the CPUs the helpers leave.
    std::vector<int> engine_cpus = o.engine_cpus.empty() ? std::vector<int>{} : resolve_cpu_list(o.engine_cpus);
    int allowed = static_cast<int>(allowed_cpus().size());
    threads = std::max(1, o.engine_cpus.empty() ? allowed / 2 : allowed - static_cast<int>(engine_cpus.size()));
  }
  s.binding = resolve_binding(threads, o.threads.cpus, o.threads.bind);
  if (be.takes_cpus)
    s.engine_cpus = helper_cpus(o, s.binding);
  else if (!o.engine_cpus.empty())
    throw UsageError("--engine-cpus is for the " + engines_with_cpus() + " engine, not " + o.engine);

  const std::vector<int> cpus = s.binding.cpus.empty() ? allowed_cpus() : s.binding.cpus;
  std::uint64_t size = o.size.empty() ? 4 * Topology::instance().llc_bytes(cpus) : parse_size(o.size, "--size");
  if (size < sizeof(double)) throw UsageError("--size '" + o.size + "' is smaller than one double (8 bytes)");
  s.n = size / sizeof(double);
  const std::uint64_t share = s.n / static_cast<std::uint64_t>(s.binding.threads) * sizeof(double);
  if (block > share)
    throw UsageError("--block " + format_bytes(block) + " is larger than each thread's share of an array (" +
                     format_bytes(share) + " of " + format_bytes(s.n * sizeof(double)) + " over " +
                     std::to_string(s.binding.threads) + " threads)");
  return s;
}

}  // namespace bw::pipeline
