"""The copy engine: whether it pays against the best CPU-only run, and with which strategy."""

from __future__ import annotations

from bandwall.core import manifest
from bandwall.core.claims import FALLS, RISES, claim, say
from bandwall.report.advice.base import Evidence, Line, ids, stream_rates


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
            sc, se = stream_rates(bc), stream_rates(be)
            c = be["config"]
            strategy = c.get("strategy") or manifest.default_strategy()
            how = f"{c['engine']} engine, strategy {strategy}, {c['threads']} compute core(s)"
            said = claim(f"{kernel} bandwidth", sc, se, "CPU only", f"engine + CPU ({how})")
            if said.direction == RISES:
                verdict = f"pays: {say(said)}"
                fix = f"bandwall stream --kernel {kernel} --engine {c['engine']} --strategy {strategy}" + (
                    f" --engine-cpus {','.join(map(str, c['engine_cpus']))}" if c.get("engine_cpus") else ""
                )
            elif said.direction == FALLS:
                verdict = f"does not pay: {say(said)}"
                fix = "leave the copy engine off (the default)"
            else:
                verdict, fix = f"the copy engine does not pay here: {say(said)}", ""
            lines.append(
                Line(
                    f"copy engine ({kernel})",
                    f"engine + CPU {se.text()}; CPU only {sc.text()} ({bc['config']['threads']} core(s))",
                    "the best CPU-only run of the same kernel, beyond the spread",
                    verdict,
                    fix,
                    f"engine sweep {ids([sw])}, runs {ids([bc, be])}",
                    value=se,
                    claims=[said],
                )
            )
    return lines
