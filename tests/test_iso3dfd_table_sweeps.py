"""ISO3DFD's table of measured choices on sweeps per CPU and radius: whether sweeps pay and at what
depth (per verdict of the probe of a shared last-level cache, and for the team it was measured with),
tiles sized for L2, the round a run spends checking a table's depth and what the pooled checks decide.
Each row is forced to this machine's model, so any CPU runs them."""

from __future__ import annotations

import json

import pytest

from iso3dfd_tool import SWEPT_SHAPES, THREADS, offered_isas, record


def write_sweeps_table(
    table, isa: str, depth: int | None, slower: bool = False, radius: int = 1, **more
) -> None:
    """A table of one row (AMD Zen 4) whose entry at radius 1 (or `radius`) says of sweeps for
    variant isa: depth (None: no entry), slower, and any more fields (tile_cache)."""
    sweeps = {
        isa: {"depth": depth, "slower": slower, "measured": "2026-01-07", "decision": {"why": "w"}, **more}
    }
    kernels = {} if depth is None else {f"iso3dfd.rows.r{radius}": {"isa": isa, "sweeps": sweeps}}
    row = {"microarch": "AMD Zen 4", "cpu": "t", "measured": "2026-01-01", "command": "t", "kernels": kernels}
    table.write_text(json.dumps({"rows": [row]}))


# Steps enough for the round that checks a table's depth to take at most a quarter of them (the
# model proposes at most depth 8 at radius 1: 17 steps).
STEPS = 80


def sweeps_table_run(isa: str, radius: int = 1, *more, steps: int = STEPS, interior: int = 64) -> dict:
    n = 2 * radius + interior
    rec = record(
        n, n, n, steps, "auto", "auto", "auto", "compact", THREADS, "--isa", isa, "--radius", radius, *more
    )
    assert rec["validation"]["passed"] is True
    return rec["config"]["time_block"]


@pytest.fixture
def sweeps_table(monkeypatch, tmp_path):
    """The variant to run (skips without a vector one) and the path of a table of measured choices
    the runs read, on a Zen 4 model of caches."""
    offered = [i for i in offered_isas() if i in SWEPT_SHAPES]
    if not offered:
        pytest.skip("no vector variant on this CPU")
    table = tmp_path / "choices.json"
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    monkeypatch.setenv("BANDWALL_MICROARCH", "AMD Zen 4")
    monkeypatch.setenv("BANDWALL_CACHES", "L2=256K,L3=32M")
    return offered[0], table


@pytest.mark.parametrize(
    "entry",
    [
        "slower",
        "the proposal",
        "a shallower depth raced there",
        "within noise",
        "within noise elsewhere",
        "another depth",
    ],
)
def test_the_table_says_whether_sweeps_pay_and_a_round_a_run_checks_it(
    entry, sweeps_table, monkeypatch, tmp_path, run_bandwall
):
    """A row with sweeps for the variant at the run's radius: sweeps slower there (depth 1, slower)
    and --time-block auto runs step by step without a race; depth 1 where the races there could not
    tell the depth the run's model proposes from single steps, and depth 1 stands without a race;
    the depth the run's model proposes (it paid there), or a shallower one raced where the model
    proposed what the run's proposes, and the run sweeps at it from the first step, spending one
    round of a race on its own steps to check it (one round alone decides nothing: the depth
    stands); all say table and whence. Depth 1 within noise of another proposal, or another
    depth, leaves the race to run as before (config.time_block.table cites the entry); --time-block
    measure races whatever the row says; a radius without an entry races as before."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, None)
    measured = sweeps_table_run(isa, 1, "--time-block", "measure")
    proposed = measured["proposal"]["depth"]
    assert proposed > 1 and measured["how"] != "table" and "race" in measured, measured  # a race would run
    assert proposed > 2, measured  # a shallower depth to sweep at
    depth = {
        "the proposal": proposed,
        "another depth": proposed + 1,
        "a shallower depth raced there": proposed - 1,
    }
    depth = depth.get(entry, 1)
    raced = {
        "within noise": proposed,
        "within noise elsewhere": proposed + 1,
        "a shallower depth raced there": proposed,
    }
    more = {"proposed": raced[entry]} if entry in raced else {}
    if entry == "within noise":  # the first race's winner, alone against single steps, within noise
        more["second_race"] = {"raced": str(proposed), "why": "the default 1 stands"}
    write_sweeps_table(table, isa, depth, slower=entry == "slower", **more)
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))  # no earlier round to pool with
    tb = sweeps_table_run(isa)
    if entry in ("within noise elsewhere", "another depth"):
        assert tb["how"] != "table" and "race" in tb and tb["table"]["depth"] == depth, tb
        assert "iso3dfd.rows.r1" in tb["table"]["from"] and "2026-01-07" in tb["table"]["from"]
    else:
        assert (tb["depth"], tb["how"]) == (depth, "table") and "race" not in tb, tb
        assert "iso3dfd.rows.r1" in tb["why"] and "2026-01-07" in tb["why"] and ": w" in tb["why"]
        if entry in ("slower", "within noise"):
            assert "check" not in tb
            assert ("not told from single steps" in tb["why"]) == (entry == "within noise"), tb
            assert ("then alone: the default 1 stands" in tb["why"]) == (entry == "within noise"), tb
        else:
            check = tb["check"]
            assert check["ran"] and (check["rounds"], check["runs"], check["settled"]) == (1, 1, False), check
            assert (
                set(check["this_run"]) == {"1", str(depth)}
                and "not told from single steps yet" in check["why"]
            )
            # a run whose steps a round of the check would take more than a quarter of: the depth, unchecked
            short = sweeps_table_run(isa, steps=4 * (1 + 2 * depth) - 1)
            assert (short["depth"], short["how"]) == (depth, "table") and not short["check"]["ran"], short
            assert "in a quarter of its" in short["check"]["why"]
            # the view says so, with this run's round
            monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "view"))
            n = 66
            proc = run_bandwall(
                "iso3dfd", "--grid", f"{n}x{n}x{n}", "--iters", STEPS, "--radius", 1, "--isa", isa,
                "--threads", THREADS, "--no-roofline", "--db", tmp_path / "v.db",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert "the table's depth checked: this run's round step by step " in proc.stdout
            assert (
                "not told from single steps yet: " in proc.stdout
                and "over 1 round(s) of 1 run(s)" in proc.stdout
            )
    again = sweeps_table_run(isa, 1, "--time-block", "measure")
    assert again["how"] != "table" and "race" in again and "check" not in again
    other = sweeps_table_run(isa, 2)
    assert other["how"] != "table" and "table" not in other


@pytest.mark.parametrize("entry", ["within noise", "a shallower depth raced there"])
def test_a_table_entry_holds_where_two_last_level_caches_leave_the_model_slabs_only(
    entry, sweeps_table, monkeypatch, tmp_path
):
    """The table's races ran with the team free (the model's proposal and every depth from 2 up to
    it). Where the team's CPUs measure two last-level caches (forced: BANDWALL_LLC_PROBE=two), the
    model, left slabs only, proposes a shallower depth than there; the entry is still matched by the
    proposal with the team free: depth 1 stands without a race where the races could not tell, the
    entry's depth runs from the first step where it paid (one shallower than the run's model
    proposes, as the bench's race may choose). On a 96^3 interior at radius 3 with 512 KiB
    of L2 and 4 MiB of L3 the model proposes 6 by the team together, 3 by slabs."""
    if THREADS < 2:
        pytest.skip("one CPU: a team of one thread probes nothing")
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHES", "L2=512K,L3=4M")
    # the proposals' runs race, and a race that decides keeps its depth: in a folder of their own
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "measured"))
    write_sweeps_table(table, isa, None)

    def run(probe: str) -> dict:
        monkeypatch.setenv("BANDWALL_LLC_PROBE", probe)
        return sweeps_table_run(isa, 3, "--time-block", "measure", interior=96)

    free, split = run("one")["proposal"], run("two")["proposal"]
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "cache"))
    assert (free["team"], split["team"]) == ("shared", "slabs") and free["depth"] > split["depth"] > 2
    chosen = split["depth"] - 1  # raced there (every depth from 2 up), and not what the run's model proposes
    if entry == "within noise":
        second = {"raced": str(free["depth"]), "why": "the default 1 stands"}
        write_sweeps_table(table, isa, 1, radius=3, proposed=free["depth"], second_race=second)
    else:
        write_sweeps_table(table, isa, chosen, radius=3, proposed=free["depth"])
    monkeypatch.setenv("BANDWALL_LLC_PROBE", "two")
    tb = sweeps_table_run(isa, 3, interior=96)
    assert tb["llc_probe"]["forced"] == "BANDWALL_LLC_PROBE=two" and tb["teams_considered"] == "slabs"
    assert tb["how"] == "table" and "race" not in tb, tb
    assert tb["depth"] == (1 if entry == "within noise" else chosen)


def test_the_entry_raced_with_the_probes_verdict_holds_for_runs_with_that_verdict(
    sweeps_table, monkeypatch, tmp_path
):
    """A row whose sweeps_by_llc holds an entry per verdict of the probe (one last-level cache: the
    model's team together; two: slabs) beside the entry raced with the team free: a run takes the
    entry of its own verdict, matched by its own proposal, and cites it; a verdict the row has no
    entry for takes the team-free entry, as before. On a 96^3 interior at radius 3 with 512 KiB of
    L2 and 4 MiB of L3 the model proposes 6 by the team together, 3 by slabs."""
    if THREADS < 2:
        pytest.skip("one CPU: a team of one thread probes nothing")
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHES", "L2=512K,L3=4M")
    write_sweeps_table(table, isa, None)

    def run(probe: str) -> dict:
        monkeypatch.setenv("BANDWALL_LLC_PROBE", probe)
        return sweeps_table_run(isa, 3, interior=96)

    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "measured"))  # their races keep a depth
    monkeypatch.setenv("BANDWALL_LLC_PROBE", "one")
    one = sweeps_table_run(isa, 3, "--time-block", "measure", interior=96)["proposal"]
    monkeypatch.setenv("BANDWALL_LLC_PROBE", "two")
    two = sweeps_table_run(isa, 3, "--time-block", "measure", interior=96)["proposal"]
    assert (one["team"], two["team"]) == ("shared", "slabs") and one["depth"] > two["depth"] > 2
    entry = {"slower": False, "measured": "2026-01-08", "decision": {"why": "v"}}
    by_llc = {
        "one": {**entry, "depth": one["depth"] - 1, "proposed": one["depth"], "llc": "one"},
        "two": {**entry, "depth": 1, "proposed": two["depth"], "llc": "two"},  # could not tell there
    }
    # the team-free entry says otherwise at both
    write_sweeps_table(table, isa, 2, radius=3, proposed=one["depth"])
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "cache"))
    row = json.loads(table.read_text())
    row["rows"][0]["kernels"]["iso3dfd.rows.r3"]["sweeps_by_llc"] = {isa: by_llc}
    table.write_text(json.dumps(row))
    shared, split = run("one"), run("two")
    for tb, depth, words in (
        (shared, one["depth"] - 1, "one last-level cache"),
        (split, 1, "two last-level caches"),
    ):
        assert (tb["depth"], tb["how"]) == (depth, "table") and "race" not in tb, tb
        assert f"iso3dfd.rows.r3, {isa} sweeps with {words}" in tb["why"] and "2026-01-08" in tb["why"], tb
    assert "not told from single steps" in split["why"]
    del row["rows"][0]["kernels"]["iso3dfd.rows.r3"]["sweeps_by_llc"][isa]["two"]
    table.write_text(json.dumps(row))
    free = run("two")  # the team-free entry: depth 2, matched by the team-free proposal
    assert (free["depth"], free["how"]) == (2, "table") and "with two last-level" not in free["why"], free


@pytest.mark.parametrize("measured_with", [THREADS, THREADS + 1])
def test_a_verdict_on_sweeps_holds_for_the_team_it_was_measured_with(
    measured_with, sweeps_table, monkeypatch, tmp_path
):
    """An entry that found sweeps slower, measured with the run's number of threads, sends the run
    step by step without a race; measured with another number, it says nothing for the run, which
    races as before, and config.time_block.table says why (applies false, the entry's threads)."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, 1, slower=True, threads=measured_with)
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "cache"))
    tb = sweeps_table_run(isa)
    if measured_with == THREADS:
        assert (tb["depth"], tb["how"]) == (1, "table") and "race" not in tb, tb
        return
    assert tb["how"] != "table" and "race" in tb, tb
    other = tb["table"]
    assert (other["threads"], other["applies"], other["depth"], other["slower"]) == (
        THREADS + 1,
        False,
        1,
        True,
    )
    assert f"with {THREADS + 1} thread(s), this run has {THREADS}" in other["from"], other
    assert "iso3dfd.rows.r1" in other["from"]


def test_tiles_sized_for_l2_where_the_table_found_them_faster(sweeps_table, monkeypatch, tmp_path):
    """A row whose sweeps entry names tile_cache L2 at the depth tiles in L2 propose: --tile-cache
    auto sizes the tiles for L2 (config.time_block.tile_cache says table and whence) and sweeps at
    that depth from the first step, on tiles whose window L2 holds; --tile-cache model takes the
    model's tiles whatever the row says; an entry without tile_cache leaves the model's."""
    isa, table = sweeps_table
    write_sweeps_table(table, isa, None)
    n = 66
    args = (n, n, n, 40, "auto", "auto", "auto", "compact", THREADS, "--isa", isa, "--radius", 1)
    proposal = record(*args, "--time-block", "measure", "--tile-cache", "L2")["config"]["time_block"]
    depth = proposal["proposal"]["depth"]
    assert depth > 1 and proposal["proposal"]["level"] == "L2", proposal
    assert proposal["tile_cache"] == {
        "requested": "L2",
        "used": "L2",
        "how": "user",
        "from": "--tile-cache L2",
    }
    write_sweeps_table(table, isa, depth, tile_cache="L2")
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))
    rec = record(*args)
    tb = rec["config"]["time_block"]
    assert (tb["depth"], tb["how"]) == (depth, "table"), tb
    tc = tb["tile_cache"]
    assert (tc["requested"], tc["used"], tc["how"]) == ("auto", "L2", "table"), tc
    assert "iso3dfd.rows.r1" in tc["from"] and "2026-01-07" in tc["from"]
    assert rec["result"]["traffic_model"]["time_block"]["level"] == "L2"
    assert rec["validation"]["passed"] is True
    model = record(*args, "--tile-cache", "model")["config"]["time_block"]["tile_cache"]
    assert (model["used"], model["how"]) == ("model", "user")
    write_sweeps_table(table, isa, depth)
    plain = record(*args)["config"]["time_block"]["tile_cache"]
    assert (plain["used"], plain["how"]) == ("model", "model") and "names no cache" in plain["from"]


@pytest.mark.parametrize("outcome", ["faster", "slower"])
def test_the_checks_of_a_table_depth_keep_it_or_go_step_by_step(outcome, sweeps_table, monkeypatch, tmp_path):
    """The rounds the checks of a table's depth kept under the run's key are decided on with this
    run's own: sweeps faster beyond noise keep the depth as confirmed, and the next run takes it from
    the cache; slower beyond noise send this run step by step from there, and the next run too. The
    kept rounds (19, one short of the rounds that settle) are a billion times apart, so that one round
    of this machine's cannot move the pooled verdict."""
    isa, table = sweeps_table
    monkeypatch.setenv("BANDWALL_CACHE_DIR", str(tmp_path / "checks"))
    write_sweeps_table(table, isa, None)
    measured = sweeps_table_run(isa, 1, "--time-block", "measure")
    depth, key = measured["proposal"]["depth"], measured["cache_key"]
    files = list((tmp_path / "checks").rglob("time-blocks-*.json"))
    assert len(files) == 1
    stored = json.loads(files[0].read_text())["choices"][key]
    fast, slow = [1e9] * 19, [1.0] * 19
    singles, sweeps = (slow, fast) if outcome == "faster" else (fast, slow)
    entry = {
        "depth": depth,
        "team": stored["team"],
        "raced": depth,
        "decisive": False,
        "runs": 3,
        "cpu": stored["cpu"],
        "why": "a test's checks",
        "race": {"rates": {"1": singles, str(depth): sweeps}},
    }
    files[0].write_text(json.dumps({"choices": {key: entry}}))
    write_sweeps_table(table, isa, depth)
    tb = sweeps_table_run(isa)
    assert tb["how"] == "table" and tb["check"]["runs"] == 4, tb
    assert tb["check"]["settled"] is True and tb["check"]["rounds"] == 20
    kept = json.loads(files[0].read_text())["choices"][key]
    assert kept["decisive"] is True and kept["runs"] == 4
    nxt = sweeps_table_run(isa)
    if outcome == "faster":
        assert tb["depth"] == depth and (kept["depth"], kept["races"]) == (depth, 2)
        assert (nxt["how"], nxt["depth"]) == ("cached", depth)
    else:
        assert tb["depth"] == 1 and "depth 1 from here on" in tb["why"] and kept["depth"] == 1
        assert (nxt["how"], nxt["depth"]) == ("cached", 1)
