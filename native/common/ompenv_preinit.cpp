// The .preinit_array entry that neutralises the OpenMP environment (see ompenv.hpp). Executables
// only: the linker refuses .preinit_array in shared objects, so CMake links this object into
// executables that use bwcommon and never into libraries.
#include "common/ompenv.hpp"

namespace {
void preinit(int, char**, char** envp) { bw_ompenv_capture(envp); }
}  // namespace

__attribute__((section(".preinit_array"), used)) static void (*const bw_ompenv_preinit)(int, char**, char**) = preinit;
