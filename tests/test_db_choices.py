"""`bandwall db choices`: the variant choices cached on this machine are shown, and forgotten one
kernel at a time or all at once (the next run measures again); bad input is one line and exit 2.
The cache is the test's own (conftest: BANDWALL_CACHE_DIR)."""

from __future__ import annotations

import json

import pytest

from bandwall.core import choices, native

ENTRY = {
    "isa": "generic",
    "decisive": True,
    "figures": {"generic": 2.0},
    "unit": "GB/s",
    "candidates": ["generic"],
    "cpu": "Test CPU",
    "size_class": "dram",
    "decision": {"why": "generic faster than the default avx512 beyond noise"},
    "measured": "2026-01-02",
}


def entry(kernel: str, size_class: str, ceiling: str = "") -> dict:
    """A cached choice as the native side writes it: its kernel, size class and ceiling beside it."""
    return {**ENTRY, "kernel": kernel, "size_class": size_class, "ceiling": ceiling}


@pytest.fixture
def cached():
    p = choices.path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(
        json.dumps(
            {
                "choices": {
                    "stream.triad.nt@dram": entry("stream.triad.nt", "dram"),
                    "stream.dot@l2": entry("stream.dot", "l2"),
                    "peak.fma@core": entry("peak.fma", "core"),
                }
            }
        )
    )
    return p


def test_the_cache_lives_in_the_tests_own_folder(tmp_path_factory):
    assert str(choices.path()).startswith(str(tmp_path_factory.getbasetemp()))
    assert choices.path().name.startswith("isa-choices-")


def test_choices_are_listed_then_forgotten(run_bandwall, cached):
    p = run_bandwall("db", "choices", "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [(r["kernel"], r["size_class"]) for r in rows] == [
        ("peak.fma", "core"),
        ("stream.dot", "l2"),
        ("stream.triad.nt", "dram"),
    ]
    assert all(r["isa"] == "generic" and r["why"].startswith("generic faster") for r in rows)
    assert all(r["state"] == "confirmed" for r in rows)  # decisive, written before states
    p = run_bandwall("db", "choices", "--forget", "stream.dot")
    assert p.returncode == 0 and "forgot 1" in p.stdout, p.stderr
    assert set(json.loads(cached.read_text())["choices"]) == {"stream.triad.nt@dram", "peak.fma@core"}
    p = run_bandwall("db", "choices", "--forget")
    assert p.returncode == 0 and "forgot 2" in p.stdout, p.stderr
    assert json.loads(cached.read_text())["choices"] == {}


def test_no_cache_is_an_empty_list(run_bandwall):
    p = run_bandwall("db", "choices", "--format", "json")
    assert p.returncode == 0 and json.loads(p.stdout) == []


@pytest.mark.parametrize(
    "text, args, message",
    [
        (None, ["--forget", "stream.nope"], "no cached choice for 'stream.nope'"),
        ("not json", [], "cannot be read"),
        ("[1, 2]", [], "is not one bandwall wrote"),
    ],
)
def test_bad_input(run_bandwall, text, args, message):
    if text is not None:
        choices.path().parent.mkdir(parents=True, exist_ok=True)
        choices.path().write_text(text)
    p = run_bandwall("db", "choices", *args)
    lines = p.stderr.strip().splitlines()
    assert p.returncode in (1, 2) and len(lines) == 1 and message in lines[0], p.stderr
    assert "Traceback" not in p.stderr


def test_a_forgotten_choice_is_measured_again(tmp_path, monkeypatch):
    """The native executables read the same file: a decisive entry for this CPU is taken without a
    measurement, and once forgotten the next run measures (a table without rows, so that nothing
    but the cache can name the variant)."""
    import subprocess

    from bandwall.core import manifest

    table = tmp_path / "empty.json"
    table.write_text('{"rows": []}')
    monkeypatch.setenv("BANDWALL_ISA_CHOICES", str(table))
    isa = manifest.manifest()["isa"]
    m = isa["microarch"]
    cpu = m.get("name") or f"{m['vendor']}-{m['family']}-{m['model']}"
    if len(isa["offered"]) < 2:
        pytest.skip("this CPU offers one variant: nothing is cached")
    fma = {
        **entry("peak.fma", "core"),
        "cpu": cpu,
        "candidates": isa["offered"],
        "isa": isa["offered"][-1],
        "size_class": "core",
    }
    choices.path().parent.mkdir(parents=True, exist_ok=True)
    choices.path().write_text(json.dumps({"choices": {"peak.fma@core": fma}}))
    peak = [native.executable("bandwall-peak"), "--reps", "1", "--seconds", "0.01", "--threads", "1"]
    rec = json.loads(subprocess.check_output(peak))
    assert (rec["config"]["isa_choice"]["how"], rec["config"]["isa"]) == ("cached", isa["offered"][-1])
    assert choices.forget("peak.fma") == 1
    rec = json.loads(subprocess.check_output(peak))
    assert rec["config"]["isa_choice"]["how"] == "measured"


TIME_BLOCK = {
    "depth": 4,
    "team": "slabs",
    "decisive": True,
    "races": 2,
    "cpu": "Test CPU",
    "measured": "2026-01-02",
    "why": "w",
}


def test_settled_time_block_races_are_listed_then_forgotten(run_bandwall):
    p = choices.time_blocks_path()
    assert str(p.parent) == str(choices.path().parent) and p.name.startswith("time-blocks-")
    assert json.loads(run_bandwall("db", "time-blocks", "--format", "json").stdout) == []
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(
        json.dumps(
            {
                "choices": {
                    "iso3dfd 80x80x80, 1 threads": TIME_BLOCK,
                    "iso3dfd 272": {k: v for k, v in TIME_BLOCK.items() if k != "races"},
                }
            }
        )
    )
    proc = run_bandwall("db", "time-blocks", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [(r["run"], r["depth"], r["team"], r["races"]) for r in rows] == [
        ("iso3dfd 272", 4, "slabs", 1),  # written before races were counted: one
        ("iso3dfd 80x80x80, 1 threads", 4, "slabs", 2),
    ]
    proc = run_bandwall("db", "time-blocks", "--forget")
    assert proc.returncode == 0 and "forgot 2" in proc.stdout, proc.stderr
    assert json.loads(p.read_text())["choices"] == {}


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"choices": {"iso3dfd 80x80x80": 1}}'])
def test_a_bad_file_of_time_block_races_is_one_line(run_bandwall, text):
    p = choices.time_blocks_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    proc = run_bandwall("db", "time-blocks")
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert str(p) in proc.stderr


def test_row_kernel_knobs_the_tune_kept_are_listed_then_forgotten(run_bandwall):
    """What bandwall tune iso3dfd kept (shape, prefetch, sweeps' shape) is listed, a knob not kept
    empty, and --forget removes it all."""
    assert json.loads(run_bandwall("db", "row-kernels", "--format", "json").stdout) == []
    choices.keep_row_kernel("iso3dfd.rows.r3", "avx512", {"swept_shape": "8x2-ring"}, "w", "2026-01-05")
    choices.keep_row_kernel("iso3dfd.rows", "avx2", {"shape": "4x1", "prefetch": 2}, "w", "2026-01-05")
    proc = run_bandwall("db", "row-kernels", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [(r["kernel"], r["isa"], r["shape"], r["prefetch"], r["swept_shape"]) for r in rows] == [
        ("iso3dfd.rows", "avx2", "4x1", 2, ""),
        ("iso3dfd.rows.r3", "avx512", "", "", "8x2-ring"),
    ]
    proc = run_bandwall("db", "row-kernels")
    assert proc.returncode == 0 and "2 row kernel choice(s) kept" in proc.stdout, proc.stderr
    proc = run_bandwall("db", "row-kernels", "--forget")
    assert proc.returncode == 0 and "forgot 2" in proc.stdout, proc.stderr
    assert choices.shape_rows() == []


def test_a_bad_file_of_row_kernel_knobs_is_one_line(run_bandwall):
    p = choices.shapes_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("[1, 2]")
    proc = run_bandwall("db", "row-kernels")
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert str(p) in proc.stderr


def test_a_choice_made_under_a_ceiling_is_listed_apart(run_bandwall):
    """A capped run chooses among fewer variants: its choice is kept under a key of its own
    (kernel@size_class@max=CEILING) and listed with the ceiling."""
    p = choices.path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(
        json.dumps(
            {
                "choices": {
                    "stream.dot@l2": entry("stream.dot", "l2"),
                    "stream.dot@l2@max=avx2": entry("stream.dot", "l2", "avx2"),
                }
            }
        )
    )
    out = run_bandwall("db", "choices", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [(r["kernel"], r["size_class"], r["ceiling"]) for r in rows] == [
        ("stream.dot", "l2", ""),
        ("stream.dot", "l2", "avx2"),
    ]
