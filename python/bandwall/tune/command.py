"""The command lines of a tuned configuration: the bandwall command that runs it, and for a user's
program also the plain equivalent without bandwall (OMP_NUM_THREADS, OMP_PLACES / OMP_PROC_BIND,
numactl)."""

from __future__ import annotations

import shlex

# The knobs a built-in command takes as --NAME VALUE, in the order they are written.
FLAGS = ("threads", "bind", "placement", "pages", "isa", "stores")


def builtin(head: list[str], o: dict, extra: tuple[str, ...]) -> dict:
    """`bandwall HEAD --threads N --bind B ...` for the options o (None and absent knobs left out)."""
    args = ["bandwall", *head]
    for name in FLAGS + extra:
        if o.get(name) is not None:
            args += [f"--{name}", str(o[name])]
    return {"bandwall": shlex.join(args)}


def numactl(placement: str | None) -> list[str]:
    """numactl's words for a placement policy of the native table (first-touch: none needed)."""
    if placement in (None, "first-touch"):
        return []
    name, _, arg = placement.partition(":")
    flag = {"bind": "--membind", "interleave": "--interleave", "preferred": "--preferred"}[name]
    return ["numactl", f"{flag}={arg or 'all'}"]


def for_program(o: dict, machine) -> dict:
    """bandwall pin's command line and the plain one: each thread on the CPU the binding gives it
    (OMP_PLACES, one place per thread, OMP_PROC_BIND=close keeps thread i on place i), or unbound."""
    n, bind = o["threads"], o["bind"]
    pinned = ["bandwall", "pin", "--bind", bind, "--threads", str(n), "--", *o["command"]]
    env = [f"OMP_NUM_THREADS={n}"]
    cpus = machine.order(bind, n)
    if cpus is None:
        env.append("OMP_PROC_BIND=false")
    else:
        env += ["OMP_PLACES=" + ",".join(f"{{{c}}}" for c in cpus), "OMP_PROC_BIND=close"]
    mem = numactl(o.get("placement"))
    plain = shlex.join(env + mem + list(o["command"]))
    return {"bandwall": shlex.join(numactl(o.get("placement")) + pinned), "plain": plain}
