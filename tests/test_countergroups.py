"""Counter groups resolved against recorded event lists of real machines and fed recorded counts:
the group files, the event-set choice and the metric formulas, apart from any counting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bandwall.counters import groups as countergroups

FIXTURES = Path(__file__).parent / "fixtures" / "counters"


def listing(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize("name", countergroups.group_names())
def test_every_group_file_parses_with_metrics_over_its_own_aliases(name):
    group = countergroups.load(name)
    assert group.short and group.eventsets
    for es in group.eventsets:
        assert es.events and es.metrics


def test_the_groups_exist():
    assert {"MEM", "NUMA", "CACHE", "FLOPS_DP", "DEFAULT"} <= set(countergroups.group_names())


@pytest.mark.parametrize(
    ("fixture", "group", "eventset"),
    [
        ("skx_events.json", "MEM", "skylake-sp"),
        ("skx_events.json", "NUMA", "skylake-sp"),
        ("skx_events.json", "FLOPS_DP", "skylake-sp"),
        ("skx_events.json", "CACHE", "intel"),
        ("zen1_events.json", "NUMA", "zen1"),
        ("zen1_events.json", "FLOPS_DP", "zen"),
        ("zen1_events.json", "CACHE", "amd"),
        ("zen1_events.json", "MEM", None),
        ("zen1_events.json", "DEFAULT", "papi-presets-perf-cache-misses"),
        ("zen2_events.json", "NUMA", "zen2"),
        ("zen2_events.json", "MEM", None),
        ("zen2_events.json", "DEFAULT", "papi-presets-perf-cache-misses"),
        ("zen3_events.json", "NUMA", "zen3"),
        ("zen3_events.json", "MEM", None),
        ("zen3_events.json", "DEFAULT", "papi-presets-perf-cache-misses"),
        ("zen4_events.json", "NUMA", "zen4-zen5"),
        ("zen4_events.json", "MEM", None),
        ("zen4_events.json", "DEFAULT", "perf-generic"),  # PAPI 7.0 has no Zen 4 presets
        ("zen5_events.json", "NUMA", "zen4-zen5"),
        ("zen5_events.json", "MEM", None),
        ("zen5_events.json", "DEFAULT", "perf-generic"),
    ],
)
def test_each_machine_gets_the_event_set_its_papi_lists(fixture, group, eventset):
    es, reason = countergroups.resolve(countergroups.load(group), listing(fixture))
    assert (es.label if es else None) == eventset
    assert bool(reason) == (eventset is None)


def test_a_group_no_event_set_fits_makes_every_metric_unavailable_with_the_reason():
    group = countergroups.load("MEM")
    es, reason = countergroups.resolve(group, listing("zen1_events.json"))
    hw = countergroups.hardware_fields(group, es, reason, {}, 1.0, [0, 8])
    assert set(hw) == {f"{m}[socket{s}]" for m in group.metric_names() for s in (0, 1)}
    for value in hw.values():
        assert value.startswith("unavailable: PAPI lists no event set of group MEM")
        assert "skylake-sp lacks skx_unc_imc0::UNC_M_CAS_COUNT:RD" in value


def test_skylake_sp_memory_bandwidth_from_recorded_imc_counts():
    rec = json.loads((FIXTURES / "skx_cl6420_mem_counts.json").read_text())
    group = countergroups.load("MEM")
    es, _ = countergroups.resolve(group, listing("skx_events.json"))
    names = countergroups.event_names(group, es, rec["socket_cpus"])
    assert set(names.values()) == set(rec["counts"])
    hw = countergroups.hardware_fields(group, es, "", rec["counts"], rec["time_s"], rec["socket_cpus"])
    reads = sum(v for k, v in rec["counts"].items() if k.endswith(":RD:cpu=0"))
    writes = sum(v for k, v in rec["counts"].items() if k.endswith(":WR:cpu=0"))
    assert (reads, writes) == (265658357, 265540610)  # the TOTAL lines of the recording
    assert hw["read_GB[socket0]"] == pytest.approx(64 * reads / 1e9)
    assert hw["write_GBps[socket0]"] == pytest.approx(64 * writes / 1e9 / rec["time_s"])
    assert hw["GBps[socket0]"] == pytest.approx(hw["read_GBps[socket0]"] + hw["write_GBps[socket0]"])
    # The recording's own physics: every insertion read one line and wrote one back.
    lines = rec["threads"] * rec["lines_per_thread"]
    assert reads == pytest.approx(lines, rel=0.02)
    assert writes == pytest.approx(lines, rel=0.02)
    assert 30 < hw["read_GBps[socket0]"] < 64  # under one socket's 6 x 21.3 GB/s DDR4-2666 peak


def test_per_socket_events_carry_the_first_cpu_of_each_socket():
    group = countergroups.load("MEM")
    es, _ = countergroups.resolve(group, listing("skx_events.json"))
    names = countergroups.event_names(group, es, [0, 16])
    assert names[("RD0", 1)] == "skx_unc_imc0::UNC_M_CAS_COUNT:RD:cpu=16"
    assert len(names) == 2 * len(es.events)


def test_zen_flops_and_numa_metrics_from_counts():
    # Counts constructed for the test (no recording of a Zen machine's counts): 1e9 flops from
    # multiply-adds and 5e8 from adds in 0.5 s; 3 local DRAM fills for every remote one.
    zen = listing("zen1_events.json")
    flops = countergroups.load("FLOPS_DP")
    es, _ = countergroups.resolve(flops, zen)
    counts = {
        "RETIRED_SSE_AVX_OPERATIONS:DP_MULT_ADD_FLOPS": 1_000_000_000,
        "RETIRED_SSE_AVX_OPERATIONS:DP_ADD_SUB_FLOPS": 500_000_000,
        "RETIRED_SSE_AVX_OPERATIONS:DP_MULT_FLOPS": 0,
        "RETIRED_SSE_AVX_OPERATIONS:DP_DIV_FLOPS": 0,
    }
    hw = countergroups.hardware_fields(flops, es, "", counts, 0.5, [])
    assert hw["GFlops"] == pytest.approx(3.0)
    numa = countergroups.load("NUMA")
    es, _ = countergroups.resolve(numa, zen)
    hw = countergroups.hardware_fields(
        numa,
        es,
        "",
        {
            "HARDWARE_PREFETCH_DATA_CACHE_FILLS:LS_MABRESP_LCL_DRAM": 3_000_000,
            "HARDWARE_PREFETCH_DATA_CACHE_FILLS:LS_MABRESP_LCL_RMT_DRAM": 1_000_000,
        },
        1.0,
        [],
    )
    assert hw["remote_share"] == pytest.approx(0.25)
    assert hw["local_GB"] == pytest.approx(0.192)


# Counts constructed for the test (no Zen machine's counts were recorded): 3 local DRAM fills for
# every remote one, 1.2e8 lines in all; on Zen 2 split between demand and L1-prefetch fills.
ZEN_NUMA_COUNTS = [
    (
        "zen2_events.json",
        {
            "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM": 60_000_000,
            "HARDWARE_PREFETCH_DATA_CACHE_FILLS:LS_MABRESP_LCL_DRAM": 30_000_000,
            "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_RMT_DRAM": 20_000_000,
            "HARDWARE_PREFETCH_DATA_CACHE_FILLS:LS_MABRESP_RMT_DRAM": 10_000_000,
        },
    ),
    (
        "zen3_events.json",
        {
            "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL": 90_000_000,
            "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_RMT": 30_000_000,
        },
    ),
    *(
        (
            fixture,
            {
                "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR": 90_000_000,
                "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_FAR": 30_000_000,
            },
        )
        for fixture in ("zen4_events.json", "zen5_events.json")
    ),
]


@pytest.mark.parametrize("fixture,counts", ZEN_NUMA_COUNTS, ids=[f for f, _ in ZEN_NUMA_COUNTS])
def test_zen_numa_local_and_remote_dram_from_counts(fixture, counts):
    group = countergroups.load("NUMA")
    es, _ = countergroups.resolve(group, listing(fixture))
    names = countergroups.event_names(group, es, [])
    assert set(names.values()) == set(counts)  # exactly these events are counted
    assert set(counts) <= countergroups.listed_names(listing(fixture))
    hw = countergroups.hardware_fields(group, es, "", counts, 2.0, [])
    assert hw["local_GB"] == pytest.approx(64 * 90_000_000 / 1e9)
    assert hw["remote_GB"] == pytest.approx(64 * 30_000_000 / 1e9)
    assert hw["remote_share"] == pytest.approx(0.25)
    assert {k: hw[k] for k in counts} == counts


def test_zen_numa_event_names_are_the_generations_own():
    """Each generation spells the fill source its own way; a set for one never matches another."""
    numa = countergroups.load("NUMA")
    sets = {es.label: set(es.events.values()) for es in numa.eventsets}
    for fixture, label in (
        ("zen2_events.json", "zen2"),
        ("zen3_events.json", "zen3"),
        ("zen4_events.json", "zen4-zen5"),
        ("zen5_events.json", "zen4-zen5"),
    ):
        names = countergroups.listed_names(listing(fixture))
        fits = [lab for lab, events in sets.items() if events <= names]
        assert fits == [label], (fixture, fits)


def test_mem_on_zen_says_which_event_each_set_lacks():
    group = countergroups.load("MEM")
    for fixture in ("zen2_events.json", "zen3_events.json", "zen4_events.json", "zen5_events.json"):
        es, reason = countergroups.resolve(group, listing(fixture))
        assert es is None
        assert "skylake-sp lacks skx_unc_imc0::UNC_M_CAS_COUNT:RD" in reason
        assert "broadwell-ep lacks bdx_unc_imc0::UNC_M_CAS_COUNT:RD" in reason


# perf stat's hardware events as counted by DEFAULT, constructed: 2e9 cycles, 3e9 instructions,
# 5e8 branches of which 1e7 mispredicted, 3e6 cache misses.
DEFAULT_COUNTS = {
    "CYC": 2_000_000_000,
    "INS": 3_000_000_000,
    "BR": 500_000_000,
    "BRM": 10_000_000,
    "CM": 3_000_000,
}


@pytest.mark.parametrize("fixture", ["zen1_events.json", "zen3_events.json", "zen4_events.json"])
def test_default_group_metrics_from_counts(fixture):
    group = countergroups.load("DEFAULT")
    es, _ = countergroups.resolve(group, listing(fixture))
    counts = {es.events[alias]: n for alias, n in DEFAULT_COUNTS.items()}
    hw = countergroups.hardware_fields(group, es, "", counts, 1.0, [])
    assert hw["instructions_per_cycle"] == pytest.approx(1.5)
    assert hw["branch_miss_share"] == pytest.approx(0.02)
    assert hw["cache_misses_per_kinst"] == pytest.approx(1.0)


def test_default_group_without_a_pmu_says_why_for_every_event_and_metric():
    # What bandwall-counters answers for each event on a machine without a PMU (a KVM guest).
    group = countergroups.load("DEFAULT")
    es, _ = countergroups.resolve(group, listing("zen4_events.json"))
    why = (
        "unavailable: PAPI_set_opt(PAPI_INHERIT): Event does not exist (perf_event_open of a hardware "
        "event (instructions): No such file or directory, no hardware PMU is exposed here)"
    )
    hw = countergroups.hardware_fields(group, es, "", {ev: why for ev in es.events.values()}, 1.0, [])
    assert set(hw) == set(es.events.values()) | set(es.metrics)
    for name in es.events.values():
        assert hw[name] == why
    assert hw["instructions_per_cycle"].startswith("unavailable: perf::PERF_COUNT_HW_")
    assert all("no hardware PMU is exposed here" in hw[m] for m in es.metrics)


def test_an_event_papi_refused_makes_the_metrics_that_need_it_unavailable_with_its_reason():
    group = countergroups.load("CACHE")
    es, _ = countergroups.resolve(group, listing("zen1_events.json"))
    refused = (
        "unavailable: PAPI_start: Event exists, but cannot be counted due to counter resource limitations"
    )
    counts = {"PAPI_L1_DCA": 10_000, "PAPI_L2_DCM": refused, "PAPI_TOT_INS": 1_000_000}
    hw = countergroups.hardware_fields(group, es, "", counts, 1.0, [])
    assert hw["l1_accesses_per_kinst"] == pytest.approx(10.0)
    assert hw["l2_misses_per_kinst"] == f"unavailable: PAPI_L2_DCM: {refused.removeprefix('unavailable: ')}"
    assert hw["PAPI_L2_DCM"] == refused


def test_a_zero_denominator_is_unavailable_not_a_crash():
    group = countergroups.load("NUMA")
    es, _ = countergroups.resolve(group, listing("skx_events.json"))
    hw = countergroups.hardware_fields(
        group,
        es,
        "",
        {"MEM_LOAD_L3_MISS_RETIRED:LOCAL_DRAM": 0, "MEM_LOAD_L3_MISS_RETIRED:REMOTE_DRAM": 0},
        1.0,
        [],
    )
    assert hw["remote_share"].startswith("unavailable:") and "divides by zero" in hw["remote_share"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("SHORT x\nMETRICS\na 1", "METRICS before any EVENTSET"),
        ("SHORT x\nEVENTSET a\nX PAPI_TOT_INS\nMETRICS\nm Y / 2", "names 'Y'"),
        ("SHORT x\nEVENTSET a\nX PAPI_TOT_INS\nMETRICS\nm __import__('os')", "only + - * /"),
        ("SHORT x\nEVENTSET a\nX PAPI_TOT_INS\nMETRICS\nm X ** 2", "only + - * /"),
        ("SHORT x\nSCOPE node", "SCOPE must be one of"),
        ("SHORT x", "no EVENTSET"),
    ],
)
def test_malformed_group_files_are_refused_with_where(text, fragment):
    with pytest.raises(ValueError, match="group T") as e:
        countergroups.parse(text, "T")
    assert fragment in str(e.value)
