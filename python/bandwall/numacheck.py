"""numa-check's planning and judging, apart from running: which processes each mode starts (with
which CPUs and memory policy), how a figure of merit is read from a run, and the verdict.

The modes follow seed 000's experiment:
  all         (a) one process on every node, memory as the OS places it (first-touch)
  node0       (b) one process on the CPUs and memory of the first node (numactl -m 0 -c 0)
  per-node    (c) one process per node at the same time, each bound to its node's CPUs and memory
  interleave  (d) one process on every node, memory interleaved over the nodes
Each mode is one run of bandwall-launch, which binds the processes natively; this module only plans
and reads records, so it can be tested on synthetic topologies and the launching in a NUMA guest.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from bandwall.errors import RunFailed, UsageError

# Below this relative difference two modes count as equal: runs on a shared machine vary this much.
NOISE = 0.10
MODE_TITLES = {
    "all": "all nodes, memory as the OS places it",
    "node0": "one node only (its CPUs and memory)",
    "per-node": "one process per node, each bound to its node",
    "interleave": "all nodes, memory interleaved",
}
WHOLE_MACHINE = ("all", "per-node", "interleave")


@dataclass
class Proc:
    cpus: list[int] | None  # None: the process keeps the CPU set it inherits
    policy: str  # default, bind:N, interleave:L

    def spec(self) -> str:
        return f"{_cpu_list(self.cpus) if self.cpus else 'all'}@{self.policy}"


@dataclass
class Mode:
    name: str
    procs: list[Proc]

    @property
    def title(self) -> str:
        return MODE_TITLES[self.name]

    def launcher_args(self) -> list[str]:
        out: list[str] = []
        for p in self.procs:
            out += ["--proc", p.spec()]
        return out


def nodes_with_cpus(topology: dict) -> list[tuple[int, list[int]]]:
    """(OS number, CPUs) of each NUMA node that has CPUs, from a bandwall-topo record."""
    return [(n["os_index"], list(n["cpus"])) for n in topology["result"]["numa_nodes"] if n["cpus"]]


def plan(topology: dict) -> list[Mode]:
    """The modes to run on a machine; only (a) when it has fewer than two nodes with CPUs."""
    nodes = nodes_with_cpus(topology)
    modes = [Mode("all", [Proc(None, "default")])]
    if len(nodes) < 2:
        return modes
    first, first_cpus = nodes[0]
    every = ",".join(str(n) for n, _ in nodes)
    modes += [
        Mode("node0", [Proc(first_cpus, f"bind:{first}")]),
        Mode("per-node", [Proc(cpus, f"bind:{n}") for n, cpus in nodes]),
        Mode("interleave", [Proc(None, f"interleave:{every}")]),
    ]
    return modes


def _cpu_list(cpus: list[int]) -> str:
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


@dataclass
class Fom:
    """How a run is scored: a field of the record a built-in prints, a number in the output, or wall time.

    Every mode is turned into a rate (higher is better) summed over its processes, so modes that run
    one process and modes that run one per node compare as throughput of the whole machine.
    """

    kind: str  # record, regex, wall
    path: tuple[str, ...] = ()  # for record
    regex: re.Pattern | None = None  # for regex: group 1 (or the whole match) is the number
    lower_is_better: bool = False  # for regex: the number is a time, not a rate
    unit: str = ""
    description: str = field(default="")

    @staticmethod
    def from_regex(text: str, lower_is_better: bool = False) -> Fom:
        try:
            rx = re.compile(text)
        except re.error as e:
            raise UsageError(f"--fom {text!r} is not a regular expression: {e}") from e
        unit = "1/s" if lower_is_better else "as printed"
        return Fom(
            "regex",
            regex=rx,
            lower_is_better=lower_is_better,
            unit=unit,
            description=f"number matched by {text!r}" + (" (lower is better)" if lower_is_better else ""),
        )

    @staticmethod
    def wall() -> Fom:
        return Fom("wall", unit="runs/s", description="runs per second (from wall time)")

    def value(self, proc: dict) -> float:
        """The figure of merit of one process from its launcher entry (stdout, wall_s)."""
        if self.kind == "wall":
            return 1.0 / max(proc["wall_s"], 1e-9)
        if self.kind == "record":
            rec = last_record(proc["stdout"])
            v = rec
            for key in self.path:
                if not isinstance(v, dict) or key not in v:
                    raise RunFailed(f"the record has no {'.'.join(self.path)}")
                v = v[key]
            return float(v)
        matches = list(self.regex.finditer(proc["stdout"]))
        if not matches:
            raise RunFailed(
                f"--fom {self.regex.pattern!r} matched nothing in the output of process "
                f"{proc['rank']} ({proc['proc']})"
            )
        m = matches[-1]
        text = m.group(1) if m.groups() else m.group(0)
        try:
            v = float(text)
        except (TypeError, ValueError) as e:
            raise RunFailed(f"--fom {self.regex.pattern!r} matched {text!r}, which is not a number") from e
        if self.lower_is_better:
            if v <= 0:
                raise RunFailed(f"--fom {self.regex.pattern!r} matched {v}, not a positive time")
            return 1.0 / v
        return v

    def mode_value(self, processes: list[dict]) -> float:
        return sum(self.value(p) for p in processes)


def last_record(stdout: str) -> dict:
    import json

    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RunFailed("the built-in printed no record")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RunFailed(f"the built-in printed a malformed record: {e}") from e


def median(values: list[float]) -> float:
    return statistics.median(values)


def verdict(values: dict[str, float], nodes: int) -> dict:
    """Judges the medians of each mode: does NUMA cost speed, how much, and what to do."""
    if nodes < 2 or set(values) != set(MODE_TITLES):
        return {
            "judgeable": False,
            "verdict": f"cannot judge: this machine has {nodes} NUMA node{'s' if nodes != 1 else ''} with CPUs, "
            "so all memory is local to every CPU and the modes cannot differ; run numa-check on a "
            "machine with two or more nodes",
            "advice": [],
        }
    a, one = values["all"], values["node0"]
    best = max(WHOLE_MACHINE, key=lambda m: values[m])
    cost = 1.0 - a / values[best] if values[best] > 0 else 0.0
    scaling = a / (nodes * one) if one > 0 else 0.0
    out = {
        "judgeable": True,
        "best_mode": best,
        "numa_cost": cost,
        "speedup_of_best": values[best] / a if a else 0.0,
        "node_scaling": scaling,
    }
    slower_than_one = a < one * (1 - NOISE)
    if cost <= NOISE:
        out["verdict"] = (
            f"NUMA costs this program nothing measurable: the default run is within {cost:.0%} of the "
            f"best placement ({MODE_TITLES[best]}); all {nodes} nodes give {scaling:.2f}x of "
            f"{nodes}x one node"
        )
        out["advice"] = [
            "keep the default placement; initialise data in parallel (first-touch) as it does now"
        ]
        return out
    lead = (
        f"NUMA costs this program {cost:.0%} of its speed: {MODE_TITLES[best]} reaches "
        f"{values[best] / a:.2f}x the default run"
    )
    if slower_than_one:
        lead += f", and all {nodes} nodes are slower than one node alone ({a / one:.2f}x)"
    out["verdict"] = lead
    if best == "per-node":
        out["advice"] = [
            "initialise each array in parallel in the compute loop's order (first-touch with a static schedule), "
            "so each thread's data lands on its own node",
            "or run one process per NUMA node (e.g. MPI ranks), each bound to its node's CPUs and memory",
        ]
    else:
        out["advice"] = [
            "the data probably sits on one node (touched first by one thread): initialise it in parallel with "
            "first-touch in the compute loop's order",
            "where the access pattern cannot be made local, interleave the memory over the nodes "
            "(numactl --interleave=all, or placement interleave)",
        ]
    return out


@dataclass
class Builtin:
    """A built-in kernel numa-check can run: its executable, arguments and the record field it is scored by."""

    executable: str
    args: list[str]
    fom: Fom


def builtin(
    name: str,
    init: str = "first-touch",
    size: str = "256M",
    reps: int = 5,
    grid: tuple[int, int, int] = (272, 272, 272),
    iters: int = 5,
) -> Builtin:
    """The command line of a built-in for one process; {cpus} and {ncpus} are its CPUs (bandwall-launch)."""
    if init not in ("first-touch", "serial"):
        raise UsageError(f"unknown --init {init!r} (use first-touch or serial)")
    if name == "stream":
        return Builtin(
            "bandwall-stream",
            [
                "--kernel",
                "triad",
                "--threads",
                "{ncpus}",
                "--cpus",
                "{cpus}",
                "--placement",
                init,
                "--size",
                size,
                "--reps",
                str(reps),
            ],
            Fom(
                "record",
                path=("result", "best_GBps"),
                unit="GB/s",
                description="stream triad result.best_GBps",
            ),
        )
    if name == "iso3dfd":
        n1, n2, n3 = grid
        return Builtin(
            "bandwall-iso3dfd",
            [
                str(n1),
                str(n2),
                str(n3),
                str(iters),
                str(n1),
                str(min(16, n2)),
                str(min(16, n3)),
                "compact",
                "{ncpus}",
                "--init",
                init,
                "--json",
            ],
            Fom(
                "record",
                path=("result", "mpoints_per_s"),
                unit="MPoints/s",
                description="iso3dfd result.mpoints_per_s",
            ),
        )
    raise UsageError(
        f"unknown kernel {name!r} (built-ins: {', '.join(BUILTINS)}; for a command use -- COMMAND)"
    )


BUILTINS = ("stream", "iso3dfd")
