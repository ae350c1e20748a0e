// bandwall-pin: runs an unmodified program with its threads bound to CPUs by the preloaded library
// libbandwall-pin.so, and prints one record: what was asked, what the OpenMP runtimes were told, how
// the program ended and (with --report) where each of its threads ran.
//
//   bandwall-pin [--cpus LIST | --bind compact|scatter|spread|node:N|none] [--threads N]
//                [--skip MASK] [--spin CYCLES|-1|passive] [--report [--interval MS]] -- COMMAND [ARGS...]
//
// (--cpus wins over --bind, as in every executable; --policy is --bind's older name.)
// Without --cpus or --bind, PGI's MP_* variables decide: MP_BIND=yes binds (to MP_BLIST, or to the
// allowed CPUs in order), MP_BIND=no leaves threads free, MP_BLIST alone implies MP_BIND=yes; with none
// of them the policy is compact. A statically linked program cannot take the library: the whole
// process is then bound to the CPUs of the list (taskset semantics), and the launcher says so.
//
// The threads are sampled from outside (this process reads /proc/PID/task/*/ every --interval ms)
// rather than by a thread inside the program, which would compete with the program's threads for the
// very CPUs being observed; the library adds the index and intended CPU of each thread and a last look
// when a thread ends or the process exits.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include "common/args.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/ompenv.hpp"
#include "common/policies.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "pin/bwpin.h"
#include "pin/elf.hpp"
#include "pin/threads.hpp"
#include "place/spawn.hpp"

namespace {

const char* kRuntimeVars[] = {"OMP_PROC_BIND",   "OMP_PLACES",     "GOMP_CPU_AFFINITY", "KMP_AFFINITY",
                              "OMP_NUM_THREADS", "GOMP_SPINCOUNT", "KMP_BLOCKTIME",     "OMP_WAIT_POLICY"};

std::string library_path() {
  if (const char* env = std::getenv("BANDWALL_PIN_LIB"); env && *env) {
    if (access(env, R_OK) != 0) throw bw::RunError(std::string("BANDWALL_PIN_LIB '") + env + "' cannot be read");
    return env;
  }
  auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (auto dir : {self, self.parent_path() / "lib"}) {
    auto p = dir / "libbandwall-pin.so";
    if (std::filesystem::exists(p)) return p.string();
  }
  throw bw::RunError("libbandwall-pin.so not found next to " + self.string() + " (set BANDWALL_PIN_LIB)");
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Decides the CPUs from the options (--cpus wins over --bind), or leaves it to the MP_* variables;
// returns the policy's name.
std::string plan_cpus(const std::string& cpus, const std::string& policy, int threads) {
  if (!cpus.empty()) {
    auto list = bw::resolve_cpu_list(cpus);
    bw::check_cpus_allowed(list);
    std::string plain;
    for (int c : list) plain += (plain.empty() ? "" : ",") + std::to_string(c);
    setenv("BANDWALL_PIN_CPUS", plain.c_str(), 1);
    return "list";
  }
  if (policy == "none") {
    setenv("BANDWALL_PIN_CPUS", "none", 1);
    return "none";
  }
  if (!policy.empty()) {
    if (threads == 0 && policy == "spread" && std::getenv("OMP_NUM_THREADS")) {
      // Only spread depends on the team size; of a nested list (4,2) the outer level is the team.
      std::string team = env_or_empty("OMP_NUM_THREADS");
      threads = static_cast<int>(bw::parse_int(team.substr(0, team.find(',')), "OMP_NUM_THREADS", 1, 1 << 20));
    }
    auto list = bw::Topology::instance().order(policy, policy == "spread" ? threads : 0, bw::allowed_cpus());
    std::string plain;
    for (int c : list) plain += (plain.empty() ? "" : ",") + std::to_string(c);
    setenv("BANDWALL_PIN_CPUS", plain.c_str(), 1);
    return policy;
  }
  unsetenv("BANDWALL_PIN_CPUS");
  std::string bind = env_or_empty("MP_BIND");
  if (bind.empty() && std::getenv("MP_BLIST")) {
    setenv("MP_BIND", "yes", 1);
    return "MP_BLIST";
  }
  if (!bind.empty()) return std::getenv("MP_BLIST") ? "MP_BLIST" : "MP_BIND";
  return plan_cpus("", "compact", threads);
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-pin", [&] {
    int split = 1;
    while (split < argc && std::strcmp(argv[split], "--") != 0) ++split;
    CLI::App app{"bandwall-pin: run a program with its threads bound to CPUs, and say where they ran"};
    std::string cpus, policy, skip, spin;
    int threads = 0, interval_ms = 10;
    bool report = false;
    app.add_option("--cpus", cpus, bw::cpus_help());
    app.add_option("--bind,--policy", policy,
                   bw::binding_syntax() + " (none: threads left free; default: MP_BLIST/MP_BIND, else compact)");
    app.add_option("--threads", threads, "OpenMP threads (sets OMP_NUM_THREADS; default: one per CPU of the list)")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--skip", skip, "bit mask of created threads to leave unpinned (likwid-pin -s), e.g. 0x1");
    app.add_option("--spin", spin, "cycles idle threads spin at barriers before sleeping, -1 (forever) or passive");
    app.add_flag("--report", report, "sample where every thread runs and record it");
    app.add_option("--interval", interval_ms, "milliseconds between samples")->check(CLI::Range(1, 10000));
    app.footer("After the options: -- COMMAND [ARGS...], the program to run.");
    if (!bw::parse_command_line(app, split, argv)) return 0;
    if (split >= argc - 1)
      throw bw::UsageError(
          "usage: bandwall-pin [--cpus LIST | --bind P] [--skip MASK] [--spin S] [--report] -- COMMAND [ARGS...]");
    std::vector<std::string> command(argv + split + 1, argv + argc);

    // The executable's .preinit_array removed the user's OpenMP variables (common/ompenv.hpp); they
    // are the program's, so they come back before the plan reads them and the program inherits them.
    bw::restore_openmp_env();
    std::map<std::string, std::string> before;
    for (const char* v : kRuntimeVars)
      if (const char* now = std::getenv(v)) before[v] = now;
    if (threads > 0) setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
    std::string asked = plan_cpus(cpus, policy, threads);
    if (!skip.empty()) setenv("BANDWALL_PIN_SKIP", skip.c_str(), 1);
    if (!spin.empty()) setenv("BANDWALL_PIN_SPIN", spin.c_str(), 1);
    unsetenv("BANDWALL_PIN_REPORT");

    bwpin_config_t cfg = nullptr;
    char msg[512];
    if (bwpin_config_load(&cfg, msg, sizeof msg, 0) != 0)
      throw bw::UsageError(errno == EINVAL && msg[0] ? msg : std::strerror(errno));
    std::unique_ptr<bwpin_config_s, void (*)(bwpin_config_t)> hold(cfg, bwpin_config_destroy);
    const int* list = nullptr;
    int ncpus = bwpin_config_cpus(cfg, &list);
    std::vector<int> bound(list, list + ncpus);
    bwpin_config_apply_env(cfg);
    if (bwpin_config_mhz(cfg) > 0)  // the library turns cycles into KMP_BLOCKTIME with the same clock
      setenv("BANDWALL_PIN_MHZ", std::to_string(bwpin_config_mhz(cfg)).c_str(), 1);
    else
      unsetenv("BANDWALL_PIN_MHZ");
    bw::json told = bw::json::object();
    for (unsigned i = 0;; ++i) {
      const char *name, *value;
      if (bwpin_config_var(cfg, i, &name, &value) != 0) break;
      told[name] = value ? bw::json(value) : bw::json(nullptr);
    }

    std::string path = bw::find_command(command.at(0));
    auto kind = bw::pin::exec_kind(path);
    if (kind == bw::pin::ExecKind::Unknown)
      throw bw::UsageError("command '" + command[0] + "' is not an executable program (neither ELF nor a #! script)");
    bool is_static = kind == bw::pin::ExecKind::Static;
    bw::json notes = bw::json::array();
    bw::ProcSpec spec;
    spec.argv = command;
    std::string mode = bwpin_config_mode(cfg) == BWPIN_MODE_BIND ? "threads" : "free";
    std::string lib;
    if (is_static || kind == bw::pin::ExecKind::OtherClass) {
      notes.push_back("'" + command[0] + "' is " +
                      (is_static ? "statically linked" : "not a 64-bit program (another ELF class)") +
                      ": the pinning library cannot enter it, so its threads cannot be placed one by one");
      if (!bound.empty()) {
        std::set<int> uniq(bound.begin(), bound.end());
        spec.cpus.assign(uniq.begin(), uniq.end());
        notes.push_back("binding the whole process to CPUs " + bw::format_cpu_list(spec.cpus) +
                        " instead (every thread may run on any of them)");
        mode = "process";
      }
      for (auto& n : notes) std::cerr << "bandwall-pin: " << n.get<std::string>() << "\n";
    } else {
      lib = library_path();
      std::string preload = env_or_empty("LD_PRELOAD");
      setenv("LD_PRELOAD", (preload.empty() ? lib : lib + ":" + preload).c_str(), 1);
    }

    // The library writes a line for each thread it binds: with --report they are the record, and
    // when it binds threads one by one the first line proves it entered the program at all.
    const bool watch = report || mode == "threads";
    std::string report_path;
    if (watch) {
      char tmpl[] = "/tmp/bandwall-pin-XXXXXX";
      int fd = mkstemp(tmpl);
      if (fd < 0) throw bw::RunError(std::string("cannot create the thread report file: ") + std::strerror(errno));
      close(fd);
      report_path = tmpl;
      setenv("BANDWALL_PIN_REPORT", report_path.c_str(), 1);
    }
    bw::pin::ThreadReport threads_seen;
    bw::WhileRunning sampler;
    if (report)
      sampler = [&](const std::vector<int>& running) {
        for (int pid : running) threads_seen.sample(pid);
      };
    std::vector<bw::ProcResult> results;
    try {
      results = bw::spawn_all({spec}, sampler, interval_ms / 1000.0);
    } catch (...) {
      if (!report_path.empty()) unlink(report_path.c_str());
      throw;
    }
    auto& r = results.at(0);
    pid_t child = 0;
    bool entered = false;
    if (watch) {
      // The library's lines carry the pid of the process it entered first (the command itself, or
      // the shell of a script); lines of the processes that one starts are left out.
      std::ifstream in(report_path);
      std::string line_kind;
      entered = static_cast<bool>(in >> line_kind >> child);
      if (report) threads_seen.read_library_lines(report_path, child);
      unlink(report_path.c_str());
    }

    std::string last = r.err;
    while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
    if (auto nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
    if (r.exit_code == bw::kExitUsage && last.rfind("libbandwall-pin: error: ", 0) == 0)
      throw bw::UsageError(last.substr(std::strlen("libbandwall-pin: error: ")));
    if (r.exit_code != 0) {
      std::cerr << r.err;
      throw bw::RunError("'" + command[0] + "' " +
                         (r.signal ? "was killed by signal " + std::to_string(r.signal)
                                   : "exited with code " + std::to_string(r.exit_code)) +
                         (last.empty() ? "" : ": " + last));
    }

    if (mode == "threads" && !entered)
      throw bw::RunError("libbandwall-pin.so did not enter '" + command[0] +
                         "': no thread reported binding itself, so its threads ran wherever the scheduler put "
                         "them (a setuid program, or one that removes LD_PRELOAD before it starts?)");

    bw::json user_env = bw::json::object();
    for (auto& [k, v] : before) user_env[k] = v;
    char skip_text[32];
    std::snprintf(skip_text, sizeof skip_text, "0x%llx", bwpin_config_skip(cfg));
    bw::json config = {{"command", command},
                       {"policy", asked},
                       {"source", bwpin_config_source(cfg)},
                       {"cpus", bound},
                       {"mode", mode},
                       {"static", is_static},
                       {"skip_mask", skip_text},
                       {"spin", bwpin_config_spin(cfg)},
                       {"cpu_mhz", bwpin_config_mhz(cfg)},
                       {"openmp_env", told},
                       {"user_openmp_env", user_env},
                       {"library", lib},
                       {"report", report},
                       {"interval_ms", interval_ms}};
    bw::json result = {
        {"exit_code", r.exit_code}, {"wall_s", r.wall_s}, {"stdout", r.out}, {"stderr", r.err}, {"notes", notes}};
    bw::json validation = bw::validation_not_applicable("where threads ran is sampled only with --report");
    if (report) {
      validation = bw::validation_checked(true, "each bound thread was seen only on its CPU (sampled)");
      result["threads"] = threads_seen.to_json();
      result["samples"] = threads_seen.samples();
      auto wrong = threads_seen.misplaced();
      if (!wrong.empty()) {
        std::string all;
        for (auto& w : wrong) all += (all.empty() ? "" : "; ") + w;
        validation["passed"] = false;
        validation["message"] = all;
      }
    }
    int nthreads = 0;
    if (const char* t = std::getenv("OMP_NUM_THREADS")) nthreads = std::atoi(t);
    bw::json prov = bw::provenance(nthreads, bound, asked, "", bw::json::object(), 1);
    // What the program got of the user's OpenMP variables: passed on, except those the library replaced.
    for (auto& [name, value] : told.items())
      if (prov["openmp_env"].contains(name))
        prov["openmp_env"][name]["action"] =
            value.is_null() ? "unset for the program: libbandwall-pin is the only binder (config.openmp_env)"
                            : "set to '" + value.get<std::string>() + "' for the program (config.openmp_env)";
    bw::emit(bw::make_record("pin", config, result, validation, prov));
    if (validation["passed"] == false)
      throw bw::RunError("threads did not stay where they were bound: " + validation["message"].get<std::string>());
    return 0;
  });
}
