"""The line a run's view prints when a virtual machine's host took its CPUs' time (provenance.steal)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from bandwall.core import records
from bandwall.kernels import sweep
from bandwall.mpi import mpi_stream
from bandwall.views import mpi_stream as mpi_stream_view
from bandwall.views import sweep as sweep_view
from bandwall.views.host import SHOWN_STEAL, steal_notes
from report_fakes import FakeSection, PageParts, inproc


def _rec(steal):
    return {"provenance": {"steal": steal}}


@pytest.mark.parametrize(
    "steals, said",
    [
        ([None], None),
        ([{"share": 0.0, "seconds": 0.0}], None),
        ([{"share": SHOWN_STEAL / 2, "seconds": 0.01}], None),
        ([{"share": 0.04, "seconds": 0.35}], "the host took 4% of the CPUs' time (0.35 s) in the run"),
        (
            [{"share": 0.02, "seconds": 0.1}, None, {"share": 0.12, "seconds": 0.9}],
            "the host took up to 12% of the CPUs' time (0.90 s) in 2 of 3 runs",
        ),
        (
            [{"share": 0.03, "seconds": 0.2}, {"share": 0.001, "seconds": 0.0}],
            "the host took 3% of the CPUs' time (0.20 s) in 1 of 2 runs",
        ),
    ],
)
def test_steal_is_named_from_a_hundredth_of_the_time(steals, said):
    notes = steal_notes([_rec(s) for s in steals])
    if said is None:
        assert notes == []
    else:
        assert len(notes) == 1 and notes[0].startswith(said + " (steal"), notes


def test_a_record_of_several_runs_says_the_most_any_lost_and_their_seconds_together():
    notes = steal_notes([_rec({"share": 0.12, "seconds": 0.9, "runs": 3})])
    assert notes[0].startswith(
        "the host took up to 12% of the CPUs' time (0.90 s in all) in its 3 runs (steal"
    )


A = {"share": 0.02, "seconds": 0.1}
B = {"share": 0.05, "seconds": 0.3}


@pytest.mark.parametrize(
    "parts, steal",
    [
        ([A, B], {"share": 0.05, "seconds": 0.4, "runs": 2}),
        ([A, None, None], {"share": 0.02, "seconds": 0.1, "runs": 3}),
        ([{**B, "runs": 4}, A], {"share": 0.05, "seconds": 0.4, "runs": 5}),
        ([None, None], None),
    ],
)
def test_a_record_made_of_runs_carries_their_steal(parts, steal):
    prov = records.provenance_of_parts(_rec(parts[-1]), [_rec(p) for p in parts])
    assert prov["steal"] == (None if steal is None else pytest.approx(steal))


def _stream_point(make_record, n: int, steal) -> dict:
    config = {"kernel": "triad", "threads": n, "stores": "nt", "size_per_array_bytes": 1 << 20, "reps": 3}
    config.update(
        ranks=n,
        ranks_per_node=n,
        nodes=1,
        bind="core",
        launcher={"name": "mpirun", "argv": [], "mpi": "openmpi"},
        mpi_library="Open MPI",
    )
    result = {"best_GBps": 10.0 * n, "median_GBps": 9.0 * n, "best_GBps_per_node": 10.0 * n}
    return make_record(result=result, threads=n, config=config, steal=steal)


SWEEPS = [
    (lambda recs: sweep.sweep_record("triad", recs, 0.95, config={"bind": "compact"}), sweep_view.render),
    (lambda recs: mpi_stream.sweep_record("triad", recs), mpi_stream_view.render),
]


@pytest.mark.parametrize("build, render", SWEEPS, ids=["sweep", "mpi-stream"])
@pytest.mark.parametrize("stolen", [True, False])
def test_a_sweep_says_what_the_host_took_from_any_of_its_runs(make_record, build, render, stolen):
    steals = [None, {"share": 0.07 if stolen else 0.001, "seconds": 0.5}, {"share": 0.0, "seconds": 0.0}]
    rec = records.validate(build([_stream_point(make_record, n + 1, s) for n, s in enumerate(steals)]))
    out = io.StringIO()
    render(Console(file=out, width=200), rec)
    said = "the host took up to 7% of the CPUs' time (0.50 s in all) in its 3 runs"
    assert (said in out.getvalue()) is stolen, out.getvalue()


def test_records_without_steal_say_nothing():
    assert steal_notes([{"provenance": {}}, {}]) == []


class StolenSection(FakeSection):
    """A section whose one record ran while the host took a share of its CPUs."""

    def __init__(self, record: dict):
        super().__init__()
        self.record = record

    def collect(self, ctx):
        ctx.save(self.record)


@pytest.mark.parametrize("share, shown", [(0.06, True), (0.002, False), (None, False)])
def test_the_page_says_when_the_host_took_the_cpus_time(tmp_path, capsys, fake, make_record, share, shown):
    steal = None if share is None else {"share": share, "seconds": 0.4}
    fake(StolenSection(make_record(steal=steal)))
    code, stdout, _ = inproc(capsys, "report", "--sections", "fake", "--no-store", "--out", tmp_path)
    assert code == 0
    said = "the host took 6% of the CPUs' time (0.40 s) in the run"
    page_text = " ".join(" ".join(PageParts((tmp_path / "index.html").read_text()).text).split())
    assert (said in " ".join(stdout.split())) is shown
    assert (said in page_text) is shown
