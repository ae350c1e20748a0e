"""STREAM kernels from Python: the kernel table (read from bandwall-stream, where it is declared)
and running one kernel as a record."""

from __future__ import annotations

from bandwall.core import manifest, native, records
from bandwall.core.errors import RunFailed, UsageError
from bandwall.counters import events as counters_mod
from bandwall.kernels import threads_auto

EXECUTABLE = "bandwall-stream"


def kernel_table() -> list[dict]:
    """The kernels with their bytes, write-allocate bytes and flops per element (the manifest)."""
    return manifest.stream_kernels()


def kernel_names() -> list[str]:
    return [k["name"] for k in kernel_table()]


def check_kernel(name: str) -> str:
    """name when it is a kernel of the table; UsageError naming the known ones otherwise."""
    if name not in kernel_names():
        raise UsageError(f"unknown kernel {name!r} (known: {', '.join(kernel_names())})")
    return name


def stream_args(
    kernel: str,
    threads: int | None = None,
    cpus: str | None = None,
    bind: str | None = None,
    stores: str | None = None,
    size: str | None = None,
    reps: int | None = None,
    placement: str | None = None,
    pages: str | None = None,
    isa: str | None = None,
) -> list[str]:
    """Command-line arguments of bandwall-stream; None leaves the executable's default."""
    args = ["--kernel", kernel]
    for flag, value in (
        ("--threads", threads),
        ("--cpus", cpus),
        ("--bind", bind),
        ("--stores", stores),
        ("--size", size),
        ("--reps", reps),
        ("--placement", placement),
        ("--pages", pages),
        ("--isa", isa),
    ):
        if value is not None:
            args += [flag, str(value)]
    return args


def run(kernel: str, counters: str | None = None, db=None, **options) -> dict:
    """Runs one kernel (options as in stream_args) and returns its validated record; counters
    names a counter group to count around it (the record's `counters` part). threads="auto" takes
    the choice of a stored sweep of this topology in db (kernels/threads_auto.py), else lets the
    executable choose in its first repetitions; config.threads_choice says which and why.

    Bad options raise UsageError, a failed validation or crash RunFailed: no record comes back,
    so nothing can be stored.
    """
    choice = None
    if options.get("threads") == "auto":
        choice = threads_auto.stored_choice(kernel, options.get("cpus"), options.get("bind"), db)
        if choice is not None:
            options["threads"] = choice["chosen"]
    args = stream_args(kernel, **options)
    if counters is None:
        rec = native.run_record(EXECUTABLE, args)
    else:
        plan = counters_mod.plan(counters)
        rec = counters_mod.around_kernel(
            plan, lambda prefix: native.run_record(EXECUTABLE, args, prefix=prefix)
        )
    rec = records.finish(rec)
    if not records.passed(rec):
        raise RunFailed(f"{kernel} did not validate")
    if choice is not None:
        rec["config"]["threads_choice"] = choice
    return rec
