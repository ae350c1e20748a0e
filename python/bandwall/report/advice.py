"""The report's first section, "What to do on this machine": recommendations read from records.

Each recommendation is a scorecard line (Line): the measured value with its spread, the threshold it
is judged against (taken from this machine's own measured ceilings: its STREAM bandwidth, its FMA
peak, its knee), the verdict, the fix as a command line, and the evidence (record ids and figures).
A difference within the spread of its figures reads "no difference beyond noise" (spread.NOISE),
never as a finding; an efficiency below EFFICIENCY_FLAG is flagged.

Every recommendation is one function of the evidence registered with @rule, returning its lines
(none when the records it needs are absent). A new source of evidence (another command's records)
is a new function here: it reads ev.all("its-tool") and returns Line objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bandwall.core.errors import UsageError
from bandwall.interference import verdict as interference
from bandwall.report.spread import NOISE, Spread, compare, fmt

EFFICIENCY_FLAG = 0.8  # efficiencies below this are flagged (the POP CoE's performance-assessment rule)
PROGRAM = "./your_program"
STORED = "stored"  # the Evidence section of stored experiments of this machine (bandwall interference)


@dataclass
class Line:
    topic: str
    measured: str
    threshold: str
    verdict: str
    fix: str = ""
    evidence: str = ""
    flag: bool = False
    value: Spread | None = None  # the headline figure, compared with earlier reports

    def to_json(self) -> dict:
        out = {
            k: getattr(self, k)
            for k in ("topic", "measured", "threshold", "verdict", "fix", "evidence", "flag")
        }
        if self.value is not None:
            out["value"] = self.value.to_json()
        return out

    @classmethod
    def from_json(cls, d: dict) -> Line:
        value = Spread.from_json(d["value"]) if d.get("value") else None
        return cls(**{k: v for k, v in d.items() if k != "value"}, value=value)


@dataclass
class Evidence:
    """The records a report rests on, by section (each record with its "id" when stored)."""

    sections: dict[str, list[dict]] = field(default_factory=dict)

    def all(self, tool: str) -> list[dict]:
        return [r for recs in self.sections.values() for r in recs if r.get("tool") == tool]

    def section(self, name: str) -> list[dict]:
        return self.sections.get(name, [])

    def home_of(self, rec: dict) -> list[dict]:
        """The records of the section rec belongs to."""
        return next((recs for recs in self.sections.values() if any(r is rec for r in recs)), [])


Rule = Callable[[Evidence], list[Line]]
RULES: list[Rule] = []


def rule(fn: Rule) -> Rule:
    """Registers a recommendation (in page order)."""
    RULES.append(fn)
    return fn


def recommend(ev: Evidence) -> list[Line]:
    return [line for fn in RULES for line in fn(ev)]


def ids(recs: list[dict]) -> str:
    found = [f"#{r['id']}" for r in recs if r.get("id") is not None]
    return ("records " + ", ".join(found)) if found else "records not stored (--no-store)"


def efficiency_flag(e: float) -> str:
    return f"below {EFFICIENCY_FLAG}: flagged" if e < EFFICIENCY_FLAG else f"at or above {EFFICIENCY_FLAG}"


# -- cores: the knee and the surplus cores ------------------------------------------------------


def sweep_points(ev: Evidence, sweep: dict) -> list[dict]:
    """The stream records of a sweep's points (by id when stored, else the same kernel's plain stream
    records of the sweep's section), one per core count, ordered by cores."""
    by_id = {r["id"]: r for r in ev.all("stream") if r.get("id") is not None}
    wanted = sweep["result"].get("point_record_ids") or []
    if wanted and all(i in by_id for i in wanted):
        found = [by_id[i] for i in wanted]
    else:
        home = ev.home_of(sweep)
        found = [
            r
            for r in home
            if r.get("tool") == "stream"
            and r["config"].get("kernel") == sweep["config"]["kernel"]
            and "engine" not in r["config"]
        ]
    per_cores = {int(r["config"]["threads"]): r for r in found}
    return [per_cores[n] for n in sorted(per_cores)]


def knee(spreads: dict[int, Spread], share: float) -> tuple[int, int]:
    """(knee, top): top is the core count with the best median; the knee is the fewest cores whose
    median reaches share of it, or whose range overlaps it (within noise of the best)."""
    top = max(spreads, key=lambda n: spreads[n].median)
    best = spreads[top]
    k = min(n for n, s in spreads.items() if s.median >= share * best.median or not s.apart_from(best))
    return k, top


@rule
def cores(ev: Evidence) -> list[Line]:
    lines = []
    for sw in ev.all("sweep"):
        pts = sweep_points(ev, sw)
        kernel, share = sw["config"]["kernel"], sw["config"].get("knee_share", 0.95)
        if len(pts) < 2:
            continue
        sp = {int(r["config"]["threads"]): Spread.of_stream(r) for r in pts}
        k, top = knee(sp, share)
        most = max(sp)
        evidence = f"sweep {ids([sw])}, points {ids(pts)}; " + "; ".join(
            f"{n} cores {s.text()}" for n, s in sp.items()
        )
        if k == most:
            verdict = f"no knee: bandwidth still rises up to all {most} cores; a memory-bound process can use every core"
        else:
            verdict = (
                f"{k} core{'s reach' if k > 1 else ' reaches'} the bandwidth (the knee): use {k} per memory-bound "
                "process; "
                f"{most - k} surplus core{'s' if most - k > 1 else ''}: leave them free or give them other work"
            )
            if not sp[k].apart_from(sp[most]):
                verdict += f"; {k} against {most} cores: {NOISE}, so the fewer cores are kept"
            elif sp[most].median < sp[k].median:
                verdict += f"; on {most} cores it runs slower than on {k} ({compare(sp[most], sp[k], f'{most} cores', f'{k} cores')})"
        lines.append(
            Line(
                f"cores per memory-bound process ({kernel})",
                f"{sp[k].text()} on {k} core(s)",
                f"{share:.0%} of this machine's best {kernel} bandwidth ({sp[top].text()} on {top} cores), "
                "or within its spread",
                verdict,
                f"OMP_NUM_THREADS={k} OMP_PROC_BIND=close OMP_PLACES=cores {PROGRAM}",
                evidence,
                value=sp[top],
            )
        )
        one = sp.get(1)
        if one is not None and most > 1:
            e = sp[most].median / (most * one.median)
            lines.append(
                Line(
                    f"parallel efficiency ({kernel}, {most} cores)",
                    f"{e:.2f}: {fmt(sp[most].median)} GB/s on {most} cores against {most} x {fmt(one.median)} on 1",
                    f"{EFFICIENCY_FLAG}",
                    efficiency_flag(e) + _scaling(e, k, most),
                    "",  # the knee line above carries the fix
                    f"sweep {ids([sw])}",
                    flag=e < EFFICIENCY_FLAG,
                )
            )
    return lines


# -- memory- or compute-bound, against the measured ceilings -----------------------------------


@rule
def surplus_under_noise(ev: Evidence) -> list[Line]:
    """bandwall interference's verdict, when one is stored for this machine: does leaving the surplus
    cores free pay beside a noise process?"""
    lines = []
    for rec in ev.section(STORED):
        if rec.get("tool") != "interference":
            continue
        v = interference.verdict(rec)
        lines.append(
            Line(
                "surplus cores beside a noise process",
                "; ".join(f"{case}: {figure}" for case, figure in v["figures"].items()),
                "the two cases' ranges over the rounds (apart, or within noise)",
                v["text"],
                v.get("advice", [""])[0],
                f"interference {ids([rec])} ({rec['config'].get('noise', 'noise')} noise)",
            )
        )
    return lines


def _scaling(e: float, knee_cores: int, most: int) -> str:
    if e >= EFFICIENCY_FLAG:
        return ": the cores add bandwidth almost in proportion"
    if knee_cores < most:
        return ": memory-bound work does not scale past the knee; the cores beyond it add no bandwidth"
    return ": each added core still adds bandwidth, but less than the one before (memory saturating)"


def bound(gbps: float, gflops: float, ceiling_gbps: float, peak_gflops: float) -> tuple[str, float, float]:
    """(bound, share of the bandwidth ceiling, share of the FMA peak), by the roofline of the measured
    ceilings: memory-bound when the run's flops per byte are below the ridge (peak / bandwidth
    ceiling). A peak below what the run itself computed is no ceiling (that peak run was off): the
    run is judged by bandwidth alone, as memory-bound."""
    bw_share = gbps / ceiling_gbps if ceiling_gbps > 0 else 0.0
    flop_share = gflops / peak_gflops if peak_gflops > 0 else float("inf")
    if flop_share > 1 or gbps <= 0:
        return "memory", bw_share, flop_share
    ridge = peak_gflops / ceiling_gbps if ceiling_gbps > 0 else float("inf")
    return ("memory" if gflops / gbps < ridge else "compute"), bw_share, flop_share


def _gflops(stream_rec: dict) -> float:
    res = stream_rec["result"]
    return res["median_GBps"] * res["flops_per_element"] / res["bytes_per_element"]


@rule
def roofline(ev: Evidence) -> list[Line]:
    peaks, streams = ev.all("peak"), [r for r in ev.all("stream") if "engine" not in r["config"]]
    if not peaks or not streams:
        return []
    peak = max(peaks, key=lambda r: r["result"]["total_gflops_dp"])
    ceiling = max(streams, key=lambda r: r["result"]["median_GBps"])
    lines = []
    by_kernel: dict[str, dict] = {}
    for r in streams:
        k = r["config"]["kernel"]
        if k not in by_kernel or r["result"]["median_GBps"] > by_kernel[k]["result"]["median_GBps"]:
            by_kernel[k] = r
    cg, pk = ceiling["result"]["median_GBps"], peak["result"]["total_gflops_dp"]
    flops = {k: _gflops(r) for k, r in by_kernel.items()}
    off = pk < max(flops.values())  # a peak below what a STREAM run computed is no ceiling
    for k, r in by_kernel.items():
        what, bw, fl = bound(r["result"]["median_GBps"], flops[k], cg, 0.0 if off else pk)
        fl = flops[k] / pk if pk > 0 else float("inf")
        note = (
            " (the FMA peak measured below what STREAM itself computed: that peak run is off)" if off else ""
        )
        gflops = flops[k]
        lines.append(
            Line(
                f"what limits STREAM {k}",
                f"{Spread.of_stream(r).text()}: {bw:.0%} of the STREAM ceiling, {fmt(gflops)} GFlop/s = {fl:.1%} of the FMA peak",
                f"this machine's STREAM ceiling {fmt(cg)} GB/s ({ceiling['config']['kernel']}, {ceiling['config']['threads']} "
                f"cores) and FMA peak {fmt(pk)} GFlop/s double ({peak['config'].get('isa', '')})",
                f"{what}-bound{note}: more flops per byte moved (blocking, fusing loops) help it; more cores past the knee do not",
                "",
                f"{ids([r, peak])}",
                value=Spread.of_stream(r),
            )
        )
    return lines


@rule
def stencil(ev: Evidence) -> list[Line]:
    runs = [r for r in ev.section("iso3dfd") if r.get("tool") == "iso3dfd" and "roofline" in r["result"]]
    if not runs:
        return []
    variants: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        variants.setdefault((r["config"]["init"], r["config"]["schedule"]), []).append(r)
    sp = {v: Spread.of([r["result"]["mpoints_per_s"] for r in rs], "MPoints/s") for v, rs in variants.items()}
    best = max(sp, key=lambda v: sp[v].median)
    tied = [v for v in sp if v != best and not sp[v].apart_from(sp[best])]
    roof = max(variants[best], key=lambda r: r["result"]["mpoints_per_s"])["result"]["roofline"]
    bounds = {
        name: roof[f"{key}_mpoints_per_s"]
        for name, key in (
            ("memory", "memory_bound"),
            ("in-core (ports)", "port_bound"),
            ("FMA", "incore_bound"),
        )
        if roof.get(f"{key}_mpoints_per_s")
    }
    if not bounds:
        return []
    tight = min(bounds, key=bounds.get)
    e = sp[best].median / bounds[tight]
    verdict = f"best variant {best[0]} initialisation, {best[1]} schedule"
    if tied:
        verdict += "; " + ", ".join(f"{a}/{b}" for a, b in tied) + f": {NOISE}"
    verdict += f"; it reaches {e:.0%} of its tightest bound ({tight}), " + efficiency_flag(e)
    return [
        Line(
            "ISO3DFD stencil",
            f"{sp[best].text()}",
            f"{tight} bound {fmt(bounds[tight])} MPoints/s from this machine's measured ceilings"
            + (f" (STREAM {fmt(roof['stream_best_GBps'])} GB/s)" if "stream_best_GBps" in roof else ""),
            verdict,
            f"bandwall iso3dfd --init {best[0]} --schedule {best[1]}"
            + (" --blocks search" if e < EFFICIENCY_FLAG and tight != "memory" else ""),
            f"{ids(runs)}; " + "; ".join(f"{a}/{b} {s.text()}" for (a, b), s in sp.items()),
            flag=e < EFFICIENCY_FLAG,
            value=sp[best],
        )
    ]


# -- binding -----------------------------------------------------------------------------------


def _modes(rec: dict) -> dict[str, Spread]:
    return {
        name: Spread.of(m["rounds"], rec["result"].get("fom_unit", ""))
        for name, m in rec["result"]["modes"].items()
    }


@rule
def binding(ev: Evidence) -> list[Line]:
    recs = ev.all("pin-compare")
    passive = next((r for r in recs if r["config"].get("spin") == "passive"), recs[0] if recs else None)
    if passive is None:
        return []
    m = _modes(passive)
    if "bound" not in m or "unbound" not in m:
        return []
    b, u = m["bound"], m["unbound"]
    e = u.median / b.median if b.median else 0.0
    if not b.apart_from(u):
        verdict, fix = f"{NOISE}: binding does not change this program here", ""
    elif b.median > u.median:
        verdict = f"bind: threads left to the scheduler run at {e:.2f} of bound ones, " + efficiency_flag(e)
        fix = (
            f"OMP_PROC_BIND=close OMP_PLACES=cores {PROGRAM}   (or: bandwall pin --bind compact -- {PROGRAM})"
        )
    else:
        verdict = (
            f"binding costs here: unbound threads run {e:.2f}x as fast; the scheduler moves them off CPUs that "
            "other work keeps busy (is something else running on this machine?)"
        )
        fix = f"OMP_PROC_BIND=false {PROGRAM}"
    lines = [
        Line(
            "binding",
            f"bound {b.text()}; unbound {u.text()}",
            "bound against unbound beyond the spread of their rounds",
            verdict,
            fix,
            f"{ids([passive])} ({passive['result'].get('fom', '')})",
            flag=b.apart_from(u) and b.median > u.median and e < EFFICIENCY_FLAG,
            value=b,
        )
    ]
    spin = next((r for r in recs if r is not passive and "one-cpu" in r["result"]["modes"]), None)
    if spin is not None and "one-cpu" in m:
        s1 = _modes(spin)["one-cpu"]
        shared = compare(m["one-cpu"], s1, "sleeping idle threads", "spinning ones")
        lines.append(
            Line(
                "threads sharing a CPU",
                f"all threads on one CPU: passive {m['one-cpu'].text()}; spinning ({spin['config'].get('spin')}) {s1.text()}",
                "passive against spinning waits beyond the spread",
                shared
                + (
                    ": never run more threads than CPUs with spinning waits"
                    if m["one-cpu"].apart_from(s1) and m["one-cpu"].median > s1.median
                    else ""
                ),
                f"OMP_WAIT_POLICY=passive {PROGRAM}   (when threads may share CPUs)"
                if m["one-cpu"].apart_from(s1) and m["one-cpu"].median > s1.median
                else "",
                f"{ids([passive, spin])}",
            )
        )
    return lines


# -- placement and NUMA ------------------------------------------------------------------------


@rule
def placement(ev: Evidence) -> list[Line]:
    topos = ev.all("topo")
    lines = []
    init = {}
    for r in ev.section("iso3dfd"):
        if r.get("tool") == "iso3dfd":
            init.setdefault(r["config"]["init"], []).append(r["result"]["mpoints_per_s"])
    if topos:
        t = topos[-1]["result"]
        nodes = [n for n in t["numa_nodes"] if n["cpus"]]
        if len(nodes) <= 1:
            lines.append(
                Line(
                    "NUMA placement",
                    f"{len(t['numa_nodes'])} NUMA node, every CPU on it",
                    "two or more NUMA nodes with CPUs",
                    "does not matter here: with one NUMA node every page is local to every core, so placement "
                    "(numactl, first touch, interleaving) cannot change where memory is",
                    "",
                    ids(topos[-1:]),
                )
            )
        else:
            lines.extend(_numa_lines(ev, len(nodes)))
    if {"serial", "first-touch"} <= set(init) and min(len(v) for v in init.values()) >= 2:
        ft, se = Spread.of(init["first-touch"], "MPoints/s"), Spread.of(init["serial"], "MPoints/s")
        verdict = compare(ft, se, "first-touch initialisation", "serial")
        one_node = bool(topos) and len([n for n in topos[-1]["result"]["numa_nodes"] if n["cpus"]]) <= 1
        if ft.apart_from(se) and one_node:
            verdict += " (one NUMA node: the difference is cache and thread warm-up, not where pages are)"
        lines.append(
            Line(
                "initialisation (ISO3DFD)",
                f"first-touch {ft.text()}; serial {se.text()}",
                "first-touch against serial beyond the spread of all their runs",
                verdict,
                "initialise arrays in parallel with the compute loops' schedule (first touch)"
                if ft.apart_from(se) and ft.median > se.median
                else "",
                ids([r for r in ev.section("iso3dfd") if r.get("tool") == "iso3dfd"]),
                value=ft,
            )
        )
    return lines


def _numa_lines(ev: Evidence, nodes: int) -> list[Line]:
    lines = []
    for chk in ev.all("numa-check")[-1:]:
        r = chk["result"]
        lines.append(
            Line(
                "NUMA placement",
                "; ".join(f"{n} {fmt(m['value'])} {r.get('fom_unit', '')}" for n, m in r["modes"].items()),
                f"{nodes} NUMA nodes: local against remote and interleaved placement",
                r["verdict"],
                "; ".join(r.get("advice", [])),
                ids([chk]),
            )
        )
    for mat in ev.all("numa-matrix")[-1:]:
        m = mat["result"]["matrix"]
        local = [m[i][i] for i in range(min(len(m), len(m[0])))]
        remote = [m[i][j] for i in range(len(m)) for j in range(len(m[0])) if i != j and m[i][j]]
        if local and remote:
            e = (sum(remote) / len(remote)) / (sum(local) / len(local))
            lines.append(
                Line(
                    "NUMA efficiency (remote / local bandwidth)",
                    f"{e:.2f}",
                    f"{EFFICIENCY_FLAG}",
                    efficiency_flag(e)
                    + (": keep each thread's memory on its own node" if e < EFFICIENCY_FLAG else ""),
                    f"numactl --localalloc {PROGRAM}" if e < EFFICIENCY_FLAG else "",
                    ids([mat]),
                    flag=e < EFFICIENCY_FLAG,
                )
            )
    return lines


# -- page size and instruction-set variant (when measured) ------------------------------------


def _asked_isa(r: dict) -> bool:
    return r["config"].get("isa_requested", "auto") != "auto"


# knob -> its value in a variants run that varied it (None in a run that varied the other)
KNOBS: dict[str, Callable[[dict], object]] = {
    "isa": lambda r: r["config"].get("isa") if _asked_isa(r) else None,
    "pages": lambda r: None if _asked_isa(r) else r.get("placement", {}).get("pages"),
}


def _choice(ev: Evidence, knob: str, topic: str, flag_of: Callable[[str], str]) -> list[Line]:
    """Stream runs of the variants section that differ only in one knob (KNOBS): the best value per
    kernel, beyond noise or not."""
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for r in ev.section("variants"):
        if r.get("tool") != "stream" or KNOBS[knob](r) is None:
            continue
        others = (r["config"]["kernel"], r["config"]["threads"]) + tuple(
            get(r) for k, get in KNOBS.items() if k != knob
        )
        groups.setdefault(others, {}).setdefault(str(KNOBS[knob](r)), []).append(r)
    lines = []
    for key, by in groups.items():
        if len(by) < 2:
            continue
        kernel = key[0]
        sp = {v: Spread.of([x["result"]["median_GBps"] for x in rs], "GB/s") for v, rs in by.items()}
        best = max(sp, key=lambda v: sp[v].median)
        tied = [v for v in sp if v != best and not sp[v].apart_from(sp[best])]
        if tied:
            verdict, fix = f"{NOISE} between {', '.join([best, *tied])}", ""
        else:
            runner = max((v for v in sp if v != best), key=lambda v: sp[v].median)
            verdict = f"{best}: {sp[best].ratio(sp[runner]):.2f}x the next best ({runner}), beyond the spread"
            fix = f"bandwall stream --kernel {kernel} {flag_of(best)}"
        lines.append(
            Line(
                f"{topic} ({kernel}, {key[1]} threads)",
                "; ".join(f"{v} {s.text()}" for v, s in sp.items()),
                "each value against the best beyond the spread of its rounds",
                verdict,
                fix,
                ids([x for rs in by.values() for x in rs]),
                value=sp[best],
            )
        )
    return lines


@rule
def isa(ev: Evidence) -> list[Line]:
    return _choice(ev, "isa", "instruction-set variant", lambda v: f"--isa {v}")


@rule
def pages(ev: Evidence) -> list[Line]:
    return _choice(ev, "pages", "page size", lambda v: f"--pages {v}")


# -- copy engine -------------------------------------------------------------------------------


@rule
def copy_engine(ev: Evidence) -> list[Line]:
    lines = []
    for sw in ev.all("engine-sweep"):
        home = ev.home_of(sw)
        streams = [r for r in home if r.get("tool") == "stream"]
        for kernel in sw["config"]["kernels"]:
            cpu = [r for r in streams if r["config"]["kernel"] == kernel and "engine" not in r["config"]]
            eng = [r for r in streams if r["config"]["kernel"] == kernel and "engine" in r["config"]]
            if not cpu or not eng:
                continue
            bc = max(cpu, key=lambda r: r["result"]["median_GBps"])
            be = max(eng, key=lambda r: r["result"]["median_GBps"])
            sc, se = Spread.of_stream(bc), Spread.of_stream(be)
            c = be["config"]
            how = f"{c['engine']} engine, strategy {c.get('strategy', 'all')}, {c['threads']} compute core(s)"
            if not sc.apart_from(se):
                verdict, fix = f"{NOISE}: the copy engine does not pay here", ""
            elif se.median > sc.median:
                verdict = f"pays: {how} runs {se.ratio(sc):.2f}x CPU only"
                fix = (
                    f"bandwall stream --kernel {kernel} --engine {c['engine']} --strategy {c.get('strategy', 'all')}"
                    + (
                        f" --engine-cpus {','.join(map(str, c['engine_cpus']))}"
                        if c.get("engine_cpus")
                        else ""
                    )
                )
            else:
                verdict = f"does not pay: the best engine run ({how}) reaches {se.ratio(sc):.2f}x CPU only"
                fix = "leave the copy engine off (the default)"
            lines.append(
                Line(
                    f"copy engine ({kernel})",
                    f"engine + CPU {se.text()}; CPU only {sc.text()} ({bc['config']['threads']} core(s))",
                    "the best CPU-only run of the same kernel, beyond the spread",
                    verdict,
                    fix,
                    f"engine sweep {ids([sw])}, runs {ids([bc, be])}",
                    value=se,
                )
            )
    return lines


# -- rails (when an MPI profile exists) --------------------------------------------------------


@rule
def rails(ev: Evidence) -> list[Line]:
    from bandwall.mpi import mpi_rails

    profiles, pings = ev.all("mpiprof"), ev.all("mpi-pingpong")
    if not profiles:
        return []
    prof = profiles[-1]
    program = prof["config"].get("program", "the profiled program")
    if not pings:
        return [
            Line(
                "network rails",
                f"MPI profile of {program} ({prof['config'].get('ranks')} ranks)",
                "a rail model measured by bandwall mpi-pingpong",
                "no rail model stored: measure one rail, then ask for the rail count",
                "bandwall mpi-pingpong && bandwall mpi-rails",
                ids([prof]),
            )
        ]
    try:
        a = mpi_rails.advise(prof, mpi_rails.rail_from_pingpong(pings[-1]))
    except UsageError as e:
        return [
            Line("network rails", program, "a rail model", f"cannot advise: {e}", "", ids([prof, pings[-1]]))
        ]
    n = a["recommended_rails"]
    one, best = a["estimates"][0]["total_s"], a["estimates"][n - 1]["total_s"]
    ucx = a["settings"]["Open MPI with UCX"]
    return [
        Line(
            "network rails",
            f"estimated communication time {fmt(one * 1e3)} ms on 1 rail, {fmt(best * 1e3)} ms on {n}",
            f"the fewest rails within {a['tolerance']:.0%} of the best estimate",
            f"use {n} rail{'s' if n > 1 else ''}" + ("; " + "; ".join(a["notes"]) if a["notes"] else ""),
            " ".join(f"{k}={v}" for k, v in ucx.items()) + f" mpirun ... {PROGRAM}",
            f"profile {ids([prof])}, rail model {ids(pings[-1:])}",
        )
    ]


def command_lines(lines: list[Line]) -> list[str]:
    """The fixes to use, each once, in page order."""
    seen: dict[str, None] = {}
    for line in lines:
        if line.fix:
            seen.setdefault(line.fix, None)
    return list(seen)
