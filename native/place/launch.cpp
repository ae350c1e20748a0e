// bandwall-launch: runs a command as one or more processes at the same time, each bound to a set
// of CPUs and a NUMA memory policy (like `numactl -C CPUS -m N`), and prints one record with each
// process's exit status, wall time and output. `bandwall numa-check` plans its modes with it.
//
//   bandwall-launch --proc CPUS@POLICY [--proc ...] -- COMMAND [ARGS...]
//     CPUS    a CPU list (0-3,8) or "all" (leave the CPU set alone)
//     POLICY  default or a placement with a memory mode: bind:N, interleave[:N,M...], preferred:N
//   In ARGS, {cpus}, {ncpus} and {rank} become the process's CPU list, CPU count and index.
//   --usage-errors: a process that exits 2 (a bandwall executable refusing its arguments) makes the
//   launcher exit 2 with that process's message, so bad parameters of a built-in read as bad input.
#include <CLI/CLI.hpp>
#include <cstring>

#include "common/args.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/ompenv.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "place/spawn.hpp"

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

bw::ProcSpec parse_proc(const std::string& text, const std::vector<std::string>& command, std::size_t rank) {
  auto at = text.find('@');
  if (at == std::string::npos)
    throw bw::UsageError("--proc '" + text + "' must read CPUS@POLICY (e.g. 0-3@bind:0, all@interleave)");
  std::string cpus = text.substr(0, at), policy = text.substr(at + 1);
  bw::ProcSpec spec;
  std::vector<int> shown;
  if (cpus != "all") {
    spec.cpus = bw::resolve_cpu_list(cpus);
    bw::check_cpus_allowed(spec.cpus);
    shown = spec.cpus;
  } else {
    shown = bw::allowed_cpus();
  }
  if (policy != "default") {
    auto p = bw::Placement::parse(policy);
    if (p.policy->mode < 0)
      throw bw::UsageError("--proc '" + text + "': a process policy is default, " + bw::placement_syntax(true));
    spec.memory = p;
  }
  for (auto& a : command) {
    std::string s = replace_all(a, "{cpus}", bw::format_cpu_list(shown));
    s = replace_all(s, "{ncpus}", std::to_string(shown.size()));
    spec.argv.push_back(replace_all(s, "{rank}", std::to_string(rank)));
  }
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-launch", [&] {
    int split = 1;
    while (split < argc && std::strcmp(argv[split], "--") != 0) ++split;
    CLI::App app{"bandwall-launch: run a command as processes bound to CPUs and NUMA memory policies"};
    std::vector<std::string> procs;
    bool usage_errors = false;
    app.add_option("--proc", procs, "CPUS@POLICY of one process (repeat for processes that run at the same time)")
        ->required();
    app.add_flag("--usage-errors", usage_errors,
                 "a process exiting 2 (refusing its arguments) makes the launcher exit 2 with its message");
    app.footer("After the options: -- COMMAND [ARGS...], the command every process runs.");
    if (!bw::parse_command_line(app, split, argv)) return 0;
    if (split >= argc - 1)
      throw bw::UsageError("usage: bandwall-launch --proc CPUS@POLICY [--proc ...] -- COMMAND [ARGS...]");
    std::vector<std::string> command(argv + split + 1, argv + argc);
    std::vector<bw::ProcSpec> specs;
    for (std::size_t i = 0; i < procs.size(); ++i) specs.push_back(parse_proc(procs[i], command, i));
    bw::restore_openmp_env();  // the user's OpenMP settings are for the command, not for bandwall
    auto results = bw::spawn_all(specs);

    bw::json processes = bw::json::array();
    double wall = 0;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      auto& r = results[i];
      wall = std::max(wall, r.wall_s);
      processes.push_back({{"rank", i},
                           {"proc", procs[i]},
                           {"argv", specs[i].argv},
                           {"exit_code", r.exit_code},
                           {"signal", r.signal},
                           {"wall_s", r.wall_s},
                           {"stdout", r.out},
                           {"stderr", r.err}});
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      auto& r = results[i];
      if (r.exit_code == 0) continue;
      std::string why = r.signal ? "was killed by signal " + std::to_string(r.signal)
                                 : "exited with code " + std::to_string(r.exit_code);
      std::string last = r.err;
      while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
      if (auto nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
      if (usage_errors && !r.signal && r.exit_code == bw::kExitUsage) {
        // The process's own one-line message, without its "program: error: " prefix.
        if (auto at = last.find(": error: "); at != std::string::npos) last = last.substr(at + 9);
        throw bw::UsageError(last.empty() ? "process " + std::to_string(i) + " (" + procs[i] + ") refused its arguments"
                                          : last);
      }
      throw bw::RunError("process " + std::to_string(i) + " (" + procs[i] + ") " + why +
                         (last.empty() ? "" : ": " + last));
    }
    bw::json config = {{"command", command}, {"procs", procs}};
    bw::json result = {{"processes", processes}, {"wall_s", wall}};
    std::string policies;
    for (auto& p : procs) policies += (policies.empty() ? "" : " ") + p;
    bw::emit(bw::make_record("launch", config, result,
                             bw::validation_not_applicable("launches processes; each process checks its own answer"),
                             bw::provenance(0, bw::allowed_cpus(), "launch", policies, bw::json::object(), 1)));
    return 0;
  });
}
