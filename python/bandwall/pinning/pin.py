"""Pinning unmodified programs: plans a run of bandwall-pin (which preloads libbandwall-pin.so into the
program and samples where its threads run), and the experiment of PGI's MP_* variables, the same command bound one
thread per CPU, with all threads on one CPU, and unbound, scored side by side.

CPU lists and the topology policies are resolved natively (bandwall-pin uses the same parser and the
same hwloc policy code as the kernels); PGI's MP_BIND / MP_BLIST / MP_SPIN in the environment are
read by the library itself, so they mean the same under `bandwall pin` and when preloaded by hand.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from bandwall.core import decide, native, records
from bandwall.core.claims import Claim, better, claim, say
from bandwall.core.errors import UsageError
from bandwall.core.fom import Fom
from bandwall.core.spread import NOISE, Spread


def launcher_args(
    cpus: str | None = None,
    bind: str | None = None,
    threads: int = 0,
    skip: str | None = None,
    spin: str | None = None,
    report: bool = False,
    interval_ms: int = 10,
) -> list[str]:
    """bandwall-pin's arguments: --cpus wins over --bind, as everywhere; both are read natively."""
    args: list[str] = []
    if cpus:
        args += ["--cpus", cpus]
    elif bind:
        args += ["--bind", bind]
    if threads:
        args += ["--threads", str(threads)]
    if skip:
        args += ["--skip", skip]
    if spin:
        args += ["--spin", spin]
    if report:
        args += ["--report", "--interval", str(interval_ms)]
    return args


def pin(
    command: list[str], timeout: float | None = None, env: dict[str, str] | None = None, **options
) -> dict:
    """Runs command under bandwall-pin; returns the finished record (result.threads with report=True)."""
    if not command:
        raise UsageError("no command given (bandwall pin [OPTIONS] -- COMMAND ...)")
    args = launcher_args(**options) + ["--"] + list(command)
    rec = records.finish(native.run_record("bandwall-pin", args, env=env, timeout=timeout))
    if "threads" in rec["result"]:
        rec["result"]["thread_summary"] = thread_summary(rec["result"]["threads"])
    return rec


def thread_summary(threads: list[dict]) -> dict:
    """What the thread report says in a few numbers: bound threads and how many were seen only on
    their CPU; unbound ones (no CPU intended, or skipped) and how many were seen on more than one
    CPU; migrations of all of them (the kernel's count, the move onto a bound CPU included)."""
    bound = [t for t in threads if t["cpu_intended"] is not None]
    unbound = [t for t in threads if t["cpu_intended"] is None]
    return {
        "bound": len(bound),
        "bound_stayed": sum(1 for t in bound if set(t["cpus_seen"]) <= {str(t["cpu_intended"])}),
        "unbound": len(unbound),
        "unbound_wandered": sum(1 for t in unbound if len(t["cpus_seen"]) > 1),
        "migrations": sum(t["migrations"] or 0 for t in threads),
    }


@dataclass(frozen=True)
class Mode:
    name: str
    title: str
    args: list[str]


def compare_modes(cpus: list[int], threads: int) -> list[Mode]:
    """The three runs of PGI's MP_BIND experiment for threads threads on cpus (the CPUs this process may use)."""
    bound = cpus[:threads] if threads <= len(cpus) else cpus
    listed = ",".join(str(c) for c in bound)
    return [
        Mode("bound", f"one thread per CPU ({listed})", ["--cpus", listed]),
        Mode("one-cpu", f"all threads on CPU {cpus[0]}", ["--cpus", str(cpus[0])]),
        Mode("unbound", "threads left to the scheduler", ["--bind", "none"]),
    ]


def compare(
    command: list[str],
    fom: Fom,
    rounds: int | None = None,
    threads: int = 0,
    spin: str | None = None,
    timeout: float | None = None,
    skip: str | None = None,
) -> dict:
    """Runs the three modes `rounds` times (default: the decision rule's rounds, fewer being unable to
    tell a difference), alternating (the starting mode rotates each round), and returns a pin-compare
    record: each mode's figure of merit per round and median, the ratios, and the decision rule's
    claims on bound against unbound and against one CPU with the verdict words rendered from them."""
    if not command:
        raise UsageError("no command given (bandwall pin --compare [OPTIONS] -- COMMAND ...)")
    rounds = rounds or decide.rule().rounds
    cpus = sorted(os.sched_getaffinity(0))
    threads = threads or len(cpus)
    modes = compare_modes(cpus, threads)
    values: dict[str, list[float]] = {m.name: [] for m in modes}
    walls: dict[str, list[float]] = {m.name: [] for m in modes}
    last: dict[str, dict] = {}
    extra = (
        ["--threads", str(threads)] + (["--spin", spin] if spin else []) + (["--skip", skip] if skip else [])
    )
    for r in range(rounds):
        for i in range(len(modes)):
            mode = modes[(i + r) % len(modes)]
            rec = native.run_record(
                "bandwall-pin", mode.args + extra + ["--"] + list(command), timeout=timeout
            )
            res = rec["result"]
            proc = {"stdout": res["stdout"], "wall_s": res["wall_s"], "rank": 0, "proc": mode.name}
            values[mode.name].append(fom.value(proc))
            walls[mode.name].append(res["wall_s"])
            last[mode.name] = rec
    result = compare_result(
        fom.description,
        fom.unit,
        threads,
        {
            m.name: {
                "title": m.title,
                "cpus": last[m.name]["config"]["cpus"],
                "rounds": values[m.name],
                "wall_s": walls[m.name],
            }
            for m in modes
        },
    )
    prov = dict(last["bound"]["provenance"])
    prov.update(binding="pin-compare modes", threads=threads, repetitions=rounds)
    config = {
        "command": list(command),
        "rounds": rounds,
        "modes": [m.name for m in modes],
        "spin": last["bound"]["config"]["spin"],
        "skip_mask": last["bound"]["config"]["skip_mask"],
        "openmp_env": last["bound"]["config"]["openmp_env"],
    }
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "pin-compare",
        "config": config,
        "result": result,
        "validation": records.not_applicable("compares the speed of runs under three bindings"),
        "provenance": prov,
    }
    return records.finish(rec)


# The figure of merit of every mode is a rate: Fom.value turns a time (--lower-is-better, wall time)
# into its inverse, so a claim that the figure rises from another mode to the bound one says that
# binding is faster.
HIGHER_IS_BETTER = True
PAYS, COSTS = "pays", "costs"
BOUND = "bound threads"
# the modes bound threads are compared with: the label of their side of the claim, and what binding
# is set beside in the verdict's words
AGAINST = {
    "unbound": ("unbound threads", "leaving threads to the scheduler"),
    "one-cpu": ("every thread on one CPU", "putting every thread on one CPU"),
}


def compare_claims(fom: str, unit: str, rounds: dict[str, list[float]]) -> list[Claim]:
    """The decision rule on bound threads against unbound ones and against every thread on one CPU:
    fom (the figure of merit, a rate in unit) from the other mode to the bound one, round k of every
    mode paired (they ran in the same round, in the order the rounds ran). The figure as in the
    report's binding card, so that both say the same of the same comparison."""
    if not rounds.get("bound"):
        return []
    bound = Spread.of(rounds["bound"], unit)
    return [
        claim(fom, Spread.of(rounds[other], unit), bound, label, BOUND)
        for other, (label, _) in AGAINST.items()
        if rounds.get(other)
    ]


def compare_verdict(claims: list[Claim]) -> dict:
    """The verdict's words, one sentence per claim and each rendered from it: binding pays (or costs)
    beside the other mode only when the rule says so, else the claim's "no difference beyond noise";
    answers: pays, costs or no difference beyond noise, per claim."""
    said, answers = [], []
    beside = {label: words for label, words in AGAINST.values()}
    for c in claims:
        b = better(c, HIGHER_IS_BETTER)
        answer = NOISE if b is None else PAYS if b else COSTS
        if answer == NOISE:
            said.append(say(c))
        else:
            said.append(f"binding one thread per CPU {answer} beside {beside[c.start.label]}: {say(c)}")
        answers.append(answer)
    return {"text": "; ".join(said), "claims_said": said, "answers": answers}


def compare_result(fom: str, unit: str, threads: int, modes: dict[str, dict]) -> dict:
    """A pin-compare record's result from each mode's rounds (a plain function, without running
    anything): modes maps bound, one-cpu and unbound to their title, cpus, rounds (the figure of merit
    in each round, in the order the rounds ran) and wall_s; adds each mode's median (value), the
    ratios of the medians, the claims and the verdict rendered from them."""
    values = {name: [float(v) for v in m["rounds"]] for name, m in modes.items()}
    medians = {name: statistics.median(v) for name, v in values.items()}
    claims = compare_claims(fom, unit, values)
    return {
        "fom": fom,
        "fom_unit": unit,
        "threads": threads,
        "modes": {
            name: {
                "title": m["title"],
                "cpus": m["cpus"],
                "value": medians[name],
                "rounds": values[name],
                "wall_s": list(m["wall_s"]),
            }
            for name, m in modes.items()
        },
        "bound_over_one_cpu": medians["bound"] / medians["one-cpu"] if medians["one-cpu"] else None,
        "bound_over_unbound": medians["bound"] / medians["unbound"] if medians["unbound"] else None,
        "claims": [c.to_json() for c in claims],
        "verdict": compare_verdict(claims),
    }


def thread_rows(rec: dict) -> list[list]:
    """One row per thread: index, tid, intended CPU, CPUs seen (share %), migrations, switches."""
    rows = []
    for t in rec["result"].get("threads", []):
        seen = ", ".join(
            f"{cpu}: {100 * share:.0f}%"
            for cpu, share in sorted(t["cpus_seen"].items(), key=lambda kv: (-kv[1], int(kv[0])))
        )
        index = "skipped" if t.get("skipped") else t["index"]
        rows.append(
            [
                index,
                t["tid"],
                t["cpu_intended"],
                seen or "-",
                t["migrations"],
                t["voluntary_switches"],
                t["involuntary_switches"],
            ]
        )
    return rows
