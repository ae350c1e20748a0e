"""Placement and binding policies are tables on the native side (bandwall-topo --list-policies):
every row is accepted as written, applied, and listed in the help of the front end."""

from __future__ import annotations

import json

import pytest

from bandwall.core import policies

PLACEMENTS = policies.table()["placement"]
BINDINGS = policies.table()["binding"]


def written(row: dict) -> str:
    """The row as a user writes it, with node 0 where it takes nodes."""
    return row["name"] + (":0" if ":" in row["syntax"] else "")


@pytest.mark.parametrize("row", PLACEMENTS, ids=[r["name"] for r in PLACEMENTS])
def test_every_placement_row_is_applied(run_bandwall, row):
    p = run_bandwall("place", "--placement", written(row), "--size", "1M", "--format", "json", "--no-store")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["placement"]["policy"].split(":")[0] == row["name"]
    assert all(abs(sum(m.values()) - 1) < 1e-9 for m in rec["placement"]["page_map"].values())


@pytest.mark.parametrize("row", BINDINGS, ids=[r["name"] for r in BINDINGS])
def test_every_binding_row_is_accepted(run_bandwall, row):
    p = run_bandwall("place", "--bind", written(row), "--size", "1M", "--format", "json", "--no-store")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["provenance"]["binding"] == written(row)


@pytest.mark.parametrize("command", ["stream", "sweep", "place"])
def test_help_lists_every_row(run_bandwall, command):
    out = run_bandwall(command, "--help").stdout.replace("\n", " ")
    out = " ".join(out.split())  # click wraps the help
    for row in PLACEMENTS + BINDINGS:
        assert row["syntax"] in out, row
