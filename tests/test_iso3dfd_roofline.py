"""The roofline bandwall iso3dfd places a run on: the memory bound (the best STREAM kernel), the
in-core bounds (FMA peak, the row kernel's ports and its operation mix as run), the L1 fills from L2, the ECM estimate (with the
L3 term of a sweep whose tiles L3 holds), and why a ceiling is unavailable; every ceiling a stand-in
for the native probes."""

from __future__ import annotations

import pytest

from bandwall.core import native
from bandwall.kernels import iso3dfd, roofs


@pytest.fixture
def fake_record(make_record):
    def make(mp: float) -> dict:
        return make_record(
            tool="iso3dfd", result={"mpoints_per_s": mp, "bytes_per_point": 16, "flops_per_point": 61}
        )

    return make


def fake_ceilings(monkeypatch, stream_GBps: dict, calls: list | None = None):
    """native.run_record answering bandwall-stream with stream_GBps[kernel] (a missing kernel fails)
    and bandwall-peak with 244 GFlops single precision."""
    from bandwall.core.errors import RunFailed

    def fake(name, args, **kw):
        if calls is not None:
            calls.append((name, args))
        if name == "bandwall-stream":
            kernel = args[args.index("--kernel") + 1]
            if kernel not in stream_GBps:
                raise RunFailed(f"{kernel} did not validate")
            return {"result": {"best_GBps": stream_GBps[kernel]}}
        return {"result": {"total_gflops_sp": 244.0, "lanes_sp": 8}, "config": {"fma_per_cycle": 2}}

    monkeypatch.setattr(native, "run_record", fake)


def test_roofline_percentages(monkeypatch, fake_record):
    calls = []
    fake_ceilings(monkeypatch, {"copy": 30.0, "triad": 32.0}, calls)
    roof = iso3dfd.Roofline()
    rec = roof.place(fake_record(1000.0))
    r = rec["result"]["roofline"]
    assert r["stream_best_GBps"] == 32.0 and r["stream_kernel"] == "triad"
    assert r["stream_kernels_GBps"] == {"copy": 30.0, "triad": 32.0}
    assert r["memory_bound_mpoints_per_s"] == pytest.approx(2000.0)
    assert r["percent_of_memory_bound"] == pytest.approx(50.0)
    assert r["incore_bound_mpoints_per_s"] == pytest.approx(4000.0)
    assert r["percent_of_incore_bound"] == pytest.approx(25.0)
    assert ("bandwall-stream", ["--kernel", "copy", "--threads", "2", "--cpus", "0-1"]) in calls
    assert ("bandwall-stream", ["--kernel", "triad", "--threads", "2", "--cpus", "0-1"]) in calls
    assert ("bandwall-peak", ["--threads", "2", "--cpus", "0-1"]) in calls
    roof.place(fake_record(500.0))
    assert len(calls) == 3  # the ceilings of a set of cores are measured once


@pytest.mark.parametrize(
    "measured, kernel, best",
    [
        ({"copy": 40.0, "triad": 32.0}, "copy", 40.0),  # the best of the kernels, whichever it is
        ({"copy": 30.0}, "copy", 30.0),  # triad failed: the kernel that ran gives the bound
        ({"triad": 28.0}, "triad", 28.0),
    ],
)
def test_roofline_memory_bound_is_the_best_stream_kernel(monkeypatch, fake_record, measured, kernel, best):
    fake_ceilings(monkeypatch, measured)
    r = iso3dfd.Roofline().place(fake_record(1000.0))["result"]["roofline"]
    assert (r["stream_kernel"], r["stream_best_GBps"]) == (kernel, best)
    assert r["stream_kernels_GBps"] == measured
    assert r["memory_bound_mpoints_per_s"] == pytest.approx(best * 1e3 / 16)


def test_roofline_port_bound_from_the_incore_model(monkeypatch, fake_record):
    fake_ceilings(monkeypatch, {"copy": 30.0})
    rec = fake_record(1000.0)
    rec["result"]["incore_model"] = {
        "points_per_cycle_per_core": 0.5,
        "bound_by": "load ports",
        "ports_per_cycle": {"fma": 2},
    }
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    # 244 GFlop/s over 2 threads x 2 FMA pipes x 8 lanes x 2 flops: 3.8125 GHz; 0.5 points per cycle per core
    assert r["core_ghz_from_peak"] == pytest.approx(244.0 / 64)
    assert r["port_bound_mpoints_per_s"] == pytest.approx(0.5 * 2 * 244.0 / 64 * 1e3)
    assert r["percent_of_port_bound"] == pytest.approx(100.0 * 1000.0 / r["port_bound_mpoints_per_s"])
    assert r["port_bound_by"] == "load ports"
    assert "unavailable" in iso3dfd.Roofline().place(fake_record(1.0))["result"]["roofline"]["ports"]


@pytest.mark.parametrize(
    "mix_ghz, noted",
    [
        (3.8, False),  # the peak's 3.8125 GHz: the same clock
        (3.4, False),  # one core's turbo a little above all cores' clock
        (6.8, True),  # the mix's FMAs ran at nearly twice the peak's clock: the peak run is off
        (2.0, True),  # the peak implies a clock far above the mix's
        (None, False),  # no mix: nothing to compare
    ],
)
def test_roofline_says_when_the_peaks_clock_is_not_the_mixs(monkeypatch, fake_record, mix_ghz, noted):
    fake_ceilings(monkeypatch, {"copy": 30.0})
    rec = fake_record(1000.0)
    rec["result"]["incore_model"] = {"points_per_cycle_per_core": 0.5, "bound_by": "load ports"}
    if mix_ghz is not None:
        rec["result"]["incore_model"]["mix"] = {"mpoints_per_s_per_core": 900.0, "clock_ghz": mix_ghz}
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert ("clock_note" in r) == noted
    if noted:
        assert f"{mix_ghz:.2f} GHz" in r["clock_note"] and "3.81 GHz" in r["clock_note"]


@pytest.mark.parametrize(
    "mix, lower",
    [
        # the mix as run slower than the port model counts: the ECM estimate takes it
        ({"mpoints_per_s_per_core": 1000.0, "over_port_model": 1.9}, "the operation mix"),
        # faster (a model that undercounts a pipe): the port model's stays the in-core term
        ({"mpoints_per_s_per_core": 9000.0}, "ports"),
    ],
)
def test_roofline_mix_bound_and_the_lower_in_core_roof_in_the_ecm(monkeypatch, fake_record, mix, lower):
    fake_ceilings(monkeypatch, {"dot": 102.0})
    rec = fake_record(100.0)
    rec["result"]["incore_model"] = {"points_per_cycle_per_core": 0.5, "bound_by": "FP pipes", "mix": mix}
    rec["result"]["traffic_model"] = {"l1_fills": {"bytes_per_point": 102.0}, "l2_bytes": 1 << 20}
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    # per core times the threads of the run (2)
    assert r["mix_bound_mpoints_per_s"] == pytest.approx(2 * mix["mpoints_per_s_per_core"])
    assert r["percent_of_mix_bound"] == pytest.approx(100.0 * 100.0 / r["mix_bound_mpoints_per_s"])
    assert r.get("mix_over_port_model") == mix.get("over_port_model")
    core = min(r["mix_bound_mpoints_per_s"], r["port_bound_mpoints_per_s"])
    assert r["ecm_mpoints_per_s"] == pytest.approx(1.0 / (1.0 / core + 1.0 / 1000.0))
    assert r["ecm_levels"] == f"{lower} + L2-to-L1 fills"
    assert r["binds"]["roofs"]["mix"] == r["mix_bound_mpoints_per_s"]


@pytest.mark.parametrize(
    "model, why",
    [
        ({}, "the run has no operation mix"),
        (
            {"mix": {"unavailable": "the generic row kernel's operations are not counted at radius 4"}},
            "not counted",
        ),
    ],
)
def test_roofline_says_why_the_mix_is_unavailable(monkeypatch, fake_record, model, why):
    fake_ceilings(monkeypatch, {"copy": 30.0})
    rec = fake_record(100.0)
    rec["result"]["incore_model"] = model
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert r["mix"].startswith("unavailable: ") and why in r["mix"]
    assert "mix_bound_mpoints_per_s" not in r


def test_roofline_fill_bound_and_ecm_from_the_l1_fill_model(monkeypatch, fake_record):
    calls = []
    fake_ceilings(monkeypatch, {"copy": 30.0, "dot": 102.0}, calls)
    rec = fake_record(100.0)
    rec["result"]["incore_model"] = {"points_per_cycle_per_core": 0.5, "bound_by": "FP pipes"}
    rec["result"]["traffic_model"] = {
        "l1_fills": {"bytes_per_point": 102.0, "y_window_in_l1": False},
        "l2_bytes": 1 << 20,
    }
    roof = iso3dfd.Roofline()
    r = roof.place(rec)["result"]["roofline"]
    assert r["l1_fill_bound_mpoints_per_s"] == pytest.approx(1000.0)  # 102 GB/s from L2 / 102 bytes a point
    port, memory = r["port_bound_mpoints_per_s"], r["memory_bound_mpoints_per_s"]
    assert r["ecm_mpoints_per_s"] == pytest.approx(1.0 / (1.0 / port + 1.0 / 1000.0 + 1.0 / memory))
    assert r["ecm_levels"] == "ports + L2-to-L1 fills + memory"
    assert r["percent_of_ecm"] == pytest.approx(100.0 * 100.0 / r["ecm_mpoints_per_s"])
    assert r["y_window_in_l1"] is False
    # dot on arrays filling half the L2 of each of the 2 threads, measured once per set of cores
    (probe,) = [a for name, a in calls if name == "bandwall-stream" and "dot" in a]
    assert probe[probe.index("--size") + 1] == str(2 * (1 << 20) // 4)
    assert r["l2_probe"] == "bandwall-stream " + " ".join(probe)
    roof.place(rec)
    assert len(calls) == 4


@pytest.mark.parametrize(
    "depth, level, llc_GBps, term",
    [
        # a sweep whose tiles the L3 holds: the larger of memory (6 B/pt at 32 GB/s) and L3-to-L2
        # (18 B/pt): L3 at 54 GB/s (3000 MPoints/s) outweighs memory (5333)
        (4, "L3", 54.0, "the larger of memory and L3-to-L2"),
        (4, "L3", 216.0, "the larger of memory and L3-to-L2"),  # L3 at 12000: memory outweighs it
        (1, "none", 54.0, "memory"),  # step by step: memory alone, no probe
        (4, "memory", 54.0, "memory"),  # tiles the model does not see in a cache
        (4, "L3", None, "memory"),  # the probe failed: memory alone
    ],
)
def test_roofline_ecm_of_a_sweep_counts_the_last_level_cache(
    monkeypatch, fake_record, depth, level, llc_GBps, term
):
    """A sweep spares memory, not the last-level cache: with tiles in L3, the ECM estimate's last term
    is the larger of memory's and the L3-to-L2 transfers' (at dot's rate on arrays in L3, not L2)."""
    from bandwall.core.errors import RunFailed

    l2, l3, calls = 1 << 20, 32 << 20, []

    def fake(name, args, **kw):
        calls.append((name, args))
        if name == "bandwall-stream":
            kernel = args[args.index("--kernel") + 1]
            if kernel != "dot":
                return {"result": {"best_GBps": 32.0}}
            size = int(args[args.index("--size") + 1])
            if size == 2 * l2 // 4:
                return {"result": {"best_GBps": 102.0}}
            if llc_GBps is None:
                raise RunFailed("dot did not validate")
            return {"result": {"best_GBps": llc_GBps}}
        return {"result": {"total_gflops_sp": 244.0, "lanes_sp": 8}, "config": {"fma_per_cycle": 2}}

    monkeypatch.setattr(native, "run_record", fake)
    rec = fake_record(100.0)
    rec["result"]["bytes_per_point"] = 6.0 if depth > 1 else 16
    rec["result"]["incore_model"] = {"points_per_cycle_per_core": 0.5, "bound_by": "FP pipes"}
    rec["result"]["traffic_model"] = {
        "l1_fills": {"bytes_per_point": 102.0},
        "l2_bytes": l2,
        "l3_bytes": l3,
        "time_block": {"depth": depth, "level": level, "llc_bytes_per_point": 18.0},
    }
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert r["ecm_levels"] == f"ports + L2-to-L1 fills + {term}"
    port, memory = r["port_bound_mpoints_per_s"], r["memory_bound_mpoints_per_s"]
    probes = [
        a for n, a in calls if n == "bandwall-stream" and "dot" in a and a[a.index("--size") + 1] != "524288"
    ]
    if term == "memory":
        assert r["ecm_mpoints_per_s"] == pytest.approx(1.0 / (1.0 / port + 1.0 / 1000.0 + 1.0 / memory))
        assert "llc_GBps" not in r
        assert bool(probes) == (llc_GBps is None)  # probed only for a sweep in L3
    else:
        llc = llc_GBps * 1e3 / 18.0
        assert r["llc_bound_mpoints_per_s"] == pytest.approx(llc)
        last = max(1.0 / memory, 1.0 / llc)
        assert r["ecm_mpoints_per_s"] == pytest.approx(1.0 / (1.0 / port + 1.0 / 1000.0 + last))
        # an eighth of the 32 MiB L3 an array (4 MiB, under 8 MiB a thread)
        (probe,) = probes
        assert probe[probe.index("--size") + 1] == str(l3 // 8)
        assert r["llc_probe"] == "bandwall-stream " + " ".join(probe)


def test_roofline_ecm_leaves_out_the_memory_term_without_a_memory_bound(monkeypatch, fake_record):
    fake_ceilings(monkeypatch, {"dot": 102.0})  # copy and triad fail: no memory bound
    rec = fake_record(100.0)
    rec["result"]["incore_model"] = {"points_per_cycle_per_core": 0.5, "bound_by": "FP pipes"}
    rec["result"]["traffic_model"] = {"l1_fills": {"bytes_per_point": 102.0}, "l2_bytes": 1 << 20}
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert r["memory"].startswith("unavailable")
    assert r["ecm_mpoints_per_s"] == pytest.approx(1.0 / (1.0 / r["port_bound_mpoints_per_s"] + 1.0 / 1000.0))
    assert r["ecm_levels"] == "ports + L2-to-L1 fills"


@pytest.mark.parametrize(
    "traffic, stream, why",
    [
        ({}, {"copy": 30.0, "dot": 50.0}, "no L1 fill model"),
        ({"l1_fills": {"bytes_per_point": 102.0}, "l2_bytes": 1 << 20}, {"copy": 30.0}, "dot in L2"),
        (
            {"l1_fills": {"bytes_per_point": 102.0}, "l2_bytes": 0},
            {"copy": 30.0, "dot": 50.0},
            "no L2 bandwidth",
        ),
    ],
)
def test_roofline_fill_bound_says_why_it_is_unavailable(monkeypatch, fake_record, traffic, stream, why):
    fake_ceilings(monkeypatch, stream)
    rec = fake_record(100.0)
    rec["result"]["traffic_model"] = traffic
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert r["l1_fills"].startswith("unavailable") and why in r["l1_fills"]
    assert "ecm_mpoints_per_s" not in r


def test_roofline_quick_mode_runs_short_stream_kernels(monkeypatch, fake_record):
    calls = []
    fake_ceilings(monkeypatch, {"copy": 30.0, "triad": 32.0}, calls)
    iso3dfd.Roofline(quick=True).place(fake_record(1000.0))
    streams = [args for name, args in calls if name == "bandwall-stream"]
    assert [a[a.index("--kernel") + 1] for a in streams] == list(iso3dfd.ROOFLINE_STREAM_KERNELS)
    assert all(a[a.index("--reps") + 1] == str(iso3dfd.QUICK_STREAM_REPS) for a in streams)


def test_roofline_says_why_it_is_unavailable(monkeypatch, fake_record):
    from bandwall.core.errors import RunFailed

    def missing(name, args, **kw):
        raise RunFailed(f"native executable {name!r} not found")

    monkeypatch.setattr(native, "run_record", missing)
    r = iso3dfd.Roofline().place(fake_record(100.0))["result"]["roofline"]
    assert r["memory"].startswith("unavailable: ") and r["incore"].startswith("unavailable: ")
    assert "percent_of_memory_bound" not in r


@pytest.mark.parametrize(
    ("given", "by"),
    [
        ({"memory_bound_mpoints_per_s": 1000.0, "port_bound_mpoints_per_s": 3000.0}, "memory"),
        ({"memory_bound_mpoints_per_s": 9000.0, "llc_bound_mpoints_per_s": 4000.0}, "llc"),
        ({"memory_bound_mpoints_per_s": 9000.0, "port_bound_mpoints_per_s": 2500.0}, "port"),
        ({"incore_bound_mpoints_per_s": 700.0, "l1_fill_bound_mpoints_per_s": 800.0}, "incore"),
    ],
)
def test_the_binding_roof_is_the_lowest_and_says_how_far(given, by):
    b = roofs.binding_roof({**given, "memory_wall": {"mpoints_per_s": 1.0}}, 500.0)
    assert b["by"] == by and b["mpoints_per_s"] == min(given.values())
    assert b["percent"] == pytest.approx(100 * 500.0 / min(given.values()))
    assert set(b["roofs"]) == {k.removesuffix("_bound_mpoints_per_s") for k in given}
    assert f"{b['percent']:.0f}%" in b["note"]


def test_the_binding_roof_says_when_none_was_measured():
    assert "unavailable" in roofs.binding_roof({"memory_bound_mpoints_per_s": None}, 500.0)


@pytest.mark.parametrize(
    ("allocated", "depth", "per_point", "level"),
    [
        (200 << 20, 1, 16.2, "L3"),  # step by step, the arrays in L3: its bytes into L2 come from there
        (200 << 20, 4, 3.5, "L3"),  # a sweep with tiles in L2 over arrays L3 holds: the sweep's bytes
        (400 << 20, 1, None, None),  # more than L3: memory, as before, and no L3 probe
        (3 << 20, 1, None, "L2"),  # within the two cores' L2s: nothing beyond feeds it
    ],
)
def test_a_run_whose_arrays_a_cache_holds_is_bound_by_it_not_memory(
    monkeypatch, fake_record, allocated, depth, per_point, level
):
    """Arrays that fit in the last-level cache come from there: the record says so, the L3 roof is the
    bytes a point that come into L2 from it at dot's rate on arrays in L3, the ECM estimate's last term
    is that transfer alone, and memory (which the run may exceed) is not the binding roof. Arrays the
    L2s of the run's cores hold have no feed beyond them: no L3 roof, no memory term, no node
    projection."""
    l2, l3, calls = 2 << 20, 300 << 20, []

    def fake(name, args, **kw):
        calls.append((name, args))
        if name == "bandwall-stream":
            kernel = args[args.index("--kernel") + 1]
            if kernel != "dot":
                return {"result": {"best_GBps": 46.0}}
            size = int(args[args.index("--size") + 1])
            return {"result": {"best_GBps": 200.0 if size == 2 * l2 // 4 else 81.0}}
        return {"result": {"total_gflops_sp": 493.0, "lanes_sp": 16}, "config": {"fma_per_cycle": 2}}

    monkeypatch.setattr(native, "run_record", fake)
    rec = fake_record(3900.0)
    rec["result"]["allocated_bytes"] = allocated
    rec["result"]["incore_model"] = {"points_per_cycle_per_core": 1.2, "bound_by": "FP pipes"}
    rec["result"]["traffic_model"] = {
        "l1_fills": {"bytes_per_point": 32.0},
        "l2_bytes": l2,
        "l3_bytes": l3,
        "bytes_per_point_into_l2_estimate": 16.2,
        "time_block": {"depth": depth, "level": "L2", "llc_bytes_per_point": 3.5},
    }
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert r["percent_of_memory_bound"] > 100  # 3900 MPoints/s past 46 GB/s over 16 bytes
    assert r.get("arrays_in_cache", {}).get("level") == level
    if level is None:  # memory's roof, which this rate passes (set apart as passed), not L3's
        assert "llc_GBps" not in r and r["binds"]["passed"] == ["memory"]
        assert r["ecm_levels"].endswith("+ memory")
        return
    if level == "L2":
        assert "llc_GBps" not in r and r["ecm_levels"] == "ports + L2-to-L1 fills"
        assert r["binds"]["by"] not in ("memory", "llc") and "node_projection" not in r
        assert "fit in L2" in r["binds"]["note"]
        return
    assert r["llc_bound_mpoints_per_s"] == pytest.approx(81.0 * 1e3 / per_point)
    assert r["ecm_levels"].endswith("+ L3-to-L2")
    assert r["binds"]["by"] != "memory" and "memory" in r["binds"]["roofs"]
    assert "fit in the last-level cache" in r["binds"]["note"]


def test_the_binding_roof_of_a_run_in_the_last_level_cache_leaves_memory_out():
    given = {"memory_bound_mpoints_per_s": 2900.0, "llc_bound_mpoints_per_s": 5000.0}
    assert roofs.binding_roof(given, 2800.0)["by"] == "memory"
    b = roofs.binding_roof(given, 3900.0, "the last-level cache")
    assert b["by"] == "llc" and b["percent"] == pytest.approx(78.0)
    assert "unavailable" in roofs.binding_roof({"memory_bound_mpoints_per_s": 2900.0}, 3900.0, "L2")


@pytest.mark.parametrize(
    ("given", "mp", "by", "passed"),
    [
        # the L2 probe ran low on a disturbed host: the run passes its roof by 1.67x, so L3 holds it
        (
            {"l1_fill_bound_mpoints_per_s": 2114.0, "llc_bound_mpoints_per_s": 4286.0},
            3530.0,
            "llc",
            ["l1_fill"],
        ),
        # within PASSED of the lowest: that one still binds
        ({"l1_fill_bound_mpoints_per_s": 3300.0, "llc_bound_mpoints_per_s": 4286.0}, 3530.0, "l1_fill", []),
        # every roof passed: the lowest is named, nothing set apart
        ({"l1_fill_bound_mpoints_per_s": 2114.0, "llc_bound_mpoints_per_s": 2500.0}, 3530.0, "l1_fill", []),
    ],
)
def test_a_roof_the_run_passes_does_not_bind_it(given, mp, by, passed):
    b = roofs.binding_roof(given, mp)
    assert (b["by"], b["passed"]) == (by, passed)
    assert ("passed by the run" in b["note"]) == bool(passed)


def test_roofline_kernel_in_l2_is_a_roof_and_binds_when_lowest(monkeypatch, fake_record):
    fake_ceilings(monkeypatch, {"copy": 30.0})
    rec = fake_record(1000.0)
    rec["result"]["incore_model"] = {
        "points_per_cycle_per_core": 0.5,
        "bound_by": "FP pipes",
        "mix": {"mpoints_per_s_per_core": 2000.0},
        "kernel_in_l2": {"mpoints_per_s_per_core": 600.0, "over_mix": 3.33, "block": [256, 16, 8]},
    }
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    # per core times the threads of the run (2)
    assert r["kernel_bound_mpoints_per_s"] == pytest.approx(1200.0)
    assert r["percent_of_kernel_bound"] == pytest.approx(100.0 * 1000.0 / 1200.0)
    assert (r["kernel_over_mix"], r["kernel_block"]) == (3.33, [256, 16, 8])
    assert r["binds"]["by"] == "kernel" and r["binds"]["roofs"]["kernel"] == pytest.approx(1200.0)
    assert "the row kernel itself with its data in L2" in r["binds"]["note"]


@pytest.mark.parametrize(
    "model, why",
    [
        ({}, "the run has no timing of its kernel in L2"),
        ({"kernel_in_l2": {"unavailable": "the L2 size of this core is unknown"}}, "L2 size"),
    ],
)
def test_roofline_says_why_the_kernel_in_l2_is_unavailable(monkeypatch, fake_record, model, why):
    fake_ceilings(monkeypatch, {"copy": 30.0})
    rec = fake_record(100.0)
    rec["result"]["incore_model"] = model
    r = iso3dfd.Roofline().place(rec)["result"]["roofline"]
    assert r["kernel_in_l2"].startswith("unavailable: ") and why in r["kernel_in_l2"]
    assert "kernel_bound_mpoints_per_s" not in r


def test_node_projection_takes_the_kernel_in_l2_before_the_ecm_estimate():
    rec = {"provenance": {"threads": 2}, "config": {}, "result": {"mpoints_per_s": 1400.0}}
    roof = {
        "port_bound_mpoints_per_s": 3000.0,
        "l1_fill_bound_mpoints_per_s": 3000.0,
        "kernel_bound_mpoints_per_s": 2400.0,
    }
    p = roofs.node_projection(rec, roof, 4, 10.0)
    assert p["per_core_mpoints_per_s"] == pytest.approx(1200.0)
    assert p["per_core_source"] == "the row kernel with its data in L2, as this core ran it"
