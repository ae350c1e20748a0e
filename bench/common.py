"""What the bench scripts share: their common options, the lookup of bandwall's executables, the
rounds that alternate the programs compared, the median-and-range text, the run of a program that
prints a JSON record, and the header a results file names the machine by.

A script imports it as `import common` (Python puts the script's own folder, bench/, first on
sys.path):

    p = common.parser(__doc__, rounds=5, min_rounds=3, results=True)
    p.add_argument("--threads", type=int, default=2)
    a = common.parse(p)
    exe = common.tool(a.bindir, "bandwall-stream")
    runs = common.alternate({"one": lambda: ..., "two": lambda: ...}, a.rounds)
    print(common.spread(common.ratios(runs["two"], runs["one"]), "{:.3f}", "x"))

Nothing here imports bandwall's Python package: the scripts that run under another Python (the
one Devito is installed in) use it too.
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")
K = TypeVar("K")

ROOT = Path(__file__).resolve().parent.parent
# Where ./bootstrap setup installs bandwall's executables; $BANDWALL_BINDIR, when set, names
# another folder (as it does for bandwall's own Python package).
DEFAULT_BINDIR = ROOT / ".venv" / "bin"
BUILD = ROOT / "build" / "bench"  # what a script compiles for itself


def default_bindir() -> Path:
    return Path(os.environ.get("BANDWALL_BINDIR") or DEFAULT_BINDIR)


def parser(
    doc: str | None,
    *,
    rounds: int | None = 5,
    min_rounds: int = 1,
    bindir: bool = True,
    results: bool = False,
    summary: bool = False,
) -> argparse.ArgumentParser:
    """The script's parser with the shared options: --bindir (where bandwall's executables are),
    --rounds (unless rounds is None) and --results FILE (with results=True). doc is the script's
    docstring: its first paragraph alone with summary=True."""
    common = argparse.ArgumentParser(add_help=False)
    if bindir:
        common.add_argument(
            "--bindir",
            type=Path,
            default=default_bindir(),
            help="folder of bandwall's executables (default: $BANDWALL_BINDIR, else the checkout's "
            f".venv/bin: {DEFAULT_BINDIR})",
        )
    if rounds is not None:
        least = f", at least {min_rounds}" if min_rounds > 1 else ""
        common.add_argument(
            "--rounds",
            type=int,
            default=rounds,
            help=f"rounds, each runs every program once (default {rounds}{least})",
        )
    if results:
        common.add_argument(
            "--results",
            default=None,
            metavar="FILE",
            help="append the table to this Markdown file, under a header naming the date, CPU, command and revision",
        )
    text = (doc or "").split("\n\n")[0] if summary else doc
    p = argparse.ArgumentParser(
        description=text, formatter_class=argparse.RawDescriptionHelpFormatter, parents=[common]
    )
    p.set_defaults(_min_rounds=min_rounds)
    return p


def parse(p: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """parse_args, then the shared checks: --rounds at least the script's least; --bindir made
    absolute and exported as BANDWALL_BINDIR, so that bandwall's Python package and the programs
    it starts find the same executables as the script."""
    a = p.parse_args(argv)
    least = a._min_rounds
    del a._min_rounds
    if getattr(a, "rounds", None) is not None and a.rounds < least:
        p.error(
            f"--rounds must be at least {least} (the median of fewer rounds says little on a noisy machine)"
        )
    if getattr(a, "bindir", None) is not None:
        a.bindir = Path(a.bindir).resolve()
        os.environ["BANDWALL_BINDIR"] = str(a.bindir)
    return a


def radii(p: argparse.ArgumentParser, text: str, most: int = 8) -> list[int]:
    """--radii as given ("1,2,4,8"): whole numbers within 1..most, else p.error (one line, exit 2)."""
    try:
        out = [int(r) for r in text.split(",")]
    except ValueError:
        p.error(f"--radii {text!r} is not whole numbers like 1,2,4,8")
    if not all(1 <= r <= most for r in out):
        p.error(f"--radii must lie in 1..{most}")
    return out


def scratch(prefix: str = "bandwall-bench-") -> Path:
    """A folder of this run's own (the tables, cache folders and builds a bench gives its programs, never
    the user's), removed when the script exits."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def tool(bindir: Path | str, name: str) -> str:
    """bindir/name when it is an executable file; else one line on stderr and exit 2."""
    path = Path(bindir) / name
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    print(f"bench: {name} not found in {bindir} (run ./bootstrap setup, or give --bindir)", file=sys.stderr)
    raise SystemExit(2)


def order(items: Sequence[T], r: int, reverse: bool = False) -> list[T]:
    """Round r's order: rotated by r (each program leads once in len(items) rounds), or with
    reverse=True the given order in even rounds and its reverse in odd ones."""
    items = list(items)
    if reverse:
        return items if r % 2 == 0 else items[::-1]
    k = r % len(items) if items else 0
    return items[k:] + items[:k]


def alternate(
    runners: Mapping[K, Callable[[], T]],
    rounds: int,
    *,
    reverse: bool = False,
    pause: float = 0.0,
    after: Callable[[int, dict[K, list[T]]], None] | None = None,
) -> dict[K, list[T]]:
    """Every runner once a round, in order(names, round, reverse), pause seconds of rest before
    each run. Returns name -> its results, one a round in round order, so that results[a][r] and
    results[b][r] pair the runs of one round. after(r, results), when given, is called at the end
    of each round (r from 0: a progress line)."""
    got: dict[K, list[T]] = {name: [] for name in runners}
    for r in range(rounds):
        for name in order(list(runners), r, reverse):
            if pause:
                time.sleep(pause)
            got[name].append(runners[name]())
        if after:
            after(r, got)
    return got


def ratios(values: Sequence[float], base: Sequence[float]) -> list[float]:
    """Per-round ratios values[r] / base[r] (pairs of runs of the same round)."""
    return [x / y for x, y in zip(values, base)]


def spread(values: Sequence[float], fmt: str = "{:.1f}", unit: str = "") -> str:
    """'median [min-max]' of values: spread(rs, "{:.3f}", "x") -> '1.020x [0.980-1.050]'."""
    return (
        f"{fmt.format(statistics.median(values))}{unit} [{fmt.format(min(values))}-{fmt.format(max(values))}]"
    )


def whole_run_rate(rec: dict) -> float:
    """A stencil record's whole run in MPoints/s: every step the run advanced over its seconds, what its
    defaults spent choosing (knob races, the depth's race or check) included (result.run); its
    result.mpoints_per_s is the timed steps' alone, after the choosing."""
    return float(rec["result"]["run"]["mpoints_per_s"])


def record(
    cmd: Sequence[Any],
    *,
    env: Mapping[str, str] | None = None,
    unset: Sequence[str] = (),
    valid: bool = False,
    **kw: Any,
) -> Any:
    """Runs a program that prints a JSON record (the whole output, else its last line that starts
    with '{') and returns it. A program that fails stops the script with one line: the command and
    the last line of its stderr; with valid=True, so does a record whose check did not pass. The
    program's environment is this process's without the variables named in unset, with env added;
    kw goes to subprocess.run (preexec_fn, cwd)."""
    argv = [str(c) for c in cmd]
    full = None
    if env or unset:
        full = {k: v for k, v in os.environ.items() if k not in unset}
        full.update(env or {})
    proc = subprocess.run(argv, capture_output=True, text=True, env=full, **kw)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        sys.exit(f"bench: {shlex.join(argv)} failed: {last}")
    try:
        rec = json.loads(proc.stdout)
    except ValueError:
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if not lines:
            sys.exit(f"bench: {shlex.join(argv)} printed no JSON record")
        rec = json.loads(lines[-1])
    if valid and not (isinstance(rec, dict) and rec.get("validation", {}).get("passed", False)):
        sys.exit(f"bench: {shlex.join(argv)}: its check did not pass")
    return rec


def compile_c(src: Path, flags: Sequence[str], libs: Sequence[str] = (), out: Path = BUILD) -> Path:
    """src compiled with $CC (default cc) into out/<its stem>, again only when src is newer."""
    exe = out / src.stem
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, *flags, "-o", str(exe), str(src), *libs], check=True)
    return exe


class LineTrip(NamedTuple):
    """A cache line's round trip between two CPUs and bandwall's verdict on it (common/llc_probe.hpp)."""

    ns: float
    one_llc: bool  # under bandwall's threshold: the two share a last-level cache


def llc_probe(bindir: Path | str, cpus: Sequence[int], samples: int = 3, **kw: Any) -> LineTrip | None:
    """`bandwall-topo --llc-probe` between the first two of cpus, bandwall's own probe and threshold
    (the median of `samples` samples of 256 round trips): a virtual machine's host may move two vCPUs
    the guest sees sharing an L3 onto two L3s and back from second to second, which moves what a
    team of threads sharing a cache gets. None where the probe did not run (the two threads did not
    answer each other in time: a host that stole a CPU for 20 ms, say, or CPUs this process may no
    longer use: kw goes to subprocess.run, a preexec_fn that widens the mask again)."""
    cmd = [
        tool(bindir, "bandwall-topo"),
        "--llc-probe",
        f"{cpus[0]},{cpus[1]}",
        "--llc-samples",
        str(samples),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        return None
    p = json.loads(proc.stdout)["result"]["llc_probe"]
    return LineTrip(float(p.get("round_trip_ns", 0.0)), bool(p["shared"]))  # none timed where forced


def cpu_fields(path: Path | str = "/proc/cpuinfo") -> dict[str, str]:
    """The first CPU's fields of /proc/cpuinfo (empty where it cannot be read)."""
    fields: dict[str, str] = {}
    try:
        for line in Path(path).read_text().splitlines():
            k, _, v = line.partition(":")
            if k.strip():
                fields.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return fields


# The CPUs the script was given, counted when it started: a peer's OpenMP set-up (Devito's) may pin
# the script's own process to one CPU later, while the runs it launches still take every one.
CPUS_AT_START = len(os.sched_getaffinity(0))


def cpu_name(path: Path | str = "/proc/cpuinfo") -> str:
    """'AMD EPYC 9R14 (AuthenticAMD family 25 model 17), 2 CPUs': the model name, vendor, family
    and model of /proc/cpuinfo, and the CPUs the script was given when it started."""
    f = cpu_fields(path)
    return (
        f"{f.get('model name', 'unknown CPU')} ({f.get('vendor_id', '?')} family {f.get('cpu family', '?')} "
        f"model {f.get('model', '?')}), {CPUS_AT_START} CPUs"
    )


def revision() -> str:
    """The checkout's commit as git describe names it (-dirty when the work tree differs), or
    'unknown' outside a git work tree."""
    try:
        run = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True, check=False
        )
    except OSError:
        return "unknown"
    return run.stdout.strip() or "unknown"


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that ran the script: the interpreter's name, then the script and its words."""
    return shlex.join([Path(sys.executable).name, *(sys.argv if argv is None else argv)])


def header(argv: Sequence[str] | None = None, cpuinfo: Path | str = "/proc/cpuinfo") -> str:
    """What a results file says above a script's figures: when (UTC), on which CPU, by which
    command, from which revision of bandwall."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            f"- date: {now}",
            f"- CPU: {cpu_name(cpuinfo)}",
            f"- command: `{command_line(argv)}`",
            f"- revision: {revision()}",
        ]
    )


def publish(text: str, results: Path | str | None) -> None:
    """Prints a script's table and, with --results FILE, appends it there under the header."""
    print(text)
    if results:
        append_results(results, text)


def append_results(path: Path | str, text: str, title: str | None = None) -> None:
    """Appends text to a Markdown results file: the title (a heading) when given, the header, the
    text, each after a blank line."""
    with open(path, "a") as f:
        f.write("".join(f"\n{part.rstrip()}\n" for part in (title, header(), text) if part))
