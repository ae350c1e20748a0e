"""What the build of bandwall-iso3dfd holds: the software prefetches the row kernel issues as loops
over a row's lines (a split shape's first pass, for itself and for its second pass) are in the
machine code. GCC deletes a loop whose only statements are _mm_prefetch calls, and did so for these
until they became inline asm; the kernel's answer cannot show it, its disassembly can."""

from __future__ import annotations

import shutil
import subprocess

from bandwall.core import native
from bandwall.kernels import iso3dfd


def test_the_first_pass_prefetches_to_l2_are_in_the_machine_code():
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils, installed with the compiler) is needed to read the build"
    out = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", native.executable(iso3dfd.TOOL)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    # RowKernel::bring is the only source of prefetcht1 in the executable: the first pass's
    # rows for the second (next, vel, prev's leading planes) and the next plane's rows below the block
    assert out.count("prefetcht1") > 0
