"""bandwall-place from Python: allocate arrays under a placement policy, touch them from bound threads
and read which NUMA node holds each (the "memory objects" view)."""

from __future__ import annotations

from bandwall.core import native, records


def place(
    placement: str = "first-touch",
    threads: int = 0,
    cpus: str | None = None,
    bind: str = "compact",
    size: str = "64M",
    arrays: str = "a,b,c",
    touch: str = "auto",
) -> dict:
    args = [
        "--placement",
        placement,
        "--threads",
        str(threads),
        "--bind",
        bind,
        "--size",
        size,
        "--arrays",
        arrays,
        "--touch",
        touch,
    ]
    if cpus:
        args += ["--cpus", cpus]
    return records.finish(native.run_record("bandwall-place", args))
