"""Machine balance: the bytes per flop the node delivers (best STREAM bandwidth / FMA peak) beside
the bytes per flop applications need, as Boku's T2K cluster study compares lattice QCD with the T2K node."""

from __future__ import annotations

from bandwall.core import native, records
from bandwall.kernels import stream

PEAK_EXECUTABLE = "bandwall-peak"

# What applications need, in bytes per flop, with where each figure comes from.
APPLICATIONS = [
    {"name": "lattice QCD", "bytes_per_flop": 2.68, "precision": "dp", "source": "Boku, T2K cluster study"},
    {
        "name": "STREAM triad",
        "bytes_per_flop": 24 / 2,
        "precision": "dp",
        "source": "24 B, 2 flops / element",
    },
    {
        "name": "ISO3DFD",
        "bytes_per_flop": 16 / 61,
        "precision": "sp",
        "source": "ISO3DFD: 16 B, 61 flops / point",
    },
]
# Machines quoted for contrast.
CONTRAST = [{"name": "T2K node", "bytes_per_flop": 0.13, "source": "Boku, T2K cluster study"}]


def peak_args(
    threads: int | None = None,
    cpus: str | None = None,
    bind: str | None = None,
    reps: int | None = None,
    seconds: float | None = None,
    isa: str | None = None,
) -> list[str]:
    args: list[str] = []
    for flag, value in (
        ("--threads", threads),
        ("--cpus", cpus),
        ("--bind", bind),
        ("--reps", reps),
        ("--seconds", seconds),
        ("--isa", isa),
    ):
        if value is not None:
            args += [flag, str(value)]
    return args


def run_peak(**options) -> dict:
    """The bandwall-peak record (per_core/total_gflops_dp/sp), validated."""
    return records.finish(native.run_record(PEAK_EXECUTABLE, peak_args(**options)))


def balance(bandwidth_GBps: float, peak: dict) -> dict:
    """Bytes per flop of the machine in each precision and, for each application, the share of
    the flop peak its bytes per flop allow (roofline: min(1, machine B/F / application B/F))."""
    gflops = {"dp": peak["total_gflops_dp"], "sp": peak["total_gflops_sp"]}
    machine = {p: bandwidth_GBps / g for p, g in gflops.items()}
    apps = []
    for app in APPLICATIONS:
        m = machine[app["precision"]]
        share = min(1.0, m / app["bytes_per_flop"])
        apps.append(
            {
                **app,
                "machine_bytes_per_flop": m,
                "attainable_share_of_peak": share,
                "attainable_gflops": share * gflops[app["precision"]],
                "bound": "memory" if app["bytes_per_flop"] > m else "compute",
            }
        )
    return {
        "bandwidth_GBps": bandwidth_GBps,
        "peak_gflops_dp": gflops["dp"],
        "peak_gflops_sp": gflops["sp"],
        "per_core_gflops_dp": peak["per_core_gflops_dp"],
        "per_core_gflops_sp": peak["per_core_gflops_sp"],
        "bytes_per_flop_dp": machine["dp"],
        "bytes_per_flop_sp": machine["sp"],
        "applications": apps,
        "contrast": CONTRAST,
    }


def balance_record(stream_rec: dict, peak_rec: dict) -> dict:
    """The balance record (tool "balance") from a stream record and a peak record."""
    result = balance(stream_rec["result"]["best_GBps"], peak_rec["result"])
    config = {
        "kernel": stream_rec["config"]["kernel"],
        "stores": stream_rec["config"]["stores"],
        "stream_threads": stream_rec["config"]["threads"],
        "peak_threads": peak_rec["config"]["threads"],
        "size_per_array_bytes": stream_rec["config"]["size_per_array_bytes"],
        "isa": peak_rec["config"]["isa"],
        "isa_requested": peak_rec["config"].get("isa_requested", "auto"),
        "stream_isa": stream_rec["config"]["isa"],
    }
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "balance",
        "config": config,
        "result": result,
        "validation": records.of_parts([stream_rec, peak_rec], "runs (stream and FMA peak)"),
        "provenance": records.provenance_of_parts(stream_rec, [stream_rec, peak_rec]),
    }
    return records.finish(rec)


def measure(
    kernel: str = "triad",
    threads: int | None = None,
    cpus: str | None = None,
    bind: str | None = None,
    size: str | None = None,
    reps: int | None = None,
    peak_reps: int | None = None,
    peak_seconds: float | None = None,
    isa: str | None = None,
) -> tuple[dict, dict, dict]:
    """Runs the stream kernel and the FMA peak on the same CPUs, both with the instruction set isa
    (None or auto: the best this CPU runs); returns (stream, peak, balance)."""
    s = stream.run(kernel, threads=threads, cpus=cpus, bind=bind, size=size, reps=reps, isa=isa)
    p = run_peak(threads=threads, cpus=cpus, bind=bind, reps=peak_reps, seconds=peak_seconds, isa=isa)
    return s, p, balance_record(s, p)
