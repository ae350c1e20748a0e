"""The interference experiment: the kernel (a STREAM kernel of bandwall-stream, or a user's command)
on every core and on the knee's cores, each alone and beside a noise process, in rotated rounds;
the record (tool "interference") with each case's values, median, min and max, and the verdict."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bandwall.core import launch, process, records, store, topo
from bandwall.core.errors import RunFailed, UsageError
from bandwall.interference import noise as noise_mod
from bandwall.interference import verdict as verdict_mod
from bandwall.kernels import stream

# Before the kernel starts, the noise gets this long to allocate and begin (a settling time of the
# experiment, not a measurement).
SETTLE_S = 0.3
CASES = (
    (verdict_mod.ALL_ALONE, "all", False),
    (verdict_mod.ALL_NOISE, "all", True),
    (verdict_mod.KNEE_ALONE, "knee", False),
    (verdict_mod.KNEE_NOISE, "knee", True),
)


@dataclass
class Kernel:
    """A STREAM kernel (name) or a user's command (argv), with how to size and measure it."""

    name: str | None = None
    command: Sequence[str] | None = None
    size: str | None = None
    reps: int = 10

    def describe(self) -> str:
        return self.name if self.command is None else " ".join(self.command)


def knee_cores(kernel: Kernel, n: int, knee: int | None, db=None) -> tuple[int, str]:
    """(cores, where from): as given, the stored sweep's knee of the kernel on this topology when it
    is below n, else n - 1 (one core left free)."""
    if knee is not None:
        if not 1 <= knee < n:
            raise UsageError(f"--knee {knee} must leave a surplus core: use 1 to {n - 1} on these {n} CPUs")
        return knee, "given with --knee"
    if kernel.name is not None:
        digest = topo.topology()["provenance"]["topology_digest"]
        try:
            with store.Store(db, readonly=True) as s:
                for rec in [] if s.fresh else s.list("sweep", limit=200):
                    same = rec["provenance"].get("topology_digest") == digest
                    if (
                        same
                        and rec["config"].get("kernel") == kernel.name
                        and rec["result"]["knee_cores"] < n
                    ):
                        return rec["result"]["knee_cores"], f"the knee of stored sweep #{rec['id']}"
        except Exception:  # an unreadable store only loses the stored knee
            pass
    return n - 1, f"{n - 1} of {n} cores: one left free (no stored sweep of this kernel below {n} cores)"


def run_stream(kernel: Kernel, cpus: list[int]) -> tuple[float, dict]:
    rec = stream.run(
        kernel.name, threads=len(cpus), cpus=topo.cpu_list(cpus), size=kernel.size, reps=kernel.reps
    )
    return rec["result"]["median_GBps"], rec


def run_command(kernel: Kernel, cpus: list[int]) -> tuple[float, dict]:
    """Runs the user's command on cpus (affinity and the OpenMP variables); its wall time."""
    try:
        ended = process.run(list(kernel.command), cpus=cpus, env=launch.pinned_env(cpus), stdin=None)
    except OSError as e:
        raise RunFailed(f"cannot run {kernel.command[0]!r}: {e.strerror}") from e
    if ended.code != 0:
        raise RunFailed(
            f"the command {kernel.describe()!r} exited with code {ended.code}: {ended.error}".rstrip(": ")
        )
    return ended.seconds, {}


def stats(values: list[float]) -> dict:
    s = sorted(values)
    mid = len(s) // 2
    median = s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
    return {"median": median, "min": s[0], "max": s[-1]}


def one(
    kernel: Kernel, cpus: list[int], noise: noise_mod.Noise | None, noise_cpu: int | None, pids: list[int]
) -> tuple[float, dict]:
    """The kernel once on cpus, beside the noise when there is one (started before, stopped after)."""
    run = run_command if kernel.command is not None else run_stream
    if noise is None:
        return run(kernel, cpus)
    running = noise_mod.start(noise, noise_cpu)
    pids.append(running.proc.pid)
    try:
        time.sleep(SETTLE_S)
        if not running.alive():
            raise RunFailed(noise_mod.failure(running, running.proc.poll()) or "the noise ended")
        value, rec = run(kernel, cpus)
        ended = running.stop()
        why = noise_mod.failure(running, ended)
        if why:
            raise RunFailed(why)
        return value, rec
    finally:
        running.stop()
        running.close()


def experiment(
    kernel: Kernel,
    noise: noise_mod.Noise,
    placement: str = "pinned",
    rounds: int = 3,
    knee: int | None = None,
    db=None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Runs the four cases in `rounds` rotated rounds and returns the interference record (not yet
    stored). A kernel or noise that fails raises RunFailed, after the noise is stopped."""
    if placement not in noise_mod.PLACEMENTS:
        raise UsageError(f"unknown noise placement {placement!r} (use {', '.join(noise_mod.PLACEMENTS)})")
    if rounds < 1:
        raise UsageError(f"--rounds {rounds} must be at least 1")
    every = topo.resolve_threads(None, None, "compact") or sorted(os.sched_getaffinity(0))
    n = len(every)
    if n < 2:
        raise UsageError(f"the interference experiment needs at least 2 CPUs; this process may use {n}")
    k, knee_source = knee_cores(kernel, n, knee, db)
    teams = {"all": every, "knee": every[:k]}
    surplus = every[k:]
    noise_cpu = surplus[-1] if placement == "pinned" else None
    values: dict[str, list[float]] = {name: [] for name, _, _ in CASES}
    parts: list[dict] = []
    pids: list[int] = []
    for r in range(rounds):
        for j in range(len(CASES)):
            name, team, with_noise = CASES[(j + r) % len(CASES)]
            if progress:
                progress(f"round {r + 1}/{rounds}: {name}")
            v, rec = one(kernel, teams[team], noise if with_noise else None, noise_cpu, pids)
            values[name].append(v)
            if rec:
                parts.append(rec)
    builtin = kernel.command is None
    cases = [
        {
            "case": name,
            "cores": len(teams[team]),
            "noise": with_noise,
            "values": values[name],
            **stats(values[name]),
        }
        for name, team, with_noise in CASES
    ]
    prov = dict(parts[-1]["provenance"]) if parts else dict(topo.topology()["provenance"])
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "interference",
        "config": {
            "kernel": kernel.name,
            "command": list(kernel.command) if kernel.command is not None else None,
            "size_per_array": parts[-1]["config"]["size_per_array_bytes"] if parts else None,
            "reps": kernel.reps if builtin else None,
            "noise": noise.kind or "command",
            "noise_command": noise.command,
            "noise_placement": placement,
            "noise_cpu": noise_cpu,
            "cpus": every,
            "cores_all": n,
            "cores_knee": k,
            "knee_source": knee_source,
            "surplus_cpus": topo.cpu_list(surplus),
            "rounds": rounds,
            "figure_of_merit": "median_GBps" if builtin else "wall_s",
            "higher_is_better": builtin,
        },
        "result": {"unit": "GB/s" if builtin else "s", "cases": cases, "noise_pids": pids},
        "validation": records.of_parts(parts, "kernel runs")
        if builtin
        else records.not_applicable("a user's command: only its exit code was checked"),
        "provenance": prov,
    }
    rec["result"]["verdict"] = verdict_mod.verdict(rec)
    return records.finish(rec)
