"""ISO3DFD's temporal blocking through the executable and the front end: sweeps of every depth give
the step-by-step wavefield, auto says how it chose and counts its race's steps, the view names the
depth; and the projection to the whole node that says where sweeps would pay."""

from __future__ import annotations

import json
import os
import re
import statistics
from pathlib import Path

import pytest

from bandwall.core import decide
from bandwall.kernels import roofs
from test_isa_choice import machine, topo_digest  # noqa: F401 (machine: a fixture)
from test_iso3dfd import SMALL, THREADS, offered_isas, tool_record

TABLE = Path(__file__).resolve().parent.parent / "native" / "common" / "isa_choices.json"


@pytest.fixture(autouse=True)
def no_table_sweeps(tmp_path, monkeypatch):
    """The table of measured choices without its sweeps entries: where a CPU's entry says sweeps pay
    (or do not) at a radius, auto takes that without a race, and these tests are about the race and
    what it keeps (the table's own path: test_iso3dfd_orders.py)."""
    table = json.loads(TABLE.read_text())
    for row in table["rows"]:
        for entry in row.get("kernels", {}).values():
            entry.pop("sweeps", None)
    path = tmp_path / "choices-without-sweeps.json"
    path.write_text(json.dumps(table))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(path))


@pytest.mark.parametrize("threads", [1, THREADS])
def test_time_blocks_leave_the_wavefield_exact(threads):
    """Sweeps of 1, 2 and 3 steps (7 steps: not a multiple of either) give the step-by-step
    wavefield: the same norm to the last bit, and --verify's reference agrees; the record says which
    depth ran and how it was chosen, and counts every step."""
    norms = {}
    for depth in (1, 2, 3):
        grid = [37, 29, 57]  # slabs of 20 planes at 2 threads: depth 3 at most
        rec = tool_record(*grid, 7, 13, 7, 9, "compact", threads, "--time-block", depth, "--verify")
        tb = rec["config"]["time_block"]
        assert (tb["depth"], tb["how"], tb["requested"]) == (depth, "user", depth)
        assert rec["result"]["time_block"] == depth and rec["result"]["steps"] == 7
        assert rec["validation"]["checked"] and rec["validation"]["passed"] is True
        model = rec["result"]["traffic_model"]["time_block"]
        assert model["depth"] == depth and model["memory_bytes_per_point"] > 0
        if depth > 1:
            assert rec["result"]["bytes_per_point"] == model["memory_bytes_per_point"]
        norms[depth] = rec["result"]["norm"]
    assert norms[1] == norms[2] == norms[3]


@pytest.mark.parametrize("team", ["slabs", "shared"])
def test_the_team_sweeping_together_leaves_the_wavefield_exact(team):
    """--sweep-team: a slab a thread, or the team on one wavefront (any depth: 5 here, deeper than
    the slabs of 2 threads allow); the same norm as step by step, and the record says who swept."""
    grid = [37, 29, 57, 7, 13, 7, 9, "compact", THREADS]
    step = tool_record(*grid, "--time-block", 1)
    depth = 5 if team == "shared" else 2
    rec = tool_record(*grid, "--time-block", depth, "--sweep-team", team, "--verify")
    tb, model = rec["config"]["time_block"], rec["result"]["traffic_model"]["time_block"]
    assert tb["team_requested"] == team and tb["depth"] == depth
    # one thread has no team to share with
    assert model["team"] == (team if THREADS > 1 else "slabs")
    assert rec["validation"]["passed"] is True
    assert rec["result"]["norm"] == step["result"]["norm"]


# The caches the model reads, held fixed (BANDWALL_CACHES) so that each branch of auto runs on any
# CPU: a Zen guest's (the grids below race) and an L2 that holds them (the model keeps depth 1).
ZEN_CACHES = "L2=1M,L3=32M"
HUGE_L2 = "L2=64M,L3=480M"


@pytest.mark.parametrize(
    ("grid", "caches", "races"),
    [
        ((37, 29, 57, 40, 13, 7, 9), ZEN_CACHES, True),
        # 6 MiB of arrays: more than half the L2 of any CPU met, so the model proposes a depth to race
        ((80, 80, 80, 40, "auto", "auto", "auto"), ZEN_CACHES, True),
        ((80, 80, 80, 40, "auto", "auto", "auto"), HUGE_L2, False),
    ],
)
def test_time_block_auto_says_how_and_counts_its_race(grid, caches, races, monkeypatch):
    """auto: the model's depth 1 (the grid fits the L2), or a race of single steps against sweeps
    whose steps the run counts; whichever it was, the record says why, and the answer is the
    step-by-step one."""
    monkeypatch.setenv("BANDWALL_CACHES", caches)
    step = tool_record(*grid, "compact", 1, "--time-block", 1)
    rec = tool_record(*grid, "compact", 1, "--time-block", "auto")
    tb = rec["config"]["time_block"]
    assert rec["result"]["traffic_model"]["caches_forced"] == f"BANDWALL_CACHES={caches}"
    assert tb["requested"] == "auto" and tb["how"] in ("model", "race", "race and model") and tb["why"]
    assert "proposal" in tb and tb["cache_key"].endswith(caches)
    race = tb.get("race_steps", 0)
    assert rec["result"]["steps"] + race == 40
    # the whole run: the race's steps and seconds with the timed ones (and any knob race's)
    for r in (rec, step):
        run, timed = r["result"]["run"], r["result"]
        assert run["steps"] == 40 and run["settling_steps"] == 40 - timed["steps"]
        assert run["seconds"] >= timed["time_s"] and run["settling_seconds"] >= 0
        points = (grid[0] - 16) * (grid[1] - 16) * (grid[2] - 16)
        assert run["mpoints_per_s"] == pytest.approx(points * 40 / run["seconds"] / 1e6, rel=1e-9)
    assert rec["result"]["run"]["settling_steps"] >= race
    assert (tb["how"] != "model") == races
    if not races:
        assert tb["depth"] == 1 and race == 0 and "fit" in tb["why"]
    else:
        rounds = tb["race"]["rule"]["rounds_run"]
        added = tb["race_rounds_added"]
        rule = decide.rule()
        assert rounds == rule.rounds + added and added in (0, rule.rounds_when_unsettled - rule.rounds)
        (raced,) = [name for name in tb["race"]["rates"] if name != "1"]
        # a warm-up step, then per round a sweep and the single steps the run affords beside it
        singles = tb["race_single_steps"]
        assert 1 <= singles <= int(raced)
        assert race == 1 + (int(raced) + singles) * rounds <= 40 * 3 // 4
        (one,) = [p for p in tb["calibrated"]["predicted"] if p["depth"] == 1]
        assert one["mpoints_per_s"] == pytest.approx(statistics.median(tb["race"]["rates"]["1"]))
        # the extra rounds only when the first left it unsettled and all of them fit in the run
        first = decide.ratio_interval(tb["race"]["rates"][raced][:5], tb["race"]["rates"]["1"][:5], rule)
        fit = 1 + rule.rounds_when_unsettled * (int(raced) + singles) <= 40 * 3 // 4
        assert (added > 0) == (decide.unsettled(first, rule) and fit)
        # deeper than raced only when the race chose its sweeps and the calibrated model's best is deeper
        # and beyond the margin over their measured rate
        cal, chosen = tb["calibrated"], tb["race"]["chosen"]
        measured = statistics.median(tb["race"]["rates"][raced])
        deeper = (
            chosen == raced
            and cal["best_depth"] > int(raced)
            and cal["best_mpoints_per_s"] > measured * (1 + rule.margin)
        )
        assert (tb["how"] == "race and model") == deeper
        if deeper:
            assert tb["depth"] == cal["best_depth"] == tb["deeper"]["to"]
            assert tb["deeper"]["measured_mpoints_per_s"] == pytest.approx(measured)
        else:
            assert tb["depth"] == int(chosen) and "deeper" not in tb
    assert rec["result"]["norm"] == step["result"]["norm"]


# 6 MiB of arrays, 40 steps, one thread: a run that races (unless a cached race settles it); the
# variant named, so that the run's key in the cache of races does not follow a race of the variants
# that a CPU without a row in the table of measured choices may settle one way or the other
RACED = (80, 80, 80, 40, "auto", "auto", "auto", "compact", 1, "--isa", offered_isas()[0])


def test_a_settled_race_is_kept_for_the_next_run_like_it(machine, monkeypatch):  # noqa: F811
    """A race settled beyond noise (either way) is kept in the cache folder under the run's key (an
    undecided one too, whose rounds the next race like it decides on with its own); the next run like
    a settled one takes depth 1 without racing, and sweeps once a second race in a row has settled
    on sweeps (the entry counts them), every step timed and the wavefield the same; --time-block
    measure races again. An entry within noise, of another CPU, of another team, deeper than 64,
    raced shallower than this run would race, of sweeps one race settled on, or with any field it
    needs of the wrong type is not taken; spoilt fields it does not need are left out. A race run
    under other cache sizes is another race."""
    monkeypatch.setenv("BANDWALL_CACHES", ZEN_CACHES)  # the model proposes sweeps: the first run races
    cache = Path(os.environ["BANDWALL_CACHE_DIR"])
    first = tool_record(*RACED, "--time-block", "auto")
    tb = first["config"]["time_block"]
    assert tb["how"] != "model" and "race_steps" in tb
    key = tb["cache_key"]
    files = list(cache.glob("time-blocks-*.json"))
    settled = tb["how"] != "model" and tb["race"]["comparisons"][0]["verdict"] in ("faster", "slower")
    assert files and tb["source"]["cached"] == settled
    entry = json.loads(files[0].read_text())["choices"][key]
    assert entry["decisive"] == settled and entry["runs"] == 1
    if not settled:  # undecided: its rounds are decided on again with the next race's
        rounds = len(tb["race_rates"] if "race_rates" in tb else entry["race"]["rates"]["1"])
        again = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
        assert again["how"] != "cached" and again["pooled"]["runs"] == 2
        assert again["pooled"]["rounds"] == rounds + again["pooled"]["this_run_rounds"]
        assert len(again["race"]["rates"]["1"]) == again["pooled"]["rounds"]
    if settled:
        kept = json.loads(files[0].read_text())["choices"][key]
        assert kept["races"] == 1 and tb["source"]["races_in_a_row"] == 1
        again = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
        if tb["depth"] == 1:
            assert (again["how"], again["depth"]) == ("cached", 1) and "race_steps" not in again
        else:  # sweeps one race settled on: raced again, and kept when that race settles on sweeps too
            assert again["how"] != "cached" and "race_steps" in again
            assert again["kept_unconfirmed"]["depth"] == tb["depth"]
            now = json.loads(files[0].read_text())["choices"].get(key)
            if again["depth"] > 1 and again.get("source", {}).get("cached"):
                assert now["races"] == 2
                third = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
                assert (third["how"], third["depth"]) == ("cached", again["depth"])
            else:
                assert now is None or (now["depth"], now["races"]) == (1, 1)
        # other cache sizes: another key, so the kept race is not taken
        monkeypatch.setenv("BANDWALL_CACHES", "L2=768K,L3=32M")
        other = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
        assert other["cache_key"] != key and other["how"] != "cached"
        monkeypatch.setenv("BANDWALL_CACHES", ZEN_CACHES)
    path = files[0] if files else cache / f"time-blocks-{topo_digest()}.json"
    cache.mkdir(parents=True, exist_ok=True)
    entry = {
        "depth": 2,
        "team": "slabs",
        "raced": 4,
        "decisive": True,
        "races": 2,
        "cpu": machine["cpu_key"],
        "why": "a test's entry",
    }
    path.write_text(json.dumps({"choices": {key: entry}}))
    rec = tool_record(*RACED, "--time-block", "auto")
    cached = rec["config"]["time_block"]
    assert (cached["how"], cached["depth"], cached["source"]["file"]) == ("cached", 2, str(path))
    assert "a test's entry" in cached["why"] and "race_steps" not in cached
    assert rec["result"]["steps"] == 40 and rec["result"]["time_block"] == 2
    assert rec["result"]["norm"] == tool_record(*RACED, "--time-block", 1)["result"]["norm"]
    measured = tool_record(*RACED, "--time-block", "measure")["config"]["time_block"]
    assert measured["requested"] == "measure" and measured["how"] != "cached"
    # fields a hand could spoil that the entry does not need: taken, without them
    path.write_text(json.dumps({"choices": {key: {**entry, "measured": 20260101, "why": None, "race": {}}}}))
    spoilt = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
    assert spoilt["how"] == "cached" and "cached_race" not in spoilt
    # fields it needs, spoilt or not fitting this run: not taken, and the run races or keeps depth 1
    for change in (
        {"decisive": False},
        {"decisive": "yes"},
        {"cpu": "another CPU"},
        {"cpu": None},
        {"team": "all of them"},
        {"team": 2},
        {"depth": 65},
        {"depth": 2**32 + 2},
        {"depth": "2"},
        {"raced": 0},  # a race shallower than this run's would be (or none)
        {"races": 1},  # sweeps one race settled on
        {"races": "2"},  # read as one race
    ):
        path.write_text(json.dumps({"choices": {key: {**entry, **change}}}))
        assert tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]["how"] != "cached", change
    path.write_text(json.dumps({"choices": {key: {k: v for k, v in entry.items() if k != "raced"}}}))
    assert tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]["how"] != "cached"


@pytest.mark.parametrize(("singles", "contradicted"), [([1e9, 2e9], True), ([1e-3, 2e-3], False)])
def test_a_kept_depth_contradicted_by_the_run_is_forgotten(machine, monkeypatch, singles, contradicted):  # noqa: F811
    """A run that takes a kept depth checks it against the race that kept it: when every timed call
    ran slower than every single step of that race, the record says so and the depth is forgotten
    (the next run races again); otherwise it stays. The kept race's rates are set far above and far
    below any rate a run reaches, so the outcome does not depend on this machine's speed."""
    monkeypatch.setenv("BANDWALL_CACHES", ZEN_CACHES)
    key = tool_record(*RACED, "--time-block", 1)["config"]["time_block"].get("cache_key")
    if key is None:  # a run given its depth has no key: ask a racing run for it
        key = tool_record(*RACED, "--time-block", "measure")["config"]["time_block"]["cache_key"]
    cache = Path(os.environ["BANDWALL_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"time-blocks-{topo_digest()}.json"
    race = {"default": "1", "chosen": "2", "decisive": True, "why": "a test's race", "rates": {"1": singles}}
    entry = {
        "depth": 2,
        "team": "slabs",
        "raced": 64,
        "decisive": True,
        "races": 2,
        "cpu": machine["cpu_key"],
        "why": "a test's entry",
        "race": race,
    }
    path.write_text(json.dumps({"choices": {key: entry}}))
    rec = tool_record(*RACED, "--time-block", "auto")
    assert rec["config"]["time_block"]["how"] == "cached"
    check = rec["result"]["time_block_check"]
    assert check["depth"] == 2 and check["contradicted"] is contradicted
    kept = json.loads(path.read_text())["choices"]
    assert (key in kept) is not contradicted
    if contradicted:
        assert check["forgotten"] is True and "races again" in check["why"]


def test_undecided_rounds_are_decided_on_with_the_next_race_until_depth_1_stands(machine, monkeypatch):  # noqa: F811
    """The rounds of undecided races like this run's are decided on with its own; once they reach the
    pooled rounds to settle without a difference beyond noise, depth 1 stands, kept as settled, and the
    next run takes it without racing. The kept rounds tie (every ratio 1), so that the pooled median
    cannot move beyond the margin whatever this machine's own rounds say."""
    monkeypatch.setenv("BANDWALL_CACHES", ZEN_CACHES)
    first = tool_record(*RACED, "--time-block", "measure")["config"]["time_block"]
    assert "race_steps" in first
    key, raced = first["cache_key"], next(k for k in first["race"]["rates"] if k != "1")
    path = Path(os.environ["BANDWALL_CACHE_DIR"]) / f"time-blocks-{topo_digest()}.json"
    team = json.loads(path.read_text())["choices"][key]["team"]
    rounds = 18
    entry = {
        "depth": 1,
        "team": team,
        "raced": int(raced),
        "decisive": False,
        "runs": 3,
        "cpu": machine["cpu_key"],
        "why": "a test's undecided rounds",
        "race": {"rates": {"1": [1000.0] * rounds, raced: [1000.0] * rounds}},
    }
    path.write_text(json.dumps({"choices": {key: entry}}))
    again = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
    pooled = again["pooled"]
    assert (pooled["runs"], pooled["rounds"]) == (4, rounds + pooled["this_run_rounds"])
    assert again["depth"] == 1 and "depth 1 stands" in again["why"]
    kept = json.loads(path.read_text())["choices"][key]
    assert (kept["decisive"], kept["depth"], kept["runs"]) == (True, 1, 4)
    third = tool_record(*RACED, "--time-block", "auto")["config"]["time_block"]
    assert (third["how"], third["depth"]) == ("cached", 1) and "race_steps" not in third


@pytest.mark.parametrize("forced", [None, "L3=64M"])
def test_the_model_plans_with_the_share_of_the_last_level_cache_the_table_measured(
    tmp_path, monkeypatch, forced
):
    """A row's measured share of the last-level cache (its time model's llc_bytes) replaces the size
    hwloc reports where smaller, and the record says both; a size forced for L3 stands."""
    share = 2 * 2**20
    share_table(tmp_path, monkeypatch, share)
    if forced:
        monkeypatch.setenv("BANDWALL_CACHES", forced)
    rec = tool_record(40, 40, 40, 2, "auto", "auto", "auto", "compact", 1, "--time-block", "2")
    caches, reported = rec["config"]["time_block"]["caches"], rec["result"]["traffic_model"]["l3_bytes"]
    assert caches["how"] == "table" and caches["llc_over_memory"] == 1.5
    if not forced and (reported == 0 or share < reported):
        assert (caches["l3_bytes"], caches["l3_reported_bytes"]) == (share, reported)
    else:
        assert caches["l3_bytes"] == reported and "l3_reported_bytes" not in caches
        assert not forced or reported == 64 * 2**20


def share_table(tmp_path, monkeypatch, share: int) -> None:
    """A table whose only row, forced as this CPU's (BANDWALL_MICROARCH), measured `share` bytes of
    the last-level cache as the team's."""
    from conftest import microarchs

    name = microarchs()[0]  # any machine model
    model = {
        "llc_over_memory": 1.5,
        "llc_bytes": share,
        "interval": {},
        "command": "test",
        "measured": "2026-01-01",
    }
    row = {"microarch": name, "cpu": "test", "measured": "2026-01-01", "command": "test", "kernels": {}}
    path = tmp_path / "choices-with-a-share.json"
    path.write_text(json.dumps({"rows": [{**row, "models": {"iso3dfd.time_model": model}}]}))
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(path))
    monkeypatch.setenv("BANDWALL_MICROARCH", name)


def test_an_unreadable_cache_of_races_costs_only_a_race():
    cache = Path(os.environ["BANDWALL_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"time-blocks-{topo_digest()}.json").write_text("not json")
    rec = tool_record(*RACED, "--time-block", "auto")
    assert rec["config"]["time_block"]["how"] != "cached" and rec["validation"]["passed"] is True


def test_the_view_gives_the_whole_run_beside_the_timed_steps(run_bandwall, tmp_path, monkeypatch):
    """A run that races (the model proposes a depth on a 1 MiB L2; --time-block measure races it
    whatever is kept) says what its whole run ran at, the race's steps and seconds included; a run
    that chooses nothing on its data does not."""
    monkeypatch.setenv("BANDWALL_CACHES", ZEN_CACHES)
    grid = [
        "--grid",
        "80x80x80",
        "--iters",
        "40",
        "--threads",
        "1",
        "--no-roofline",
        "--db",
        tmp_path / "w.db",
    ]
    raced = run_bandwall("iso3dfd", *grid, "--time-block", "measure")
    assert raced.returncode == 0, raced.stderr
    words = " ".join(raced.stdout.split())
    assert re.search(
        r"the whole run: \d+ MPoints/s over its 40 steps, \d+ of them \([\d.]+ s\) spent choosing", words
    )
    given = run_bandwall(
        "iso3dfd", *grid, "--time-block", "1", "--row-shape", "compiled", "--prefetch", "compiled"
    )
    assert given.returncode == 0, given.stderr
    assert "the whole run" not in given.stdout


def test_the_view_names_the_time_block(run_bandwall, tmp_path):
    proc = run_bandwall("iso3dfd", *SMALL, "--time-block", "2", "--threads", "1", "--db", tmp_path / "v.db")
    assert proc.returncode == 0, proc.stderr
    assert "time steps per sweep: 2 (user: given on the command line)" in proc.stdout
    # where the sweep's tiles stay, and the figure the model weighed the last-level cache by
    assert "the sweep: 2 steps a sweep on tiles of " in proc.stdout
    words = " ".join(proc.stdout.split())
    assert re.search(r"x memory's bandwidth(; it plans with \d+ MiB of L3, [^:]+ reported)?: the ", words), (
        words
    )


def test_the_view_says_the_share_of_the_cache_the_model_planned_with(run_bandwall, tmp_path, monkeypatch):
    share_table(tmp_path, monkeypatch, 2 * 2**20)
    proc = run_bandwall(
        "iso3dfd",
        *SMALL,
        "--time-block",
        "2",
        "--threads",
        "1",
        "--db",
        tmp_path / "v.db",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    caches = json.loads(proc.stdout)["config"]["time_block"]["caches"]
    proc = run_bandwall("iso3dfd", *SMALL, "--time-block", "2", "--threads", "1", "--db", tmp_path / "v.db")
    words = " ".join(proc.stdout.split())
    if "l3_reported_bytes" in caches:  # hwloc reports more than 2 MiB here (or none)
        reported = caches["l3_reported_bytes"] / 2**20
        assert (
            f"it plans with 2 MiB of L3, the share measured as the team's, not the {reported:.0f} MiB"
            in words
        )
    else:
        assert "it plans with" not in words


@pytest.mark.cpus(2)
def test_the_view_names_who_swept(run_bandwall, tmp_path):
    args = ("iso3dfd", *SMALL, "--time-block", "2", "--threads", "2", "--db", tmp_path / "v.db")
    for team, words in (("shared", "the team on one wavefront"), ("slabs", "a slab a thread")):
        proc = run_bandwall(*args, "--sweep-team", team)
        assert proc.returncode == 0, proc.stderr
        assert f"time steps per sweep: 2, {words}" in proc.stdout


@pytest.mark.cpus(2)
def test_the_record_says_whether_the_teams_cpus_share_a_last_level_cache(run_bandwall, tmp_path):
    """Where --sweep-team auto lets the model choose the team, the record gives the probe of the team's
    last-level caches (a line's round trip between its first and last thread) and its verdict; the
    view says so where the probe found two caches and the model swept by slabs only."""
    import io

    from rich.console import Console

    from bandwall.views import iso3dfd as view

    args = (
        "iso3dfd",
        *SMALL,
        "--time-block",
        "2",
        "--threads",
        "2",
        "--db",
        tmp_path / "v.db",
        "--format",
        "json",
    )
    proc = run_bandwall(*args)
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    probe = rec["config"]["time_block"]["llc_probe"]
    assert probe["why"]
    if probe["ran"]:
        assert probe["round_trip_ns"] > 0 and len(probe["cpus"]) == 2
        if probe["cpus"][0] != probe["cpus"][1]:
            assert probe["shared"] == (probe["round_trip_ns"] < probe["one_llc_below_ns"])
        if not probe["shared"]:
            assert "two last-level caches" in rec["config"]["time_block"]["team_why"]
            assert rec["result"]["traffic_model"]["time_block"]["team"] == "slabs"
    # the view, with each verdict in turn
    for shared, said in ((True, False), (False, True)):
        rec["config"]["time_block"]["llc_probe"] = {
            "ran": True,
            "shared": shared,
            "why": "a line's round trip",
        }
        out = io.StringIO()
        view.render(Console(file=out, width=200), [rec])
        assert ("the team's last-level caches: a line's round trip" in out.getvalue()) is said
    # told the team, nothing is probed
    told = json.loads(run_bandwall(*args, "--sweep-team", "slabs").stdout)
    assert "llc_probe" not in told["config"]["time_block"]


PROJECTION_CASES = [
    # cores, STREAM GB/s, proposal (depth, bytes) or None: pays, gain
    (2, 44.0, (8, 4.6875), False, 1.0),  # 2 x 750 = 1500 against 2750 fed step by step
    (64, 450.0, (4, 5.9375), True, 48000 / 28125),  # 48000 against 28125; sweeps feed 75789
    (64, 450.0, None, True, 1.0),  # pays, but the model proposed no depth to gain it with
    (30, 450.0, (4, 5.9375), False, 1.0),  # 22500 against 28125: the cores do not outrun DRAM
]


@pytest.mark.parametrize("cores,stream,proposal,pays,gain", PROJECTION_CASES)
def test_node_projection_says_where_temporal_blocking_pays(cores, stream, proposal, pays, gain):
    rec = {
        "provenance": {"threads": 2},
        "config": {"time_block": {"proposal": {"depth": proposal[0], "memory_bytes_per_point": proposal[1]}}}
        if proposal
        else {},
        "result": {"mpoints_per_s": 1400.0, "traffic_model": {"bytes_per_point_compulsory": 16}},
    }
    # ports 3000 and L1 fills 3000 MPoints/s on the run's 2 threads: 750 a core in cache
    roof = {"port_bound_mpoints_per_s": 3000.0, "l1_fill_bound_mpoints_per_s": 3000.0}
    p = roofs.node_projection(rec, roof, cores, stream)
    assert p["per_core_mpoints_per_s"] == pytest.approx(750.0)
    assert p["compute_mpoints_per_s"] == pytest.approx(750.0 * cores)
    assert p["depths"][0]["memory_bound_mpoints_per_s"] == pytest.approx(stream * 1e3 / 16)
    assert p["pays"] is pays and p["gain"] == pytest.approx(gain)
    assert ("do not outrun" not in p["why"]) is pays
    assert ("sweeps of" in p["why"]) is (pays and proposal is not None)


def test_node_projection_falls_back_to_the_run_per_thread():
    rec = {"provenance": {"threads": 2}, "config": {}, "result": {"mpoints_per_s": 1400.0}}
    p = roofs.node_projection(rec, {}, 4, 10.0)
    assert p["per_core_mpoints_per_s"] == pytest.approx(700.0)
    assert p["per_core_source"] == "the run's rate per thread"


@pytest.mark.parametrize(
    "llc_per_core, level, gain",
    [
        (None, "L3", 48000 / 28125),  # no L3 measured: the cores and DRAM alone
        (26.0, "L3", 48000 / 28125),  # 64 x 26 GB/s over 18 B/pt: 92444, above the cores' 48000
        (10.0, "L3", (640.0 * 1e3 / 18) / 28125),  # 35556: L3 bounds the sweeps below the cores
        (10.0, "L2", 48000 / 28125),  # tiles in L2: L3 does not bound them
    ],
)
def test_node_projection_bounds_sweeps_by_the_last_level_cache(llc_per_core, level, gain):
    """A sweep spares memory, not L3: with L3's bandwidth per core measured, the projected sweeps are
    also bound by their L3-to-L2 bytes at that bandwidth times the node's cores."""
    proposal = {"depth": 4, "memory_bytes_per_point": 5.9375, "llc_bytes_per_point": 18.0, "level": level}
    rec = {
        "provenance": {"threads": 2},
        "config": {"time_block": {"proposal": proposal}},
        "result": {"mpoints_per_s": 1400.0, "traffic_model": {"bytes_per_point_compulsory": 16}},
    }
    roof = {"port_bound_mpoints_per_s": 3000.0, "l1_fill_bound_mpoints_per_s": 3000.0}
    p = roofs.node_projection(rec, roof, 64, 450.0, llc_per_core)
    assert p["pays"] and p["gain"] == pytest.approx(gain)
    assert ("llc_bound_mpoints_per_s" in p["depths"][1]) is (llc_per_core is not None and level == "L3")


@pytest.mark.parametrize(
    "cached, pays, gain",
    [
        # the arrays in L3: 2 x 35 GB/s over 16 B/pt feed 4375 step by step; the cores' 4800 outrun it
        # by 1.10x only, under the threshold: sweeps have little to spare
        (True, False, 1.0),
        # from memory: 46 GB/s feed 2875; the sweep's 2.6 B/pt from memory lets the cores run: 4800 / 2875
        (False, True, 4800 / 2875),
    ],
)
def test_node_projection_of_arrays_in_the_last_level_cache_is_fed_by_it(cached, pays, gain):
    """Arrays the last-level cache holds are fed to the steps from there, not from memory: the
    projection's step by step is L3's bandwidth over the bytes into L2, which the cores outrun by too
    little for sweeps to pay (a 256^3 run on a 300 MiB L3: sweeps in L2 1.05x, not the 1.57x a memory
    feed projected)."""
    proposal = {"depth": 5, "memory_bytes_per_point": 2.6, "llc_bytes_per_point": 3.5, "level": "L2"}
    rec = {
        "provenance": {"threads": 2},
        "config": {"time_block": {"proposal": proposal}},
        "result": {
            "mpoints_per_s": 3900.0,
            "traffic_model": {"bytes_per_point_compulsory": 16, "bytes_per_point_into_l2_estimate": 16.0},
        },
    }
    roof = {"port_bound_mpoints_per_s": 9600.0, "l1_fill_bound_mpoints_per_s": 9600.0}
    p = roofs.node_projection(rec, roof, 2, 46.0, 35.0, cached)
    assert p["compute_mpoints_per_s"] == pytest.approx(4800.0)
    assert p["pays"] is pays and p["gain"] == pytest.approx(gain)
    assert ("L3's 70.0 GB/s" in p["why"]) is cached
