#!/usr/bin/env python3
"""Runs `bandwall report --quick` several times on this machine and checks, on each report's own
record, that no card says what its figures contradict: every claim a card carries is worded in its
verdict or evidence (say()), a claim that rises or falls goes the way its medians go, no two cards
of one report state one comparison (figure, from, to) in different directions, and no card says the
bandwidth "still rises" or the cores "still add" without a claim that rises. Prints each card with
its claims' count and verdict, and every problem found; exits 1 when any was.

    python3 bench/report_claims.py --runs 3
    python3 bench/report_claims.py --record report.json   # check a stored record, run nothing
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import common

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))


def problems(rec: dict) -> tuple[list[str], list[str]]:
    """(one line per card, one line per problem) of a report record."""
    from bandwall.core.claims import FALLS, RISES, Claim, say

    seen: dict = {}
    cards, bad = [], []
    for line in rec["result"]["advice"]:
        topic, words = line["topic"], line["verdict"] + " " + line.get("evidence", "")
        claims = [Claim.from_json(c) for c in line.get("claims", [])]
        for c in claims:
            if say(c) not in words:
                bad.append(f"{topic}: a claim not worded: {say(c)}")
            if c.direction == RISES and not c.end.value > c.start.value:
                bad.append(f"{topic}: says rises, its medians do not")
            if c.direction == FALLS and not c.end.value < c.start.value:
                bad.append(f"{topic}: says falls, its medians do not")
            key = (c.figure, c.start.label, c.end.label)
            if seen.setdefault(key, c.direction) != c.direction:
                bad.append(f"{topic}: contradicts another card on {key}")
        rising = any(c.direction == RISES for c in claims)
        if ("still rises" in line["verdict"] or "still add" in line["verdict"]) and not rising:
            bad.append(f"{topic}: says still rises or still adds without a claim that rises")
        cards.append(f"{topic}: {len(claims)} claim(s): {line['verdict']}")
    return cards, bad


def main() -> int:
    p = common.parser(__doc__, rounds=None)
    p.add_argument("--runs", type=int, default=3, help="reports to run (default 3)")
    p.add_argument("--record", default=None, help="check this report record (JSON) instead of running")
    a = common.parse(p)
    found = 0
    recs = []
    if a.record:
        doc = json.loads(Path(a.record).read_text())
        recs.append(doc[-1] if isinstance(doc, list) else doc)
    else:
        exe = common.tool(a.bindir, "bandwall")
        for run in range(a.runs):
            with tempfile.TemporaryDirectory(prefix="bandwall-report-") as out:
                proc = subprocess.run(
                    [exe, "report", "--quick", "--no-store", "--out", out, "--format", "json"],
                    capture_output=True,
                    text=True,
                )
            if proc.returncode != 0:
                print(f"run {run + 1}: bandwall report failed: {proc.stderr.strip().splitlines()[-1:]}")
                return 1
            doc = json.loads(proc.stdout)
            recs.append(doc[-1] if isinstance(doc, list) else doc)  # the report record comes last
    for i, rec in enumerate(recs, 1):
        cards, bad = problems(rec)
        print(f"report {i}: {len(cards)} cards, {len(bad)} problem(s)")
        for c in cards:
            print(f"  - {c}")
        for b in bad:
            print(f"  PROBLEM {b}")
        found += len(bad)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
