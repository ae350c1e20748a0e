#!/usr/bin/env python3
"""The ISO3DFD figures of a CPU met for the first time, one benchmark after another, into a dated
results file.

Each step waits until the load average is below --max-load (a benchmark on a busy host measures
the host), runs one script of bench/ and copies its command and its output into the file, under a
heading that gives the time, the build (git describe) and the CPU (model name, CPUID family and
model, caches from lscpu). Nothing runs side by side. The steps:

  devito      iso3dfd_vs_devito.py at the defaults: bandwall against Devito, 256^3 interior, 40 steps
  sweeps      iso3dfd_time_block.py: depths 1, 2, 4, 8 by slabs, 3 by the team together, auto (a
              settled race kept for the later rounds) and measure (a race every round), with the
              three-level estimate beside each (--roofline)
  shapes      iso3dfd_shapes.py: the register shapes of the widest variant against its default
  variants    isa_choices.py (without --write: the table changes only when someone reads the figures);
              the longest step: every variant of 12 kernels (STREAM at 1 and 2 threads, the FMA peak;
              the ISO3DFD row kernel's variant races in iso3dfd_kernel_choices.py), about 50 minutes on
              2 cores (the others together took under 10 on the Intel AMX guest)

A failed step is written down with its last line of stderr, and the campaign goes on. The file is
bench/results/<date>-<name>.md, appended to when it exists; the figures still need their reading
(what they say, against which target) written by hand.

    ./bootstrap setup && bench/setup
    .venv/bin/python bench/iso3dfd_campaign.py --name zen5
    .venv/bin/python bench/iso3dfd_campaign.py --name zen5 --steps devito,sweeps
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import common

ROOT = common.ROOT
STEPS = ("devito", "sweeps", "shapes", "variants")


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=5, min_rounds=3)
    p.add_argument("--name", required=True, help="the CPU's short name in the file name, e.g. zen5")
    p.add_argument("--steps", default=",".join(STEPS), help=f"some of {', '.join(STEPS)}")
    p.add_argument(
        "--devito-python", default="build/devito-venv/bin/python", help="the Python that has Devito"
    )
    p.add_argument("--max-load", type=float, default=1.5, help="wait for a 1-minute load below this")
    p.add_argument("--wait", type=int, default=600, help="seconds to wait for it at most, then run anyway")
    a = common.parse(p)
    a.step_list = [s.strip() for s in a.steps.split(",") if s.strip()]
    wrong = [s for s in a.step_list if s not in STEPS]
    if wrong:
        p.error(f"--steps: {', '.join(wrong)} not among {', '.join(STEPS)}")
    if not a.name.replace("-", "").isalnum():
        p.error(f"--name '{a.name}': letters, digits and dashes only")
    return a


def commands(a: argparse.Namespace) -> dict[str, list[str]]:
    py, rounds = sys.executable, str(a.rounds)
    shared = ["--bindir", str(a.bindir), "--rounds", rounds]
    return {
        "devito": [
            a.devito_python,
            "bench/iso3dfd_vs_devito.py",
            *shared,
            "--steps",
            "40",
            "--blocks",
            "auto",
        ],
        "sweeps": [
            py,
            "bench/iso3dfd_time_block.py",
            *shared,
            "--steps",
            "40",
            "--roofline",
            "--depths",
            "1,2,4,8,3:shared,auto,measure",
        ],
        "shapes": [py, "bench/iso3dfd_shapes.py", *shared],
        "variants": [py, "bench/isa_choices.py", *shared],
    }


def cpu_header() -> str:
    """What lscpu says of the CPU: the lines a results file names it by."""
    keep = ("Model name", "CPU family", "Model:", "Flags", "L1d", "L2", "L3", "NUMA node(s)", "CPU(s):")
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines()
    lines = [line for line in out if line.startswith(keep)]
    flags = [line for line in lines if line.startswith("Flags")]
    lines = [line for line in lines if not line.startswith("Flags")]
    if flags:
        have = set(flags[0].split(":", 1)[1].split())
        wide = [f for f in ("avx2", "fma", "avx512f", "avx512vl", "avx512_fp16", "amx_tile") if f in have]
        lines.append(f"Flags (vector):  {' '.join(wide)}")
    return "\n".join(lines)


def wait_for_quiet(a: argparse.Namespace) -> float:
    """Waits until the 1-minute load is below --max-load (at most --wait seconds); the load then."""
    deadline = time.monotonic() + a.wait
    while os.getloadavg()[0] >= a.max_load and time.monotonic() < deadline:
        time.sleep(15)
    return os.getloadavg()[0]


def main() -> None:
    a = parse()
    day = datetime.date.today().isoformat()
    out = ROOT / "bench" / "results" / f"{day}-{a.name}.md"
    cmds = commands(a)
    with out.open("a") as f:
        if out.stat().st_size == 0:
            f.write(f"# {day}: {a.name}\n")
        # Each campaign under a heading of its own (a file may hold several of the day's): when, with
        # which build, on which CPU (the shared header, then what lscpu says of the caches and flags).
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M")
        f.write(f"\n## The ISO3DFD campaign of {now} UTC, build {common.revision()}\n\n{common.header()}\n\n")
        f.write(f"```\n$ lscpu\n{cpu_header()}\n```\n")
        for step in a.step_list:
            load = wait_for_quiet(a)
            cmd = cmds[step]
            shown = shlex.join([Path(cmd[0]).name if cmd[0] == sys.executable else cmd[0], *cmd[1:]])
            print(f"campaign: {step} (load {load:.2f}): {shown}", file=sys.stderr)
            try:
                run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
                code, stdout, stderr = run.returncode, run.stdout, run.stderr
            except OSError as e:
                code, stdout, stderr = 127, "", str(e)
            f.write(
                f"\n### {step}\n\nLoad {load:.2f} before the run.\n\n```\n$ {shown}\n{stdout.rstrip()}\n```\n"
            )
            if code != 0:
                # A step stopped half-way has printed its progress (isa_choices.py: each kernel's
                # figures) to stderr only: its last lines go into the file too.
                lines = stderr.strip().splitlines()
                how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
                if lines:
                    f.write(f"\nThe step failed ({how}); the last lines of its stderr:\n\n```\n")
                    f.write("\n".join(lines[-20:]) + "\n```\n")
                else:
                    f.write(f"\nThe step failed ({how}), with nothing on stderr.\n")
                print(f"campaign: {step} failed ({how}): {(lines or [''])[-1]}", file=sys.stderr)
            f.flush()
    print(f"campaign: written to {out.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
