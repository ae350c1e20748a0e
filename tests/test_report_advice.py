"""The report's first section: figures with their spread, and each recommendation read from
synthetic records (knee found, no knee, within noise, efficiency flags, STREAM never compute-bound,
history of earlier reports)."""

from __future__ import annotations

import statistics

import pytest

from bandwall.core.spread import NOISE, Spread, compare
from bandwall.report import advice, record
from bandwall.report.advice import Evidence, Line


def rounds(median, lo=None, hi=None):
    """Five rounds of a figure: its min, median and max, then the median twice."""
    lo = median if lo is None else lo
    hi = median if hi is None else hi
    return [lo, median, hi, median, median]


@pytest.fixture
def stream_rec(make_record):
    def make(
        kernel="triad",
        threads=1,
        median=20.0,
        lo=None,
        hi=None,
        rid=None,
        section_extra=None,
        values=None,
        **config,
    ):
        values = values or rounds(median, lo, hi)
        rec = make_record(
            "stream",
            result={
                "best_GBps": max(values),
                "median_GBps": median,
                "min_GBps": min(values),
                "max_GBps": max(values),
                "dropped_reps": 1,
                # a warm-up repetition, then one of 1 GB per value
                "times_s": [1.0] + [1.0 / v for v in values],
                "traffic": {"without_write_allocate": {"bytes_per_rep": 1e9}},
                "bytes_per_element": 16.0 if kernel == "dot" else 24.0,
                "flops_per_element": 0.0 if kernel == "copy" else 2.0,
            },
            config={"kernel": kernel, "threads": threads, "reps": len(values) + 1, **config},
        )
        if rid is not None:
            rec["id"] = rid
        return rec

    return make


def sweep_of(make_record, kernel, points, share=0.95):
    return make_record(
        "sweep",
        result={"points": [{"cores": p["config"]["threads"]} for p in points]},
        config={"kernel": kernel, "knee_share": share},
    )


@pytest.mark.parametrize(
    "a, b, apart",
    [
        # rounds in the order they ran: the decision rule pairs them
        ([10, 9, 11, 10, 10], [20, 19, 21, 20, 20], True),
        ([10, 9, 11, 10, 10], [10.5, 10, 12, 10, 9.5], False),  # one round goes the other way
        (
            [10, 12, 9, 11, 10],
            [10.1, 12.1, 9.1, 11.1, 10.1],
            False,
        ),  # 1% apart in every round: below the margin
        (
            [10, 12, 9, 11, 10],
            [11, 13.2, 9.9, 12.1, 11],
            True,
        ),  # 10% apart in every round, however they drift
        ([10, 10, 10], [20, 20, 20], False),  # three rounds: too few to judge
    ],
)
def test_spread_apart_by_the_decision_rule(a, b, apart):
    sa, sb = Spread.of(a), Spread.of(b)
    assert sa.apart_from(sb) is apart and sb.apart_from(sa) is apart
    assert (NOISE in compare(sa, sb, "a", "b")) is not apart


def test_spreads_without_their_rounds_are_never_apart():
    assert not Spread(10, 9, 11, 3).apart_from(Spread(20, 19, 21, 3))
    assert Spread(10, 9, 11, 3).ranges_apart(Spread(20, 19, 21, 3))


def test_spread_text_says_when_rounds_are_too_few():
    assert "too few rounds" in Spread.of([1.0, 2.0]).text()
    assert Spread.of([3.0, 1.0, 2.0], "GB/s").text() == "2.00 GB/s (min 1.00, max 3.00, 3 rounds)"


@pytest.mark.parametrize(
    "points, expect",
    [
        # cores -> rounds: the knee is the fewest cores no other count beats by more than 1/0.95 in
        # every comparison the decision rule can make, else every core
        ({1: [20, 19, 21, 20, 20], 2: [30, 29, 31, 30, 30], 4: [31, 30, 32, 31, 31]}, (2, 4)),  # knee found
        (
            {1: [10, 9, 11, 10, 10], 2: [20, 19, 21, 20, 20], 4: [40, 39, 41, 40, 40]},
            (4, 4),
        ),  # rising to the end
        ({1: [20, 15, 25, 20, 20], 2: [22, 18, 24, 22, 22]}, (2, 2)),  # noise: not shown, every core
        ({1: [30, 29, 31, 30, 30], 2: [20, 19, 21, 20, 20]}, (1, 1)),  # more cores slower
        ({1: [20, 20, 20], 2: [20, 20, 20]}, (2, 1)),  # too few rounds to show anything: every core
    ],
)
def test_knee(points, expect):
    spreads = {n: Spread.of(v) for n, v in points.items()}
    assert advice.knee(spreads, 0.95) == expect


def test_cores_rule_names_the_knee_surplus_and_flags_efficiency(stream_rec, make_record):
    pts = [stream_rec(threads=1, median=20, lo=19, hi=21), stream_rec(threads=2, median=21, lo=20, hi=22)]
    sweep = sweep_of(make_record, "triad", pts)
    lines = advice.cores(Evidence({"stream": [*pts, sweep]}))
    knee, eff = lines
    assert "1 core reaches the bandwidth (the knee): use 1 per memory-bound process" in knee.verdict
    assert "1 surplus core" in knee.verdict
    assert knee.fix.startswith("OMP_NUM_THREADS=1 ")
    assert "95% of this machine's best triad bandwidth" in knee.threshold
    assert eff.flag and eff.measured.startswith("0.53") and "below 0.8" in eff.verdict


def test_cores_rule_without_a_knee_uses_every_core(stream_rec, make_record):
    pts = [stream_rec(threads=1, median=10, lo=9, hi=11), stream_rec(threads=2, median=19, lo=18.5, hi=19.5)]
    knee, eff = advice.cores(Evidence({"stream": [*pts, sweep_of(make_record, "triad", pts)]}))
    assert knee.verdict.startswith("no knee") and "OMP_NUM_THREADS=2" in knee.fix
    assert not eff.flag and "at or above 0.8" in eff.verdict


def test_low_efficiency_without_a_knee_does_not_claim_one(stream_rec, make_record):
    pts = [stream_rec(threads=1, median=20, lo=19.5, hi=20.5), stream_rec(threads=2, median=26, lo=25, hi=27)]
    knee, eff = advice.cores(Evidence({"stream": [*pts, sweep_of(make_record, "triad", pts)]}))
    assert knee.verdict.startswith("no knee") and eff.flag
    assert "past the knee" not in eff.verdict and "less than the one before" in eff.verdict


@pytest.mark.parametrize(
    "gbps, gflops, ceiling, peak, expect",
    [
        (20.0, 1.7, 20.0, 25.0, "memory"),  # STREAM triad at the ceiling
        (20.0, 1.7, 20.0, 1.0, "memory"),  # a peak measured far too low: still memory
        (2.0, 0.17, 20.0, 25.0, "memory"),  # a slow STREAM run (other load): still memory
        (4.0, 20.0, 20.0, 25.0, "compute"),  # a dense kernel near the FMA peak
    ],
)
def test_bound_against_measured_ceilings(gbps, gflops, ceiling, peak, expect):
    assert advice.bound(gbps, gflops, ceiling, peak)[0] == expect


@pytest.mark.parametrize("peak", [0.5, 5.0, 25.0, 400.0])  # 0.5: below what STREAM computed
@pytest.mark.parametrize("kernel, median", [("triad", 20.0), ("dot", 5.0), ("copy", 0.3)])
def test_stream_is_never_called_compute_bound(stream_rec, make_record, kernel, median, peak):
    recs = [
        stream_rec("triad", threads=2, median=20.0, lo=19, hi=21),
        stream_rec(kernel, threads=1, median=median, lo=median * 0.9, hi=median * 1.1),
        make_record(
            "peak", result={"total_gflops_dp": peak, "total_gflops_sp": 2 * peak}, config={"isa": "avx2"}
        ),
    ]
    lines = advice.roofline(Evidence({"stream": recs}))
    assert lines and all(line.verdict.startswith("memory-bound") for line in lines)


@pytest.mark.parametrize(
    "result, expect",
    [
        (
            {"total_gflops_dp": 30.0, "total_gflops_dp_reps": [28.0, 30.0, 29.0]},
            "29.0 GFlop/s (min 28.0, max 30.0, 3 rounds)",
        ),
        ({"total_gflops_dp": 30.0}, "30.0 GFlop/s (min 30.0, max 30.0, 1 round) (too few rounds to judge)"),
    ],
)
def test_roofline_threshold_shows_the_spread_of_both_ceilings(stream_rec, make_record, result, expect):
    recs = [
        stream_rec("triad", threads=2, median=20.0, lo=19, hi=21),
        make_record("peak", result={**result, "total_gflops_sp": 60.0}, config={"isa": "avx2"}),
    ]
    (line,) = advice.roofline(Evidence({"stream": recs}))
    assert "STREAM ceiling 20.0 GB/s (min 19.0, max 21.0" in line.threshold
    assert f"the best of its rounds, which spread {expect}" in line.threshold


@pytest.mark.parametrize(
    "bound_rounds, unbound_rounds, expect, flagged",
    [
        ([10, 10.5, 11, 10.5, 10.4], [10.2, 10.8, 10.5, 10.1, 10.9], NOISE, False),
        ([20, 21, 22, 21, 21], [10, 11, 12, 11, 11], "bind: threads left to the scheduler run at 0.52", True),
        ([10, 11, 12, 11, 11], [20, 21, 22, 21, 21], "binding costs here", False),
    ],
)
def test_binding_rule(make_record, bound_rounds, unbound_rounds, expect, flagged):
    modes = {
        "bound": {"rounds": bound_rounds},
        "one-cpu": {"rounds": [5, 6, 7, 6, 6]},
        "unbound": {"rounds": unbound_rounds},
    }
    rec = make_record("pin-compare", result={"modes": modes, "fom_unit": "1/s"}, config={"spin": "passive"})
    line = advice.binding(Evidence({"pinning": [rec]}))[0]
    assert expect in line.verdict and line.flag is flagged


def test_one_numa_node_says_placement_does_not_matter(make_record):
    topo = make_record("topo", result={"numa_nodes": [{"os_index": 0, "cpus": [0, 1]}]}, config={})
    (line,) = advice.placement(Evidence({"topology": [topo]}))
    assert line.verdict.startswith("does not matter here") and "one NUMA node" in line.verdict


@pytest.mark.parametrize(
    "result, flagged, verdict",
    [
        ({"matrix": [[20.0, 10.0], [10.0, 20.0]]}, False, NOISE),  # a record without rounds: nothing to judge
        (
            {
                "matrix": [[20.0, 10.0], [10.0, 20.0]],
                "cell_rounds": [
                    [[19.0, 20.0, 21.0], [9.0, 10.0, 11.0]],
                    [[9.5, 10.0, 10.5], [19.5, 20.0, 20.5]],
                ],
            },
            True,
            "below 0.8: flagged",
        ),
        (  # remote and local ranges overlap: no finding, whatever the medians say
            {
                "matrix": [[20.0, 10.0], [10.0, 20.0]],
                "cell_rounds": [
                    [[8.0, 20.0, 21.0], [9.0, 10.0, 22.0]],
                    [[9.5, 10.0, 10.5], [19.5, 20.0, 20.5]],
                ],
            },
            False,
            NOISE,
        ),
    ],
)
def test_remote_bandwidth_below_08_is_flagged_beyond_noise(make_record, result, flagged, verdict):
    topo = make_record("topo", result={"numa_nodes": [{"cpus": [0]}, {"cpus": [1]}]}, config={})
    mat = make_record("numa-matrix", result=result, config={})
    lines = advice.placement(Evidence({"topology": [topo], "placement": [mat]}))
    (eff,) = [x for x in lines if x.topic.startswith("NUMA efficiency")]
    assert eff.flag == flagged and eff.measured.startswith("0.50: remote") and verdict in eff.verdict
    assert ("numactl --localalloc" in eff.fix) == flagged


@pytest.mark.parametrize(
    "avx512, avx2, expect_fix",
    [
        (
            [10.0, 10.2, 10.4, 10.1, 10.3],
            [12.0, 12.2, 12.4, 12.1, 12.3],
            "bandwall stream --kernel dot --isa avx2",
        ),
        ([10.0, 11.0, 12.0, 11.0, 10.5], [10.5, 11.5, 11.5, 10.5, 11.0], ""),  # within noise: no fix
        ([12.0, 12.2, 12.4, 12.1, 12.3], [10.0, 10.2, 10.4, 10.1, 10.3], ""),  # the default wins: no fix
        ([10.0, 10.2, 10.4], [12.0, 12.2, 12.4], ""),  # three rounds: too few to choose
    ],
)
def test_isa_variant_per_kernel(stream_rec, avx512, avx2, expect_fix):
    recs = [
        stream_rec("dot", threads=2, median=m, isa=isa, isa_requested=isa)
        for isa, values in (("avx512", avx512), ("avx2", avx2))
        for m in values
    ]
    (line,) = advice.isa(Evidence({"variants": recs}))
    assert line.fix == expect_fix
    assert line.verdict.startswith("keep the default avx512") is (not expect_fix)


def test_line_round_trips_through_json():
    line = Line("t", "m", "th", "v", "fix", "ev", True, Spread(1.0, 0.5, 2.0, 3, "GB/s"))
    assert Line.from_json(line.to_json()) == line


def _report(make_record, rid, value, digest="0123456789abcdef"):
    rec = make_record(
        "report",
        config={"quick": True, "threads": 2, "sections": [], "command": "bandwall report --quick"},
        result={
            "sections": [],
            "date": "2026-01-02",
            "advice": [Line("cores (triad)", "", "", "", value=value).to_json()],
            "history": [],
        },
        topology_digest=digest,
    )
    if rid is not None:
        rec["id"] = rid
    return rec


@pytest.mark.parametrize(
    "before, now, changed",
    [
        # reports days apart are not paired rounds: a change is shown when the ranges part
        (Spread(20, 19, 21, 4, "GB/s"), Spread(30, 29, 31, 4, "GB/s"), True),
        (Spread(20, 19, 21, 4, "GB/s"), Spread(20.5, 19.5, 21.5, 4, "GB/s"), False),
    ],
)
def test_history_shows_only_changes_beyond_noise(make_record, before, now, changed):
    hist = record.history([Line("cores (triad)", "", "", "", value=now)], [_report(make_record, 7, before)])
    assert ("1.50x" in hist[0]) is changed
    assert NOISE in hist[-1]


def test_history_of_the_same_topology_only(tmp_path, make_record):
    from bandwall.core.store import Store

    with Store(tmp_path / "h.db") as s:
        a = s.add(_report(make_record, None, Spread(1, 1, 1, 3)))
        s.add(_report(make_record, None, Spread(1, 1, 1, 3), digest="ffffffffffffffff"))
        c = s.add(_report(make_record, None, Spread(1, 1, 1, 3)))
        assert [r["id"] for r in record.earlier(s, "0123456789abcdef", None)] == [c, a]
        assert [r["id"] for r in record.earlier(s, "0123456789abcdef", c)] == [a]


def test_every_rule_returns_nothing_without_its_records():
    assert advice.recommend(Evidence({})) == []


@pytest.mark.parametrize(
    "cpu, engine, verdict, fix",
    [
        (
            [20, 19, 21, 20, 20],
            [10, 9, 11, 10, 10],
            "does not pay",
            "leave the copy engine off (the default)",
        ),
        (
            [20, 19, 21, 20, 20],
            [26, 25, 27, 26, 26],
            "pays: triad bandwidth rises from CPU only to engine + CPU (helper engine, strategy split",
            "--strategy split",
        ),
        ([20, 18, 22, 20, 20], [20.5, 17, 23, 20, 21], NOISE, ""),
    ],
)
def test_copy_engine_rule(stream_rec, make_record, cpu, engine, verdict, fix):
    plain = stream_rec(median=sorted(cpu)[2], values=cpu)
    piped = stream_rec(median=sorted(engine)[2], values=engine, engine="helper", strategy="split")
    sweep = make_record("engine-sweep", result={"rows": []}, config={"kernels": ["triad"]})
    (line,) = advice.copy_engine(Evidence({"engine": [plain, piped, sweep]}))
    assert verdict in line.verdict and fix in line.fix and (fix != "" or line.fix == "")
    (c,) = line.claims  # the engine's median against the CPU's, as the card shows them
    assert c.direction == {"does not pay": "falls", NOISE: NOISE}.get(verdict, "rises")
    assert (c.start.value, c.end.value) == (sorted(cpu)[2], sorted(engine)[2])
    assert line.value.median == c.end.value


def test_stencil_below_08_of_its_bound_is_flagged(make_record):
    def run(init, mp):
        roof = {
            "memory_bound_mpoints_per_s": 1000.0,
            "port_bound_mpoints_per_s": 300.0,
            "stream_best_GBps": 16.0,
        }
        return make_record(
            "iso3dfd",
            result={"mpoints_per_s": mp, "roofline": roof},
            config={"init": init, "schedule": "static"},
        )

    recs = [run("first-touch", v) for v in (150, 160, 170, 160, 160)]
    recs += [run("serial", v) for v in (100, 105, 110, 105, 105)]
    (line,) = advice.stencil(Evidence({"iso3dfd": recs}))
    assert line.flag and "53% of its tightest bound (in-core (ports))" in line.verdict
    # the default variant stands: only the blocks are a fix
    assert line.verdict.startswith("keep first-touch initialisation, static schedule (the default)")
    assert line.fix == "bandwall iso3dfd --blocks search"


def _ablation(make_record, rounds: dict, nodes: int = 1):
    roof = {"memory_bound_mpoints_per_s": 1000.0, "port_bound_mpoints_per_s": 900.0}
    recs = [
        make_record(
            "iso3dfd",
            result={"mpoints_per_s": v, "roofline": roof},
            config={"init": init, "schedule": schedule},
        )
        for (init, schedule), values in rounds.items()
        for v in values
    ]
    topo = make_record("topo", result={"numa_nodes": [{"cpus": [n]} for n in range(nodes)]}, config={})
    return Evidence({"iso3dfd": recs, "topology": [topo]})


@pytest.mark.parametrize(
    "rounds, nodes, fix",
    [
        # serial ahead within noise, then beyond it: on one node never recommended (the NUMA guide)
        (
            {
                ("first-touch", "static"): [800, 790, 810, 800, 805],
                ("serial", "static"): [805, 800, 795, 810, 800],
            },
            1,
            "",
        ),
        (
            {
                ("first-touch", "static"): [800, 790, 810, 800, 805],
                ("serial", "static"): [900, 890, 910, 900, 905],
            },
            1,
            "",
        ),
        # two NUMA nodes: a variant faster beyond noise is the measurement's finding
        (
            {
                ("first-touch", "static"): [800, 790, 810, 800, 805],
                ("first-touch", "dynamic"): [900, 890, 910, 900, 905],
            },
            2,
            "bandwall iso3dfd --init first-touch --schedule dynamic",
        ),
        # dynamic within noise of static on two nodes: the default stands
        (
            {
                ("first-touch", "static"): [800, 790, 810, 800, 805],
                ("first-touch", "dynamic"): [805, 780, 812, 801, 800],
            },
            2,
            "",
        ),
    ],
)
def test_stencil_recommends_a_variant_only_beyond_noise_and_never_what_numa_warns_against(
    make_record, rounds, nodes, fix
):
    (line,) = advice.stencil(_ablation(make_record, rounds, nodes))
    assert line.fix == fix
    # the same records give the same advice, run after run
    assert [advice.stencil(_ablation(make_record, rounds, nodes))[0].fix for _ in range(3)] == [fix] * 3


def test_stencil_held_by_its_l1_misses_says_so(make_record):
    roof = {
        "memory_bound_mpoints_per_s": 1000.0,
        "port_bound_mpoints_per_s": 700.0,
        "ecm_mpoints_per_s": 240.0,
        "l1_fill_bytes_per_point": 102.0,
        "l1_fill_bound_mpoints_per_s": 365.0,
        "l2_GBps": 37.2,
        "y_window_in_l1": False,
    }
    recs = [
        make_record(
            "iso3dfd",
            result={"mpoints_per_s": v, "roofline": roof},
            config={"init": "first-touch", "schedule": "static"},
        )
        for v in (210, 220, 230, 220, 220)
    ]
    (line,) = advice.stencil(Evidence({"iso3dfd": recs}))
    assert "92% of its tightest bound (ports + L2-to-L1 fills)" in line.verdict
    assert "102 bytes a point come from L2 into L1" in line.verdict
    assert "do not stay in L1" in line.verdict
    assert not line.flag
    roof.update(ecm_levels="ports + L2-to-L1 fills + memory")
    (line,) = advice.stencil(Evidence({"iso3dfd": recs}))
    assert "92% of its tightest bound (ports + L2-to-L1 fills + memory)" in line.verdict
    assert "102 bytes a point come from L2 into L1" in line.verdict


def test_rails_without_a_rail_model_says_how_to_get_one(make_record):
    prof = make_record("mpiprof", result={"calls": []}, config={"program": "./app", "ranks": 4})
    (line,) = advice.rails(Evidence({"mpiprof": [prof]}))
    assert line.fix == "bandwall mpi-pingpong && bandwall mpi-rails"


@pytest.mark.parametrize(
    "all_noise, knee_noise, says, fix",
    [
        # six interleaved rounds, every one faster on the knee's cores: pays by the decision rule
        (
            [5.0, 6.0, 7.0, 5.5, 6.5, 6.0],
            [8.0, 9.0, 10.0, 8.5, 9.5, 9.0],
            "free pays beside the noise",
            "--threads 1",
        ),
        ([5.0, 6.0, 9.0, 5.5, 9.5, 6.0], [8.0, 9.0, 10.0, 5.0, 9.5, 9.0], NOISE, ""),
        # ranges apart, but three rounds are too few for the rule's confidence
        ([5.0, 6.0, 7.0], [8.0, 9.0, 10.0], NOISE, ""),
    ],
)
def test_a_stored_interference_verdict_is_a_recommendation(all_noise, knee_noise, says, fix):
    from bandwall.interference import verdict as v

    def spread(name, xs):
        return {"case": name, "values": xs, "median": statistics.median(xs), "min": min(xs), "max": max(xs)}

    cases = [spread(v.ALL_ALONE, [9.0] * len(all_noise)), spread(v.KNEE_ALONE, [8.0] * len(all_noise))]
    cases += [spread(v.ALL_NOISE, all_noise), spread(v.KNEE_NOISE, knee_noise)]
    config = {
        "higher_is_better": True,
        "cores_knee": 1,
        "cores_all": 2,
        "surplus_cpus": "1",
        "noise": "memory",
    }
    rec = {"tool": "interference", "id": 7, "config": config, "result": {"unit": "GB/s", "cases": cases}}
    (line,) = advice.surplus_under_noise(Evidence({advice.STORED: [rec]}))
    assert says in line.verdict and "#7" in line.evidence and "memory noise" in line.evidence
    (c,) = line.claims
    assert c.direction == ("rises" if fix else NOISE) and line.value.median == c.end.value
    assert (fix in line.fix) if fix else line.fix == ""


@pytest.mark.parametrize(
    "pays, ran, how, fix",
    [
        (True, 1, "model", "bandwall iso3dfd --time-block 4"),  # the cores outrun DRAM, nothing raced
        (True, 1, "user", "bandwall iso3dfd --time-block 4"),  # --time-block 1 given: sweeps were not tried
        (True, 4, "race", ""),  # already sweeping
        (False, 1, "model", ""),  # memory is not what holds it: no fix, the reason is said
        # the run's own race (now, beside the model, or kept) kept step by step: never contradicted
        (True, 1, "race", ""),
        (True, 1, "race and model", ""),
        (True, 1, "cached", ""),
        (True, 1, "table", ""),  # the table's race on this CPU kept step by step
    ],
)
def test_stencil_says_where_temporal_blocking_pays(make_record, pays, ran, how, fix):
    why = "64 cores outrun the memory" if pays else "2 cores do not outrun the memory"
    proj = {"pays": pays, "why": why, "depths": [{"depth": 1}, {"depth": 4}]}
    roof = {"memory_bound_mpoints_per_s": 1000.0, "port_bound_mpoints_per_s": 900.0, "node_projection": proj}
    block = {"depth": ran, "how": how, "why": "sweeps of 4 within noise of single steps"}
    recs = [
        make_record(
            "iso3dfd",
            result={"mpoints_per_s": v, "roofline": roof},
            config={"init": "first-touch", "schedule": "static", "time_block": block},
        )
        for v in (850, 860, 870, 860, 860)
    ]
    (line,) = advice.stencil(Evidence({"iso3dfd": recs}))
    if how in ("race", "race and model", "cached", "table") and ran == 1:
        who = "the table of measured choices" if how == "table" else "the run's own race"
        assert f"{who} kept step by step (sweeps of 4 within noise" in line.verdict
        assert why not in line.verdict
    else:
        assert f"temporal blocking: {why}" in line.verdict
    assert line.fix == fix


@pytest.mark.parametrize(
    "level, tight, bound",
    [(None, "memory", 2900.0), ("L3", "L3", 4300.0), ("L2", "in-core (ports)", 9100.0)],
)
def test_stencil_whose_arrays_a_cache_holds_is_held_to_it_not_memory(make_record, level, tight, bound):
    """A run whose arrays fit in a cache passes memory's bound (it reads them from there): the report
    holds it to L3's roof when L3 holds them, and to the in-core roofs when its cores' L2s do."""

    def run(mp):
        roof = {
            "memory_bound_mpoints_per_s": 2900.0,
            "llc_bound_mpoints_per_s": 4300.0,
            "port_bound_mpoints_per_s": 9100.0,
            "stream_best_GBps": 46.4,
            **({"arrays_in_cache": {"level": level, "note": "the arrays fit"}} if level else {}),
        }
        return make_record(
            "iso3dfd",
            result={"mpoints_per_s": mp, "roofline": roof},
            config={"init": "first-touch", "schedule": "static"},
        )

    (line,) = advice.stencil(Evidence({"iso3dfd": [run(v) for v in (3900, 3950, 3850, 3900, 3920)]}))
    assert f"{3900 / bound:.0%} of its tightest bound ({tight})" in line.verdict
