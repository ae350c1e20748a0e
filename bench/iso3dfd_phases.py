#!/usr/bin/env python3
"""What each part of the ISO3DFD row kernel costs on this CPU, and how much of it is L1 misses.

Builds the AVX-512 row kernel (native/iso3dfd/rows_kernel.hpp, copied and edited in a temporary
directory: the product's file is not touched) into bench/iso3dfd_phases/driver.cpp once per
variant, and times each on one thread, the variants alternating round by round:

    all        the kernel as it is
    update     the centre's product and next = 2 prev - next + vel * lap only
    +x, +y, +z the update and one direction's neighbours
    +y in L1   the y part with every y row read from the centre row's lines (they stay in L1)
    +z in L1   the z part with every z plane read from the same two lines

The figure is cycles per output vector of 16 points (the clock measured beside each repetition);
a variant's figure is the median of its rounds, with their spread. The kernels compute wrong
numbers on purpose in the "in L1" variants: this is a timing experiment, not a check.

    python3 bench/iso3dfd_phases.py --rounds 5
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import common

ROOT = common.ROOT
KERNEL = ROOT / "native" / "iso3dfd" / "rows_kernel.hpp"
DRIVER = ROOT / "bench" / "iso3dfd_phases" / "driver.cpp"
FLAGS = "-O3 -std=c++20 -mavx2 -mfma -mavx512f -mavx512bw -mavx512dq -mavx512vl".split()

# (text of rows_kernel.hpp, replacement): each part behind a macro.
EDITS = [
    (
        "    // y neighbours: distance k outermost",
        "#ifndef PH_NO_Y\n    // y neighbours: distance k outermost",
    ),
    (
        "    // z neighbours, vector by vector",
        "#endif\n#ifndef PH_NO_Z\n    // z neighbours, vector by vector",
    ),
    (
        "    // next = 2 prev - next + vel * lap, and",
        "#endif\n    // next = 2 prev - next + vel * lap, and",
    ),
    (
        "        x_pairs<D, 1>(acc[o], w, q);",
        "#ifndef PH_NO_X\n        x_pairs<D, 1>(acc[o], w, q);\n#endif",
    ),
    (
        "      const float* ya = p - sy;\n      const float* yb = p + sy;",
        "#ifdef PH_Y_IN_L1\n      const float* ya = p; const float* yb = p + L; (void)sy;\n#else\n"
        "      const float* ya = p - sy;\n      const float* yb = p + sy;\n#endif",
    ),
    (
        "        ya -= sy;\n        yb += sy;",
        "#ifndef PH_Y_IN_L1\n        ya -= sy;\n        yb += sy;\n#endif",
    ),
    (
        "        za -= sz;\n        zb += sz;",
        "#ifndef PH_Z_IN_L1\n        za -= sz;\n        zb += sz;\n#endif",
    ),
]

VARIANTS = {
    "all": [],
    "update": ["PH_NO_X", "PH_NO_Y", "PH_NO_Z"],
    "+x": ["PH_NO_Y", "PH_NO_Z"],
    "+y": ["PH_NO_X", "PH_NO_Z"],
    "+y in L1": ["PH_NO_X", "PH_NO_Z", "PH_Y_IN_L1"],
    "+z": ["PH_NO_X", "PH_NO_Y"],
    "+z in L1": ["PH_NO_X", "PH_NO_Y", "PH_Z_IN_L1"],
}


def build(work: Path, shape: str, cxx: str) -> dict[str, Path]:
    text = KERNEL.read_text()
    for old, new in EDITS:
        if old not in text:
            raise SystemExit(f"{KERNEL} changed: {old.splitlines()[0].strip()!r} not found; update EDITS")
        text = text.replace(old, new, 1)
    (work / "iso3dfd").mkdir()
    (work / "iso3dfd" / "rows_kernel.hpp").write_text(text)
    exes = {}
    for name, macros in VARIANTS.items():
        exe = work / f"driver{len(exes)}"
        cmd = [cxx, *FLAGS, f"-DBW_SHAPE={shape}", *[f"-D{m}" for m in macros]]
        cmd += [f"-I{work}", f"-I{ROOT / 'native'}", str(DRIVER), "-o", str(exe)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"building {name} failed:\n{proc.stderr}")
        exes[name] = exe
    return exes


def main() -> int:
    ap = common.parser(__doc__, rounds=3, bindir=False, summary=True)
    ap.add_argument("--grid", default="272x272x272", help="n1xn2xn3, halo included")
    ap.add_argument("--blocks", default="272x24x128", help="b1xb2xb3")
    ap.add_argument(
        "--shape", default="4,2,0,true", help="planes,vectors,x_loads,split of the register shape (RowDesc)"
    )
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    a = common.parse(ap)
    if "avx512f" not in common.cpu_fields().get("flags", "").split():
        print("this CPU has no AVX-512: nothing to time", file=sys.stderr)
        return 1
    grid, blocks = a.grid.split("x"), a.blocks.split("x")
    work = Path(tempfile.mkdtemp(prefix="bw-phases-"))
    try:
        exes = build(work, a.shape, a.cxx)
        runs: dict[str, list[float]] = {name: [] for name in exes}
        names = list(exes)
        for r in range(a.rounds):
            for name in common.order(names, r):
                out = subprocess.run(
                    [str(exes[name]), *grid, *blocks, str(a.steps), "3"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                runs[name].append(statistics.median(map(float, out)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(runs["update"])
    print(f"grid {a.grid}, blocks {a.blocks}, shape {a.shape}, {a.rounds} rounds, one thread")
    print("| variant | cycles per vector, median [min-max] | beyond the update |")
    print("|---|---|---|")
    for name, xs in runs.items():
        m = statistics.median(xs)
        extra = "" if name == "update" else f"{m - base:.1f}"
        print(f"| {name} | {m:.1f} [{min(xs):.1f}-{max(xs):.1f}] | {extra} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
