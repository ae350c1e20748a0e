"""STREAM kernels from Python: the kernel table (read from bandwall-stream, where it is declared),
running one kernel as a record, and the views of stream records."""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache

from bandwall import native, records
from bandwall.errors import RunFailed
from bandwall.output import table

EXECUTABLE = "bandwall-stream"
STORES = ("nt", "regular")


@lru_cache(maxsize=1)
def kernel_table() -> list[dict]:
    """The kernels with their bytes, write-allocate bytes and flops per element."""
    exe = native.executable(EXECUTABLE)
    try:
        out = subprocess.run([exe, "--list-kernels"], capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    except (subprocess.CalledProcessError, json.JSONDecodeError, OSError) as e:
        raise RunFailed(f"cannot read the kernel table of {EXECUTABLE}: {e}") from e


def kernel_names() -> list[str]:
    return [k["name"] for k in kernel_table()]


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
    ):
        if value is not None:
            args += [flag, str(value)]
    return args


def run(kernel: str, **options) -> dict:
    """Runs one kernel (options as in stream_args) and returns its validated record.

    Bad options raise UsageError, a failed validation or crash RunFailed: no record comes back,
    so nothing can be stored.
    """
    rec = native.run_record(EXECUTABLE, stream_args(kernel, **options))
    rec = records.finish(rec)
    if not records.passed(rec):
        raise RunFailed(f"{kernel} did not validate")
    return rec


COLUMNS = ["kernel", "threads", "stores", "best GB/s", "median GB/s", "min GB/s", "GFlop/s", "MiB/array"]


def row(rec: dict) -> list:
    c, r = rec["config"], rec["result"]
    return [
        c["kernel"],
        c["threads"],
        c["stores"],
        r["best_GBps"],
        r["median_GBps"],
        r["min_GBps"],
        r["best_GFlops"],
        round(c["size_per_array_bytes"] / 2**20),
    ]


def render(con, recs: list[dict]) -> None:
    first = recs[0]
    c, p = first["config"], first["provenance"]
    con.print(
        table(
            "STREAM",
            COLUMNS,
            [row(r) for r in recs],
            caption=f"CPUs {p['cpus'] or 'unbound'} ({p['binding']}), placement {p['placement']}, "
            f"{c['reps']} reps (first dropped), {c['isa']}; GB/s = 1e9 B/s without "
            f"write-allocate (STREAM's counting)",
        )
    )
    for rec in recs:
        r = rec["result"]
        if r["traffic"]["write_allocate_occurs"]:
            con.print(
                f"{rec['config']['kernel']}: regular stores also read the written array first "
                f"(+{r['write_allocate_bytes_per_element']:.0f} B/element): "
                f"{r['traffic']['with_write_allocate']['best_GBps']:.2f} GB/s of real traffic"
            )


CSV_FIELDS = [
    "kernel",
    "threads",
    "stores",
    "best_GBps",
    "median_GBps",
    "avg_GBps",
    "min_GBps",
    "best_GFlops",
    "size_per_array_bytes",
    "reps",
]


def csv_rows(recs: list[dict]):
    return CSV_FIELDS, [[{**r["config"], **r["result"]}[f] for f in CSV_FIELDS] for r in recs]
