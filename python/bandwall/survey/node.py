"""One node measured for a survey: its topology digest, STREAM triad at the knee and on all cores,
the FMA peak, short ISO3DFD runs and its settings; every figure with the median, min and max of its
repetitions and their values in the order they ran (the rounds the decision rule judges the node
by: STREAM's timed repetitions, the peak's, and one ISO3DFD run a round, the rule's rounds of them);
what else used its CPUs just before (load). The record (tool survey-node) is what `bandwall survey --judge` reads, however it was
gathered."""

from __future__ import annotations

import os
import socket
import statistics
import time

from bandwall.core import decide, native, records, topo
from bandwall.kernels import iso3dfd, sweep
from bandwall.survey import load, settings

TOOL = "survey-node"
# (full, short): STREAM repetitions and array elements; ISO3DFD grid and steps
STREAM = {False: (20, 40_000_000), True: (8, 10_000_000)}
ISO = {False: ((208, 208, 208), 20), True: ((112, 112, 112), 10)}
LOAD_WINDOW_S = {False: 1.0, True: 0.5}  # how long the node's CPUs are watched before the runs
# Figures and their units; all are higher-is-better.
UNITS = {
    "stream_triad_all_GBps": "GB/s",
    "stream_triad_knee_GBps": "GB/s",
    "peak_gflops_dp": "GFlop/s",
    "iso3dfd_mpoints_per_s": "MPoints/s",
}
# Their names in verdicts and tables.
NAMES = {
    "stream_triad_all_GBps": "STREAM triad, all cores",
    "stream_triad_knee_GBps": "STREAM triad, knee",
    "peak_gflops_dp": "FMA peak (double)",
    "iso3dfd_mpoints_per_s": "ISO3DFD",
}


# Test hook, for the tests of a node that never answers: the task of a node named here (names
# separated by commas or spaces) sleeps instead of measuring, at most HANG_S, before its turn (so it
# holds no other node of its machine back). Not for use outside tests.
TEST_HANG = "BANDWALL_TEST_SURVEY_HANG"
HANG_S = 600


def name() -> str:
    """SLURMD_NODENAME inside a Slurm job step, else the host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def spread(values) -> dict:
    vals = [float(v) for v in values if v is not None]
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "values": vals}


def _stream(threads: int, short: bool) -> dict:
    reps, size = STREAM[short]
    return native.run_record(
        "bandwall-stream",
        ["--kernel", "triad", "--threads", str(threads), "--reps", str(reps), "--size", str(size)],
    )


def _stream_spread(rec: dict) -> dict:
    r = rec["result"]
    moved = r["traffic"]["without_write_allocate"]["bytes_per_rep"]
    times = r.get("times_s", [])[int(r.get("dropped_reps", 0)) :]
    return spread(moved / t / 1e9 for t in times if t > 0)


def counts(cores: int) -> list[int]:
    """The core counts the knee is looked for at: powers of two below all, and all."""
    out, c = [], 1
    while c < cores:
        out.append(c)
        c *= 2
    return [*out, cores]


def measure(short: bool = False) -> dict:
    """This node's survey record, measured in this machine's turn (see load)."""
    if name() in os.environ.get(TEST_HANG, "").replace(",", " ").split():
        time.sleep(HANG_S)  # the test hook: a task that never answers
    with load.turn() as waited:
        others = load.foreign(LOAD_WINDOW_S[short])
        rec = _measure(short)
    rec["result"]["load"] = {**others, "waited_s": round(waited, 3)}
    rec["result"]["host"] = load.host_id()
    return records.validate(rec)


def _measure(short: bool) -> dict:
    t = topo.topology()["result"]
    cores = int(t["cores"])
    cores = max(1, min(cores, sweep.allowed_cpu_count()))
    parts: list[dict] = []
    points, streams = [], {}
    for c in counts(cores):
        rec = _stream(c, short)
        parts.append(rec)
        streams[c] = rec
        points.append(sweep.point(rec))  # with its repetitions' rates, for the decision rule
    knee = sweep.knee(points)
    peak = native.run_record("bandwall-peak", ["--threads", str(cores)])
    parts.append(peak)
    grid, steps = ISO[short]
    # one ISO3DFD run a round (its steps' median), the rule's rounds of them: the record of a run
    # gives its steps' median, min and max but not each step's rate
    isos = [iso3dfd.run(grid, steps, threads=cores, time_block=1) for _ in range(decide.rule().rounds)]
    parts += isos
    iso = isos[0]
    pr = peak["result"]
    figures = {
        "stream_triad_all_GBps": _stream_spread(streams[cores]),
        "stream_triad_knee_GBps": _stream_spread(streams[knee]),
        "peak_gflops_dp": spread(pr.get("total_gflops_dp_reps") or [pr["total_gflops_dp"]]),
        "iso3dfd_mpoints_per_s": spread(r["result"]["step_mpoints_per_s"]["median"] for r in isos),
    }
    for key, fig in figures.items():
        fig["unit"] = UNITS[key]
    prov = dict(iso["provenance"])
    return records.finish(
        {
            "schema_version": records.SCHEMA_VERSION,
            "tool": TOOL,
            "config": {"node": name(), "short": short, "cores": cores, "knee_counts": counts(cores)},
            "result": {
                "node": name(),
                "digest": t["digest"],
                "cpu_model": t.get("cpu_model", ""),
                "knee_cores": knee,
                "figures": figures,
                "settings": settings.read(),
            },
            "validation": records.of_parts(parts, "runs of the node"),
            "provenance": prov,
        }
    )
