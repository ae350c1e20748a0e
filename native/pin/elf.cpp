#include "pin/elf.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>

namespace bw::pin {

ExecKind exec_kind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  if (in.gcount() >= 2 && eh.e_ident[0] == '#' && eh.e_ident[1] == '!') return ExecKind::Script;
  if (!in || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return ExecKind::Unknown;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return ExecKind::OtherClass;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<Elf64_Off>(i) * eh.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return ExecKind::Unknown;
    if (ph.p_type == PT_INTERP) return ExecKind::Dynamic;
  }
  return ExecKind::Static;
}

}  // namespace bw::pin
