"""numa-check's planning and judging, apart from running: which processes each mode starts (with
which CPUs and memory policy), how a figure of merit is read from a run, and the verdict.

The modes follow the experiment of Intel's NUMA 3DFD article:
  all         (a) one process on every node, memory as the OS places it (first-touch)
  node0       (b) one process on the CPUs and memory of the first node (numactl -m 0 -c 0)
  per-node    (c) one process per node at the same time, each bound to its node's CPUs and memory
  interleave  (d) one process on every node, memory interleaved over the nodes
Each mode is one run of bandwall-launch, which binds the processes natively; this module only plans
and reads records, so it can be tested on synthetic topologies and the launching in a NUMA guest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from bandwall.core import manifest, native, records
from bandwall.core.errors import UsageError
from bandwall.core.fom import Fom, last_record, median
from bandwall.core.topo import cpu_list, resolve_threads
from bandwall.kernels import iso3dfd

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
        return f"{cpu_list(self.cpus) if self.cpus else 'all'}@{self.policy}"


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


def plan_commands(topology: dict, target: list[str], chosen: list[int] | None = None) -> list[dict]:
    """The command line of each mode ({mode, title, argv}): what `numa-check --plan` shows."""
    launcher = native.executable("bandwall-launch")
    return [
        {"mode": m.name, "title": m.title, "argv": [launcher, *m.launcher_args(), "--", *target]}
        for m in plan(topology, chosen)
    ]


def nodes_with_cpus(topology: dict, chosen: list[int] | None = None) -> list[tuple[int, list[int]]]:
    """(OS number, CPUs) of each NUMA node that has CPUs, from a bandwall-topo record: of this
    machine, only the CPUs this process may use (taskset, numactl, a batch system's cgroup), and
    only the nodes that keep some; of a described machine (synthetic, XML), all of them. chosen
    (the CPUs --cpus, --bind and --threads name, in their order) keeps only those, in that order."""
    here = topology["result"].get("source") == "this machine"
    allowed = os.sched_getaffinity(0) if here else None
    out = []
    for n in topology["result"]["numa_nodes"]:
        cpus = [c for c in n["cpus"] if allowed is None or c in allowed]
        if chosen is not None:
            cpus = [c for c in chosen if c in cpus]
        if cpus:
            out.append((n["os_index"], cpus))
    return out


def plan(topology: dict, chosen: list[int] | None = None) -> list[Mode]:
    """The modes to run on a machine; only (a) when it has fewer than two nodes with CPUs. chosen:
    the CPUs to use, in order (None: every allowed CPU, the processes keep the set they inherit)."""
    nodes = nodes_with_cpus(topology, chosen)
    modes = [Mode("all", [Proc(chosen, "default")])]
    if len(nodes) < 2:
        return modes
    first, first_cpus = nodes[0]
    every = ",".join(str(n) for n, _ in nodes)
    modes += [
        Mode("node0", [Proc(first_cpus, f"bind:{first}")]),
        Mode("per-node", [Proc(cpus, f"bind:{n}") for n, cpus in nodes]),
        Mode("interleave", [Proc(chosen, f"interleave:{every}")]),
    ]
    return modes


def page_split_advice(recs: list[dict]) -> list[str]:
    """A line when a run's first-touch had to use base pages because huge pages are coarser than
    each thread's part of the arrays (placement.page_split of the built-in's records)."""
    for rec in recs:
        split = rec.get("placement", {}).get("page_split", {})
        if split.get("mode", "").startswith("base pages throughout"):
            return [
                f"huge pages ({split['huge_page_bytes'] >> 20} MiB) are coarser than each thread's part of the "
                f"arrays ({split['smallest_part_bytes'] >> 10} KiB in the smallest): first-touch used base pages "
                "to keep each part on its thread's node"
            ]
    return []


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
    init: str | None = None,
    size: str = "256M",
    reps: int = 5,
    grid: tuple[int, int, int] = (272, 272, 272),
    iters: int = 5,
    free: bool = False,
) -> Builtin:
    """The command line of a built-in for one process; {cpus} and {ncpus} are its CPUs (bandwall-launch):
    a thread on each, in order, or with free (--bind none) threads left to the scheduler within them."""
    inits = manifest.iso3dfd_word_names("init")  # stream's placement policies of the same names
    init = init or inits[0]
    if init not in inits:
        raise UsageError(f"unknown --init {init!r} (use {' or '.join(inits)})")
    where = ["--bind", "none"] if free else ["--cpus", "{cpus}"]
    if name == "stream":
        return Builtin(
            "bandwall-stream",
            [
                "--kernel",
                "triad",
                "--threads",
                "{ncpus}",
                *where,
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
        return Builtin(
            iso3dfd.TOOL,
            iso3dfd.native_args(
                grid,
                iters,
                threads="{ncpus}",
                init=init,
                bind="none" if free else "compact",
                cpus=None if free else "{cpus}",
            ),
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


def chosen_cpus(threads: int | None, cpus: str | None, bind: str, given: bool) -> list[int] | None:
    """The CPUs numa-check's modes share out, in order, from --threads, --cpus and --bind (resolved
    natively); None when none of them was given or for --bind none: each mode's processes keep the
    CPUs they inherit (and with --bind none the built-ins leave their threads free on them)."""
    if not given:
        return None
    if bind == "none" and not cpus:
        if threads:
            raise UsageError(
                "--bind none leaves each mode its CPUs; --threads needs --cpus or a binding policy"
            )
        return None
    return resolve_threads(threads, cpus, bind)


def run(
    target: list[str],
    fom: Fom,
    rounds: int,
    topo: dict,
    builtin_name: str | None,
    timeout: float | None,
    chosen: list[int] | None = None,
) -> dict:
    """Runs every mode `rounds` times, alternating, and returns the numa-check record.

    A built-in that refuses its parameters (exit 2) makes bandwall-launch exit 2 with its message
    (--usage-errors), which reads as bad input (UsageError); a command's exit 2 is a failed run."""
    modes = plan(topo, chosen)
    values: dict[str, list[float]] = {m.name: [] for m in modes}
    last: dict[str, list[dict]] = {}
    usage = ["--usage-errors"] if builtin_name else []
    for _ in range(rounds):
        for mode in modes:
            rec = native.run_record(
                "bandwall-launch", usage + mode.launcher_args() + ["--"] + target, timeout=timeout
            )
            procs = rec["result"]["processes"]
            values[mode.name].append(fom.mode_value(procs))
            last[mode.name] = procs
    medians = {name: median(v) for name, v in values.items()}
    nodes = len(nodes_with_cpus(topo, chosen))
    result = {"fom_unit": fom.unit, "fom": fom.description, "nodes": nodes, "modes": {}}
    for mode in modes:
        entry = {
            "title": mode.title,
            "procs": [p.spec() for p in mode.procs],
            "value": medians[mode.name],
            "rounds": values[mode.name],
            "wall_s": [p["wall_s"] for p in last[mode.name]],
        }
        if builtin_name:
            entry["page_maps"] = [
                last_record(p["stdout"]).get("placement", {}).get("page_map", {}) for p in last[mode.name]
            ]
        result["modes"][mode.name] = entry
    result.update(verdict(medians, nodes))
    if builtin_name:
        recs = [last_record(p["stdout"]) for m in modes for p in last[m.name]]
        result["advice"] = result.get("advice", []) + page_split_advice(recs)
    prov = dict(topo["provenance"])
    all_cpus = sorted(c for _, cpus in nodes_with_cpus(topo, chosen) for c in cpus)
    # What each built-in process worked on (its arrays or grid), as its own record says; a command's is unknown.
    sizes = (
        last_record(last[modes[0].name][0]["stdout"]).get("provenance", {}).get("sizes", {})
        if builtin_name
        else {}
    )
    prov.update(
        date=prov.get("date", ""),
        threads=len(all_cpus),
        cpus=cpu_list(all_cpus),
        binding="numa-check modes",
        placement=" | ".join(f"{m.name}: {' '.join(p.spec() for p in m.procs)}" for m in modes),
        sizes=sizes,
        repetitions=rounds,
    )
    config = {
        "target": builtin_name or target,
        "kind": "builtin" if builtin_name else "command",
        "rounds": rounds,
        "modes": [m.name for m in modes],
    }
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "numa-check",
        "config": config,
        "result": result,
        "validation": records.not_applicable(
            "compares the speed of runs; a built-in kernel checks its own answer"
        ),
        "provenance": prov,
    }
    return records.finish(rec)
