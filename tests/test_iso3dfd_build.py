"""What the build of bandwall-iso3dfd holds: the software prefetches the row kernel issues as loops
over a row's lines (a split shape's first pass, for itself and for its second pass) are in the
machine code. GCC deletes a loop whose only statements are _mm_prefetch calls, and did so for these
until they became inline asm; the kernel's answer cannot show it, its disassembly can."""

from __future__ import annotations

import shutil
import subprocess

from bandwall.core import native
from bandwall.kernels import iso3dfd


def test_the_prefetches_to_l1_and_to_l2_are_in_the_machine_code():
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils, installed with the compiler) is needed to read the build"
    out = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", native.executable(iso3dfd.TOOL)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    # prefetcht1 (L2): RowKernel::bring's rows for the second pass and below the block, and the
    # update's rows ahead at the default cache; prefetcht0 (L1): bring's leading rows, a ring's
    # column and the update's rows ahead where a setting asks for L1 (--prefetch N:L1)
    assert out.count("prefetcht1") > 0 and out.count("prefetcht0") > 0


def test_each_one_pass_shape_prefetches_into_either_cache():
    """A one-pass shape's block function (no first pass, so no RowKernel::bring) holds the update's
    prefetches twice, once per cache a setting names (--prefetch N:L1, N:L2): prefetcht0 and
    prefetcht1 both, at every radius and in every vector variant, or one cache's setting would run the
    other's code."""
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils, installed with the compiler) is needed to read the build"
    out = subprocess.run(
        [objdump, "-d", "-C", "--no-show-raw-insn", native.executable(iso3dfd.TOOL)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    # the prefetch instructions each one-pass block function holds
    held: dict[str, set[str]] = {}
    mine = None
    for line in out.splitlines():
        if line.endswith(">:") and "<" in line:
            name = line[line.index("<") + 1 : -2]
            mine = (
                held.setdefault(name, set()) if "row_box<" in name and "u, false, false, 1}" in name else None
            )
        elif mine is not None and "prefetcht" in line:
            mine.add(line.split("prefetcht")[1][:1])
    variants = {n.split("row_box<bw::iso3dfd::")[1].split(",")[0] for n in held}
    assert variants >= {"Avx512", "Avx2"}, sorted(variants)
    missing = [n for n, caches in held.items() if not {"0", "1"} <= caches]
    assert not missing, missing[:3]
