// Immunity to the user's OpenMP environment. OMP_*, GOMP_* and KMP_* variables (set by HPC module
// files) make the OpenMP runtime bind the initial thread, cap the team or change the wait policy
// before main() runs, so bandwall's kernels would run on other CPUs than they report. Every
// executable linking bwcommon removes those variables from its environment in .preinit_array,
// which the loader runs before any shared library's constructor (libgomp binds the initial thread
// in its constructor; LLVM libomp reads them at its first parallel region); only the wait policy
// (OMP_WAIT_POLICY, GOMP_SPINCOUNT, KMP_BLOCKTIME) is kept. The CPU set the
// process started with (from taskset, numactl or a batch system, all set before exec) is then
// never narrowed, so the allowed CPUs bandwall reads are the user's.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace bw {

// What was found and done, for provenance.openmp_env: {NAME: {value, action}}; empty when none
// was set. Values that are not UTF-8 are shown with \xNN escapes.
nlohmann::json openmp_env_record();

// True when a variable name belongs to an OpenMP runtime (OMP_, GOMP_ or KMP_ prefix).
bool is_openmp_variable(const std::string& name);

// The action recorded for a variable removed from bandwall's own process.
std::string openmp_env_action(const std::string& name);

// Puts the removed variables back into the environment, for commands bandwall launches on the
// user's behalf (their OpenMP settings are theirs); the record says so.
void restore_openmp_env();

}  // namespace bw

// Called from the executable's .preinit_array with the process's environment array: records and
// removes the OpenMP variables in place (no allocation: the loader has not run constructors yet).
extern "C" void bw_ompenv_capture(char** envp);
