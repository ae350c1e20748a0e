"""bench/iso3dfd_campaign.py: the steps a CPU met for the first time runs (its table row first, in
the order whose later races meet the earlier winners), and how a step's command and outcome are
written down."""

from __future__ import annotations

import io
import re
import sys

import pytest

import bench_scripts

campaign = bench_scripts.load("iso3dfd_campaign.py", "campaign")


@pytest.fixture
def parsed(monkeypatch):
    """The campaign's parse() on argv; the BANDWALL_BINDIR it exports and sys.argv are put back."""
    monkeypatch.delenv("BANDWALL_BINDIR", raising=False)

    def parse(*argv: str):
        monkeypatch.setattr(sys, "argv", ["iso3dfd_campaign.py", "--bindir", "/nonexistent/bin", *argv])
        return campaign.parse()

    return parse


def test_by_default_the_row_then_every_order(parsed):
    assert parsed("--name", "zen9").step_list == ["row", "orders"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--name", "zen9", "--steps", "row,tea"], "tea not among"),
        (["--name", "zen 9"], "letters, digits and dashes only"),
        (["--name", "zen9", "--rounds", "1"], "--rounds must be at least 3"),
    ],
)
def test_bad_arguments_are_refused_with_one_line(parsed, argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parsed(*argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_the_row_writes_the_time_model_then_the_shapes_then_the_other_knobs_then_the_variants(parsed):
    """The row's scripts in order, the sweeps raced again per verdict of the probe after the other knobs."""
    row = campaign.commands(parsed("--name", "zen9"))["row"]
    scripts = [(c[1], c[c.index("--knobs") + 1] if "--knobs" in c else None) for c in row]
    assert scripts == [
        ("bench/iso3dfd_time_model.py", None),
        ("bench/iso3dfd_kernel_choices.py", "shapes"),
        ("bench/iso3dfd_kernel_choices.py", "prefetch,swept,blocks,team,sweeps"),
        ("bench/iso3dfd_kernel_choices.py", "sweeps"),
        ("bench/isa_choices.py", None),
    ]
    assert all("--write" in c and "/nonexistent/bin" in c for c in row)
    assert "--in-run" in row[1]
    assert row[3][row[3].index("--sweeps-llc") + 1] == "one,two"  # then per verdict of the probe
    # every race of the row gets rounds enough for the decision rule's 90% interval
    assert all(int(c[c.index("--rounds") + 1]) >= 5 for c in row)


def test_the_orders_run_with_devitos_python(parsed):
    (orders,) = campaign.commands(parsed("--name", "zen9", "--devito-python", "/opt/dv/python"))["orders"]
    assert orders[:2] == ["/opt/dv/python", "bench/iso3dfd_orders.py"]


def test_a_step_reads_the_repositorys_table_and_its_output_is_written():
    out = io.StringIO()
    show = "import os; print('table', os.environ['BANDWALL_ISA_CHOICES'])"
    campaign.run_step(out, "row (1 of 4)", [sys.executable, "-c", show], 0.25)
    text = out.getvalue()
    assert "### row (1 of 4)" in text and "load 0.25 before the run." in text
    assert re.search(r"From \d\d:\d\d UTC, \d+ min;", text)
    assert f"table {campaign.TABLE}" in text
    assert "failed" not in text


@pytest.mark.parametrize(
    "code, stderr, written",
    [
        ("import sys; print('half'); sys.exit(3)", "", "The step failed (exit 3), with nothing on stderr."),
        (
            "import sys; sys.stderr.write('first\\nlast words\\n'); sys.exit(1)",
            "last words",
            "The step failed (exit 1); its stderr:",
        ),
    ],
)
def test_a_failed_step_is_written_down_and_the_campaign_goes_on(code, stderr, written):
    out = io.StringIO()
    campaign.run_step(out, "orders", [sys.executable, "-c", code], 0.5)
    text = out.getvalue()
    assert written in text
    assert stderr in text


def test_a_steps_report_on_stderr_is_written_whole():
    out = io.StringIO()
    report = "import sys; sys.stderr.write(''.join(f'figure {i}\\n' for i in range(100)))"
    campaign.run_step(out, "row (1 of 4)", [sys.executable, "-c", report], 0.25)
    text = out.getvalue()
    assert "Its stderr:" in text and "figure 0\n" in text and "figure 99\n" in text
    assert "failed" not in text


def test_a_missing_program_is_a_failed_step():
    out = io.StringIO()
    campaign.run_step(out, "orders", ["/nonexistent/python", "x.py"], 0.5)
    assert "The step failed (exit 127)" in out.getvalue()
