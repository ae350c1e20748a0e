// Whether an executable can take a preloaded library: a dynamically linked ELF file (one with an
// interpreter) can; a statically linked one cannot. Files that are not ELF (scripts) count as dynamic:
// their interpreter is the program that runs.
#pragma once
#include <string>

namespace bw::pin {

enum class ExecKind { Dynamic, Static, Script, Unknown, OtherClass };

// What kind of program path is: an ELF executable with or without an interpreter, a script ("#!"),
// a 32-bit ELF (OtherClass: a 64-bit library cannot be preloaded into it), or none of these (which
// exec would refuse).
ExecKind exec_kind(const std::string& path);

}  // namespace bw::pin
