"""Counters around a run: `bandwall counters -- COMMAND` and `--counters GROUP` on the built-in
kernels. bandwall-counters starts the command and counts (software events always, PAPI events
when asked); this module picks the group's event set for this machine and turns counts into
metrics (countergroups)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass

from bandwall.core import native, records, topo
from bandwall.core.errors import RunFailed, UsageError
from bandwall.counters import groups as countergroups

EXECUTABLE = "bandwall-counters"
DEFAULT_GROUP = "DEFAULT"  # perf stat's hardware events: what `bandwall counters` counts without --group


def list_events() -> dict:
    """What PAPI lists here (bandwall-counters --list-events)."""
    proc = subprocess.run([native.executable(EXECUTABLE), "--list-events"], capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RunFailed(native._last_line(proc.stderr) or f"{EXECUTABLE} --list-events failed")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RunFailed(f"{EXECUTABLE} --list-events printed a line that is not JSON: {e}") from e


def socket_cpus() -> list[int]:
    """The first CPU of every socket (package), from the topology record's NUMA nodes."""
    topo = native.run_record("bandwall-topo", [])
    first: dict[int, int] = {}
    for node in topo["result"].get("numa_nodes", []):
        cpus = node.get("cpus") or []
        if cpus:
            pkg = int(node.get("package", 0))
            first[pkg] = min([*cpus, first.get(pkg, cpus[0])])
    return [first[p] for p in sorted(first)] or [0]


@dataclass
class Plan:
    """What to count for a group on this machine."""

    group: countergroups.Group | None
    eventset: countergroups.EventSet | None
    reason: str  # why no event set applies ("" when one does)
    papi: str  # "available" or "unavailable: ..."
    sockets: list[int]

    def papi_names(self) -> list[str]:
        if self.group is None or self.eventset is None or not self.papi.startswith("available"):
            return []
        return list(countergroups.event_names(self.group, self.eventset, self.sockets).values())

    def hardware(self, counts: dict, time_s: float) -> dict:
        if self.group is None:
            return {}
        if not self.papi.startswith("available"):
            return countergroups.hardware_fields(
                self.group, None, self.papi.removeprefix("unavailable: "), {}, 0, self.sockets
            )
        reason = self.reason
        if self.eventset is None and "(" in self.papi:  # "available (events listed; <why nothing counts>)"
            reason += "; " + self.papi.split("(", 1)[1].rstrip(")").replace("events listed; ", "")
        return countergroups.hardware_fields(self.group, self.eventset, reason, counts, time_s, self.sockets)

    def config(self) -> dict:
        return {
            "group": self.group.name if self.group else None,
            "eventset": self.eventset.label if self.eventset else None,
            "scope": self.group.scope if self.group else None,
        }


def plan(group_name: str | None) -> Plan:
    """Loads the group (UsageError when unknown) and resolves it against PAPI's list here."""
    if group_name is None:
        return Plan(None, None, "", "", [])
    group = countergroups.load(group_name)
    listing = list_events()
    sockets = socket_cpus() if group.scope == "socket" else []
    es, reason = countergroups.resolve(group, listing)
    return Plan(group, es, reason, listing.get("papi", "unavailable: no answer from PAPI"), sockets)


@contextmanager
def _record_file():
    fd, path = tempfile.mkstemp(prefix="bandwall-counters-", suffix=".json")
    os.close(fd)
    try:
        yield path
    finally:
        os.unlink(path)


def _read(path: str) -> dict | None:
    try:
        with open(path) as f:
            lines = [ln for ln in f if ln.startswith("{")]
    except OSError:
        return None
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RunFailed(f"{EXECUTABLE} wrote a record that is not JSON ({path!r}): {e}") from e


def _finish(rec: dict, p: Plan) -> dict:
    r = rec["result"]
    r["hardware"] = p.hardware(r.get("hardware", {}), float(r.get("wall_s", 0.0)))
    rec["config"].update(p.config())
    return rec


def check_command(name: str) -> None:
    """UsageError unless name is an executable file (as given, or found on PATH)."""
    found = name if "/" in name else shutil.which(name)
    if not name or not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise UsageError(f"command {name!r} not found or not an executable file")


def pinned(command: list[str], cpus: list[int] | None, threads: int | None) -> list[str]:
    """command with libbandwall-pin.so preloaded into it alone (through env(1), which execs it, so
    the counted process is the command's): its threads on cpus in order (the main thread on the
    first, each thread it creates on the next), or left free for None; threads sets OMP_NUM_THREADS
    (default: one per CPU)."""
    lib = native.beside("libbandwall-pin.so", "bandwall-pin")
    team = threads or (len(cpus) if cpus else None)
    return [
        "env",
        f"LD_PRELOAD={lib}",
        f"BANDWALL_PIN_CPUS={topo.cpu_list(cpus) if cpus else 'none'}",
        *([f"OMP_NUM_THREADS={team}"] if team else []),
        *command,
    ]


def run(
    command: list[str], group: str | None = None, place: tuple[list[int] | None, int | None] | None = None
) -> tuple[dict, int]:
    """Counts around command (group DEFAULT when none is given); returns (record, the command's exit
    code). place (CPUs, threads), when given, binds the command's threads (pinned). The command's
    stdout goes to stderr so that the record alone is on stdout; its stderr stays live."""
    if not command:
        raise UsageError("no command to count (bandwall counters [--group NAME] -- COMMAND ...)")
    check_command(command[0])
    asked = list(command)
    if place is not None:
        command = pinned(command, *place)
    p = plan(group or DEFAULT_GROUP)
    events = p.papi_names()
    with _record_file() as path:
        args = [
            native.executable(EXECUTABLE),
            "--output",
            path,
            *(["--events", ",".join(events)] if events else []),
        ]
        try:
            proc = subprocess.Popen([*args, "--", *command], stdout=sys.stderr)
        except OSError as e:
            raise RunFailed(f"cannot run {EXECUTABLE}: {e.strerror}") from e
        code = _wait_through_interrupts(proc)
        rec = _read(path)
    if rec is None:
        error = UsageError if code == native.EXIT_USAGE else RunFailed
        raise error(f"{EXECUTABLE} wrote no record (exit code {code})")
    rec = _finish(rec, p)
    rec["config"]["command"] = asked
    if place is not None:
        cpus, threads = place
        rec["config"]["pinned"] = {"cpus": topo.cpu_list(cpus) if cpus else None, "threads": threads}
        rec["provenance"].update(
            binding="list (libbandwall-pin.so)" if cpus else "none",
            cpus=topo.cpu_list(cpus) if cpus else rec["provenance"]["cpus"],
            threads=threads or (len(cpus) if cpus else 0),
        )
    return records.finish(rec), code


def _wait_through_interrupts(proc: subprocess.Popen) -> int:
    """Waits for bandwall-counters. A Ctrl-C from the terminal reaches the whole foreground group:
    the command ends, and bandwall-counters (which ignores it, as time(1) does) writes the record of
    what ran; so bandwall waits on instead of killing it, and returns its exit code (128 + 2)."""
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            continue


def around_kernel(p: Plan, run_kernel) -> dict:
    """Runs a built-in kernel under bandwall-counters: run_kernel(prefix) returns the kernel's
    record, which gets a `counters` part (group, event set, software and hardware fields)."""
    events = p.papi_names()
    with _record_file() as path:
        prefix = [
            native.executable(EXECUTABLE),
            "--output",
            path,
            *(["--events", ",".join(events)] if events else []),
        ]
        rec = run_kernel([*prefix, "--"])
        counted = _read(path)
    if counted is None:
        raise RunFailed(f"{EXECUTABLE} wrote no record")
    counted = _finish(counted, p)
    rec["counters"] = {
        **p.config(),
        "software": counted["result"]["software"],
        "hardware": counted["result"]["hardware"],
        "wall_s": counted["result"]["wall_s"],
    }
    return rec
