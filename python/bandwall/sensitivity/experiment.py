"""The sensitivity experiment: the program run whole at every dose of the bandit and the pirate, in
rotated rounds, each dose paired with the same round's dose-0 run; the bandit timed "alone" just
before each of its runs beside the program (beside a loop on the program's CPUs that takes no
memory, so that a busy neighbour core's cost to the bandit's clock is not taken for bandwidth), and
so again beside a STREAM triad of known bandwidth there (what it loses to X GB/s taken beside it).
In the same rotated rounds run the controls (controls.py): that triad alone and under every bandit
dose, random reads over half of what the pirate holds alone and under every pirate dose, and the
program beside a placebo on the bandit's CPUs. Then the program runs as 1, 2, ... copies at once
(copies.py). The record (tool "sensitivity")."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from bandwall.core import decide, records, topo
from bandwall.core.errors import RunFailed
from bandwall.kernels import stream
from bandwall.sensitivity import controls, coprocess, verdict
from bandwall.sensitivity import copies as copies_mod
from bandwall.sensitivity import plan as plan_mod
from bandwall.sensitivity.program import Program, repeat_for

ALONE_MIN_S, ALONE_MAX_S = 0.1, 1.0  # how long the bandit is timed alone: the program's time, within these


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def scan_cache(pirate: coprocess.Pirate, plan: plan_mod.Plan, progress) -> dict:
    """What the pirate can hold alone, and whether the program's CPU shares it: a pass through its
    warm lines from the program's first CPU, against a pass after they are flushed to memory."""
    hit = decide.threshold("cache_hit")
    tried, held = [], None
    misses = 0
    for size in plan_mod.scan_sizes(plan):
        progress(f"pirate: can it hold {size / 2**20:.1f} MiB?")
        try:
            p = pirate.probe(plan.program_cpus[0], size)
        except RunFailed as e:  # a CPU the pirate cannot flush lines on
            return {"tried": tried, "held": None, "shared": False, "error": str(e)}
        row = {
            "bytes": size,
            "own_ns": p["own_ns"],
            "shared_ns": p["shared_ns"],
            "flushed_ns": p["flushed_ns"],
            "held": p["own_ns"] < hit * p["flushed_ns"],
            "shared": p["shared_ns"] < hit * p["flushed_ns"],
        }
        tried.append(row)
        if row["held"]:
            held, misses = row, 0
        else:
            misses += 1
            if misses == 2:  # two sizes in a row it cannot hold: the larger ones neither
                break
    # Whether the program's CPU shares the cache is read where the pirate holds most surely: the
    # smallest size beyond the private caches it held.
    shared = next((r["shared"] for r in tried if r["held"]), False)
    return {"tried": tried, "held": held, "shared": shared}


def measure(
    argv: list[str],
    plan: plan_mod.Plan,
    rounds: int | None = None,
    repeat: int | None = None,
    more_rounds: bool = True,
    progress: Callable[[str], None] | None = None,
    copies: bool = True,
) -> dict:
    """Runs the experiment and returns the sensitivity record (not yet stored). A program that fails
    raises RunFailed; the bandit and the pirate end with it."""
    progress = progress or (lambda m: None)
    rule = decide.rule()
    rounds = rounds or rule.rounds
    program = Program(argv, plan.program_cpus)
    progress("the program once, alone")
    first = program.run()  # a program that fails, or one too short for --repeat, stops here
    program.repeat, repeat_source = repeat_for(first, repeat)
    alone_s = min(ALONE_MAX_S, max(ALONE_MIN_S, first * program.repeat))

    allowed = sorted(set(plan.program_cpus) | set(plan.free_cpus))
    progress(f"the node's bandwidth: STREAM triad on CPUs {topo.cpu_list(allowed)}")
    node = stream.run("triad", threads=len(allowed), cpus=topo.cpu_list(allowed), reps=10)
    node_gbps = node["result"]["median_GBps"]

    cache: dict = {"tried": [], "held": None, "shared": False}
    pirate_doses: list[int] = []
    with (
        coprocess.Bandit(plan.bandit_cpus, pattern=plan.bandit_pattern) as bandit,
        coprocess.Bandit(plan.program_cpus, pattern="triad") as reader,
        coprocess.Bandit(plan.program_cpus, pattern="compute") as spinner,
        coprocess.Bandit(plan.bandit_cpus, pattern="compute") as placebo,
    ):
        pirate = cache_reader = None
        if plan.pirate_cpu is not None:
            pirate = coprocess.Pirate(plan.pirate_cpu, plan_mod.scan_sizes(plan)[-1])
        try:
            if pirate is not None:
                cache = scan_cache(pirate, plan, progress)
                held = cache["held"]
                if held is not None and cache["shared"] and held["bytes"] > 2 * plan.private_bytes:
                    pirate_doses = [int(held["bytes"] * s) // 64 * 64 for s in plan_mod.PIRATE_SHARES]
                    cache["reader_bytes"] = held["bytes"] // 2 // 64 * 64
                    cache_reader = coprocess.Pirate(plan.program_cpus[0], cache["reader_bytes"])
            top = plan.doses[-1]
            items = (
                [("base", 0), ("placebo", 1)]
                + [("dose", d) for d in plan.doses]
                + [("bwc", 0)]
                + [("bwc", d) for d in plan.doses]
                + [("cache", b) for b in pirate_doses]
                + ([("cc", 0)] + [("cc", b) for b in pirate_doses] if cache_reader else [])
            )
            data: dict = {it: [] for it in items}

            def step(kind: str, x: float) -> object:
                if kind == "base":
                    return program.run()
                if kind == "placebo":  # beside a co-runner that takes no memory, on the bandit's CPUs
                    placebo.run(1.0)
                    try:
                        return {"s": program.run()}
                    finally:
                        placebo.stop()
                if kind == "dose":
                    alone = bandit_alone(
                        bandit, spinner, x, alone_s
                    )  # just before: the same state of the host
                    bandit.run(x)
                    try:
                        t = program.run()
                    finally:
                        got = bandit.stop()
                    return {"s": t, "GBps": got["GBps"], "alone_GBps": alone}
                if kind == "bwc":  # the bandwidth control: the triad alone (dose 0) or beside the bandit
                    alone = bandit_alone(bandit, spinner, x, alone_s) if x == top else None
                    reader.run(1.0)
                    if x:
                        bandit.run(x)
                    time.sleep(alone_s)
                    got = bandit.stop()["GBps"] if x else None
                    return {"GBps": got, "reader_GBps": reader.stop()["GBps"], "alone_GBps": alone}
                if kind == "cache":
                    alone_ns = pirate.hold(x)
                    try:
                        t = program.run()
                    finally:
                        got = pirate.stop()
                    return {"s": t, "alone_ns": alone_ns, "ns": got["ns_per_access"]}
                # the cache control: random reads over half of what the pirate holds, alone or beside it
                if x:
                    pirate.hold(x)
                try:
                    cache_reader.hold(cache["reader_bytes"])
                    time.sleep(alone_s)
                    ns = cache_reader.stop()["ns_per_access"]
                finally:
                    got = pirate.stop()["ns_per_access"] if x else None
                return {"ns": ns, "pirate_ns": got}

            r, budget = 0, rounds
            while r < budget:
                for j in range(len(items)):
                    kind, x = items[(j + r) % len(items)]
                    progress(f"round {r + 1}/{budget}: {kind} {x:g}")
                    data[(kind, x)].append(step(kind, x))
                r += 1
                if r == rounds < rule.rounds_when_unsettled and more_rounds and unsettled(data, items, rule):
                    budget = rule.rounds_when_unsettled
                    progress(f"a dose is unsettled after {rounds} rounds: {budget} rounds in all")
        finally:
            for p in (pirate, cache_reader):
                if p is not None:
                    p.close()
    sets = copies_mod.cpu_sets(plan.program_cpus, allowed)
    copy_data = None
    if len(sets) > 1 and not copies:
        copy_data = {"why": "not asked for (--no-copies)", "sets": [topo.cpu_list(s) for s in sets]}
    elif len(sets) > 1:
        try:
            copy_data = copies_mod.measure(argv, plan.program_cpus, allowed, program.repeat, rounds, progress)
        except RunFailed as e:  # a program that pins itself to CPUs of its own cannot run as copies
            progress(f"copies: {e}")
            copy_data = {
                "why": f"{e} (a program that binds itself to CPUs it names cannot run as copies on others)",
                "sets": [topo.cpu_list(s) for s in sets],
            }
    return build(
        argv, plan, program, repeat_source, r, data, cache, pirate_doses, node, node_gbps, rule, copy_data
    )


def bandit_alone(bandit: coprocess.Bandit, spinner: coprocess.Bandit, dose: float, seconds: float) -> float:
    """The bandit's rate at a dose "alone": beside a loop on the program's CPUs that takes no memory
    (their being busy costs the bandit's core some clock, which is not bandwidth)."""
    spinner.run(1.0)
    try:
        bandit.run(dose)
        time.sleep(seconds)
        return bandit.stop()["GBps"]
    finally:
        spinner.stop()


def ratios(data: dict, kind: str, x: float) -> tuple[list[float], list[float]]:
    """The paired rounds whose ratio is a slowdown (above 1 when slowed): the program's time over its
    time alone, the triad's rate alone over beside the bandit, the cache reader's ns beside the pirate
    over alone."""
    if kind in ("dose", "cache", "placebo"):
        return [v["s"] for v in data[(kind, x)]], data[("base", 0)]
    if kind == "bwc":
        return [v["reader_GBps"] for v in data[("bwc", 0)]], [v["reader_GBps"] for v in data[(kind, x)]]
    return [v["ns"] for v in data[(kind, x)]], [v["ns"] for v in data[("cc", 0)]]


def unsettled(data: dict, items: list, rule) -> bool:
    """Whether a slowdown, the program's or a control's, is unsettled under the rule: its median
    beyond the threshold, its interval not (the rule's case for more rounds, decided then on all of
    them)."""
    for kind, x in items:
        if kind != "base" and x:
            a, b = ratios(data, kind, x)
            if decide.unsettled(decide.ratio_interval(a, b, rule), rule):
                return True
    return False


def _slowdown(times: list[float], base: list[float], rule) -> dict:
    iv = decide.ratio_interval(times, base, rule)
    return {"median": iv.median, "lo": iv.lo, "hi": iv.hi, "rounds": iv.rounds, "enough": iv.enough}


def build(
    argv,
    plan,
    program,
    repeat_source,
    rounds,
    data,
    cache,
    pirate_doses,
    node,
    node_gbps,
    rule,
    copy_data=None,
) -> dict:
    base = data[("base", 0)]
    curve = []
    for d in plan.doses:
        beside = data[("dose", d)]
        curve.append(
            {
                "dose": d,
                "taken_GBps": _median([b["GBps"] for b in beside]),
                "bandit_alone_GBps": _median([b["alone_GBps"] for b in beside]),
                "slowdown": _slowdown([b["s"] for b in beside], base, rule),
                "times_s": [b["s"] for b in beside],
            }
        )
    full = plan.doses[-1]
    bw_control = controls.bandwidth(
        topo.cpu_list(plan.program_cpus),
        [v["reader_GBps"] for v in data[("bwc", 0)]],
        [
            (d, [v["reader_GBps"] for v in data[("bwc", d)]], [v["GBps"] for v in data[("bwc", d)]])
            for d in plan.doses
        ],
        rule,
    )
    prog, ref = data[("dose", full)], data[("bwc", full)]
    estimate = verdict.bandwidth_estimate(
        [x["alone_GBps"] for x in prog],
        [x["GBps"] for x in prog],
        [x["alone_GBps"] for x in ref],
        [x["GBps"] for x in ref],
        [x["reader_GBps"] for x in ref],
        rule,
        control=bw_control,
    )
    held = cache.get("held")
    cache_curve = []
    for b in pirate_doses:
        rows = data[("cache", b)]
        cache_curve.append(
            {
                "pirate_MiB": b / 2**20,
                "left_MiB": (held["bytes"] - b) / 2**20,
                "slowdown": _slowdown([x["s"] for x in rows], base, rule),
                "pirate_alone_ns": _median([x["alone_ns"] for x in rows]),
                "pirate_beside_ns": _median([x["ns"] for x in rows]),
                "times_s": [x["s"] for x in rows],
            }
        )
    verdict.mark_kept(cache_curve)
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "sensitivity",
        "config": {
            "command": list(argv),
            "cpus": topo.cpu_list(plan.program_cpus),
            "cpus_source": plan.cpus_source,
            "bandit_cpus": topo.cpu_list(plan.bandit_cpus),
            "bandit_pattern": plan.bandit_pattern,
            "pirate_cpu": plan.pirate_cpu,
            "repeat": program.repeat,
            "repeat_source": repeat_source,
            "rounds": rounds,
            "doses": list(plan.doses),
            "llc_bytes": plan.llc_bytes,
            "llc_cpus": topo.cpu_list(plan.llc_cpus) if plan.llc_cpus else None,
            "rule": rule.text(),
        },
        "result": {
            "unit": "s",
            "program_s": _median(base),
            "base_times_s": base,
            "curve": curve,
            **estimate,
            "node_GBps": node_gbps,
            "cache_scan": cache["tried"],
            "cache_shared": cache["shared"],
            "cache_error": cache.get("error"),
            "cache_held_MiB": held["bytes"] / 2**20 if held else None,
            "cache_curve": cache_curve,
            "notes": plan.notes,
        },
        "validation": records.not_applicable(
            "a user's program: only its exit code was checked; the bandit and the pirate count and time, they compare nothing"
        ),
        "provenance": dict(node["provenance"]),
    }
    res = rec["result"]
    cc = data.get(("cc", 0)) if pirate_doses else None
    res["controls"] = {
        controls.BANDWIDTH: bw_control,
        controls.CACHE: controls.cache(
            plan.program_cpus[0],
            cache.get("reader_bytes"),
            held["bytes"] if held else None,
            [v["ns"] for v in cc] if cc else [],
            [(b, [v["ns"] for v in data[("cc", b)]]) for b in pirate_doses] if cc else [],
            rule,
            not_run=None if cc else (verdict.cache_note(rec) or "no pirate dose ran"),
        ),
        controls.PLACEBO: controls.placebo(
            topo.cpu_list(plan.bandit_cpus), [v["s"] for v in data[("placebo", 1)]], base, rule
        ),
    }
    res["copies"] = copies_mod.summary(rec, copy_data, rule)
    res["bandwidth"] = copies_mod.bandwidth(res, res["copies"]["measured"], bw_control["passed"])
    res.update(verdict.working_set(rec, plan))
    res.update(verdict.verdict(rec))
    return records.finish(rec)
