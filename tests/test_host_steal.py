"""The line a run's view prints when a virtual machine's host took its CPUs' time (provenance.steal)."""

from __future__ import annotations

import pytest

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
