"""Report section `pinning`: the experiment of PGI's MP_* variables on a small built-in OpenMP program (bandwall-pin-probe,
compute rounds between barriers): one thread per CPU, every thread on one CPU, and unbound, through
libbandwall-pin.so, scored by the program's own time. It runs twice: with idle threads sleeping at
once (passive), which shows what sharing a CPU costs (NPB FT's 1.8x under PGI's MP_BLIST), and with PGI's default
spin of 1000000 cycles (MP_SPIN), which adds what a thread spinning at a barrier costs the thread it
waits for when both share a CPU."""

from __future__ import annotations

import os

from bandwall.core import native
from bandwall.core.errors import Unavailable
from bandwall.core.fom import Fom
from bandwall.display import table
from bandwall.pinning import pin
from bandwall.report import Context, of_tool, sections
from bandwall.report.render import facts, html_table, note

# A round of the probe takes milliseconds, and unbound threads are bimodal: the scheduler places them
# well in some rounds (seen: 3 to 4 rounds of 15, ratio 1.0) and on one CPU in the others (1.7). The
# decision rule's 90% interval of the median ratio (core/decide.py) leaves out the k-1 most extreme
# rounds at either end: 3 of 15, but 23 of 61, so a few rounds that go the other way do not flip
# the verdict from one report to the next.
FULL = {"rounds": 61, "args": ["60", "200000"]}
QUICK = {"rounds": 61, "args": ["20", "100000"]}
COLUMNS = ["mode", "what", "median runs/s", "min", "max", "rounds"]
# Spin policies compared: (key, --spin word, title)
SPINS = (
    ("passive", "passive", "idle threads sleep at once (passive)"),
    ("spin", "1000000", "idle threads spin 1000000 cycles first (PGI's MP_SPIN default)"),
)


def rows(data: dict) -> list[list]:
    return [
        [name, m["title"], m["value"], min(m["rounds"]), max(m["rounds"]), len(m["rounds"])]
        for name, m in data["modes"].items()
    ]


def verdict(r: dict) -> str:
    """The record's verdict lines (rendered from its claims: the decision rule on the paired rounds),
    or for a record stored before them, the same built from its rounds."""
    if r.get("verdict"):
        return r["verdict"]["text"]
    rounds = {name: m["rounds"] for name, m in r["modes"].items()}
    return pin.compare_verdict(pin.compare_claims(r["fom"], r.get("fom_unit", ""), rounds))["text"]


class PinningSection:
    title = "Pinning (PGI's MP_BIND experiment: bound, one CPU, unbound)"
    order = 70

    def collect(self, ctx: Context) -> None:
        if len(os.sched_getaffinity(0)) < 2:
            raise Unavailable("one CPU only: binding threads apart needs two")
        plan = QUICK if ctx.quick else FULL
        fom = Fom.from_regex(r"time ([0-9.]+) s", lower_is_better=True)
        for _, spin, _ in SPINS:
            ctx.step(f"pin --compare on the OpenMP probe, spin {spin}")
            rec = pin.compare(
                [native.executable("bandwall-pin-probe"), *plan["args"]],
                fom,
                rounds=plan["rounds"],
                spin=spin,
                timeout=60,
            )
            ctx.save(rec)

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        found = of_tool(recs, "pin-compare")
        if len(found) != len(SPINS):
            raise KeyError(f"{len(SPINS)} pin-compare records expected, {len(found)} found")
        return {key: rec["result"] for (key, _, _), rec in zip(SPINS, found)}

    def terminal(self, ctx: Context, data: dict) -> None:
        for key, _, title in SPINS:
            r = data[key]
            ctx.console.print(table(f"pin --compare, {r['threads']} threads, {title}", COLUMNS, rows(r)))
        ctx.console.print(summary(data))

    def html(self, ctx: Context, data: dict) -> str:
        parts = [facts([("threads", data["passive"]["threads"]), ("scored by", data["passive"]["fom"])])]
        for key, _, title in SPINS:
            parts.append(html_table(COLUMNS, rows(data[key]), caption=f"The same OpenMP program: {title}"))
        parts.append(note(summary(data)))
        return "\n".join(parts)


def summary(data: dict) -> str:
    passive, spin = data["passive"], data["spin"]
    return (
        f"With idle threads sleeping: {verdict(passive)}. What sharing a CPU costs (PGI's MP_BIND example: "
        f"NPB FT 1232 against 684 Mop/s, 1.8x). With PGI's default spin: {verdict(spin)}. A thread spinning "
        "at a barrier holds the CPU the thread it waits for needs (MP_SPIN); bound threads on CPUs of their "
        "own lose nothing by spinning."
    )


sections.register("pinning")(PinningSection())
