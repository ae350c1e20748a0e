#!/usr/bin/env python3
"""The ISO3DFD figures of a CPU met for the first time, one benchmark after another, into a dated
results file.

Each step waits until the load average is below --max-load (a benchmark on a busy host measures
the host), runs one script of bench/ and copies its command and its output into the file, under a
heading that gives the time, the build (git describe) and the CPU (model name, CPUID family and
model, caches from lscpu). Nothing runs side by side. The steps:

  row         this CPU's row of the table of measured choices, filled by the scripts that race it and
              --write what the decision rule chooses, in the order whose later races meet the
              earlier winners: iso3dfd_time_model.py (the cache figures of the time model, 9 rounds),
              iso3dfd_kernel_choices.py --knobs shapes --in-run (the row shapes and variants raced
              inside runs, 9 rounds), --knobs prefetch,swept,blocks,team,sweeps (5 rounds), --knobs
              sweeps --sweeps-llc one,two at radius 1-5 (whether sweeps pay per verdict of the probe
              of a shared last-level cache, 5 rounds) and isa_choices.py (every kernel's variant, 5
              rounds); 50-100 minutes on 2 cores
  orders      iso3dfd_orders.py: every space order 2-16 against Devito, the memory wall and step by
              step, 256^3 interior, 40 steps
  devito      iso3dfd_vs_devito.py at the defaults: bandwall against Devito, 256^3 interior, 40 steps
  sweeps      iso3dfd_time_block.py: depths 1, 2, 4, 8 by slabs, 3 by the team together, auto (a
              settled race kept for the later rounds) and measure (a race every round), with the
              three-level estimate beside each (--roofline)
  shapes      iso3dfd_shapes.py: the register shapes of the widest variant against its default
  variants    isa_choices.py without --write (row writes the same races' choices): every variant of
              12 kernels (STREAM at 1 and 2 threads, the FMA peak; the ISO3DFD row kernel's variant
              races in iso3dfd_kernel_choices.py), about 50 minutes on 2 cores

Every program reads the table of measured choices as it stands in native/common/isa_choices.json
(BANDWALL_ISA_CHOICES), so the steps after `row` run with the row it wrote, before any rebuild
compiles it in. By default the campaign runs `row`, then `orders`; --steps names others.

Each step's stdout and stderr (the scripts' progress and some of their figures) go into the file;
a failed step is written down as such, and the campaign goes on. The file is
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
from typing import TextIO

import common

ROOT = common.ROOT
STEPS = ("row", "orders", "devito", "sweeps", "shapes", "variants")
DEFAULT_STEPS = ("row", "orders")
# The table the programs read: the repository's, as the row step leaves it.
TABLE = ROOT / "native" / "common" / "isa_choices.json"


def parse() -> argparse.Namespace:
    p = common.parser(__doc__, rounds=5, min_rounds=3)
    p.add_argument("--name", required=True, help="the CPU's short name in the file name, e.g. zen5")
    p.add_argument(
        "--steps", default=",".join(DEFAULT_STEPS), help=f"some of {', '.join(STEPS)} (default: row,orders)"
    )
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


def commands(a: argparse.Namespace) -> dict[str, list[list[str]]]:
    """Each step's commands, run in order."""
    py, rounds = sys.executable, str(a.rounds)
    bindir = ["--bindir", str(a.bindir)]
    shared = [*bindir, "--rounds", rounds]
    choices = [py, "bench/iso3dfd_kernel_choices.py", *bindir]
    return {
        "row": [
            [py, "bench/iso3dfd_time_model.py", *bindir, "--rounds", "9", "--write"],
            [*choices, "--knobs", "shapes", "--in-run", "--in-run-steps", "400", "--rounds", "9", "--write"],
            [*choices, "--knobs", "prefetch,swept,blocks,team,sweeps", "--rounds", "5", "--write"],
            # whether sweeps pay per verdict of the probe of a shared last-level cache, where the model
            # proposes sweeps on any CPU met so far (two vCPUs a host may put on one L3 or two)
            [*choices, "--knobs", "sweeps", "--sweeps-llc", "one,two", "--radii", "1,2,3,4,5"]
            + ["--rounds", "5", "--write"],
            # 5 rounds: fewer leave the decision rule no 90% interval, and every entry "too few rounds"
            [py, "bench/isa_choices.py", *bindir, "--rounds", "5", "--write"],
        ],
        "orders": [[a.devito_python, "bench/iso3dfd_orders.py", *shared]],
        "devito": [
            [a.devito_python, "bench/iso3dfd_vs_devito.py", *shared, "--steps", "40", "--blocks", "auto"],
        ],
        "sweeps": [
            [
                py,
                "bench/iso3dfd_time_block.py",
                *shared,
                "--steps",
                "40",
                "--roofline",
                "--depths",
                "1,2,4,8,3:shared,auto,measure",
            ]
        ],
        "shapes": [[py, "bench/iso3dfd_shapes.py", *shared]],
        "variants": [[py, "bench/isa_choices.py", *shared]],
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


def run_step(f: TextIO, title: str, cmd: list[str], load: float) -> None:
    """Runs one command of a step with the repository's table (BANDWALL_ISA_CHOICES) and writes it,
    its output, its stderr (where the scripts report their progress, and iso3dfd_time_model.py its
    figures) and, when it failed, how."""
    shown = shlex.join([Path(cmd[0]).name if cmd[0] == sys.executable else cmd[0], *cmd[1:]])
    print(f"campaign: {title} (load {load:.2f}): {shown}", file=sys.stderr)
    env = {**os.environ, "BANDWALL_ISA_CHOICES": str(TABLE)}
    start, t0 = time.strftime("%H:%M UTC", time.gmtime()), time.monotonic()
    try:
        run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
        code, stdout, stderr = run.returncode, run.stdout, run.stderr
    except OSError as e:
        code, stdout, stderr = 127, "", str(e)
    took = f"{(time.monotonic() - t0) / 60:.0f} min"
    f.write(f"\n### {title}\n\nFrom {start}, {took}; load {load:.2f} before the run.\n\n")
    f.write(f"```\n$ {shown}\n{stdout.rstrip()}\n```\n")
    lines = stderr.strip().splitlines()
    if code != 0:
        how = f"killed by signal {-code}" if code < 0 else f"exit {code}"
        f.write(f"\nThe step failed ({how}){'; its stderr:' if lines else ', with nothing on stderr.'}\n")
        print(f"campaign: {title} failed ({how}): {(lines or [''])[-1]}", file=sys.stderr)
    elif lines:
        f.write("\nIts stderr:\n")
    if lines:
        f.write("\n```\n" + "\n".join(lines) + "\n```\n")
    f.flush()


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
            for i, cmd in enumerate(cmds[step], 1):
                title = step if len(cmds[step]) == 1 else f"{step} ({i} of {len(cmds[step])})"
                run_step(f, title, cmd, wait_for_quiet(a))
    print(f"campaign: written to {out.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
