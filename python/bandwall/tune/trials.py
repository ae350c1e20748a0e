"""The trials of bandwall tune: each run of a configuration, its rate or its failure, bounded by a
budget of runs or seconds, and stored as a record (tool "tune-trial") as it finishes, so a second
tune of the same space on the same machine and build resumes from them instead of starting over.

A stored trial is reused when its topology digest, build (git revision, compiler, flags), target,
fixed options and configuration are this run's: that is the configuration it measured.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from typing import Callable

from bandwall.core import records, store
from bandwall.core.errors import BandwallError, RunFailed
from bandwall.tune.search import OutOfBudget, Stats, stats

TOOL = "tune-trial"
# When the first configurations all fail with one message, as many as the model's guess and every
# configuration one knob away from it (at least ALIKE), the input is bad (a figure of merit that
# never matches), not a knob: the tune ends.
ALIKE = 3


class Trials:
    """run(config) -> (rate, summary dict) runs one trial or raises BandwallError (a failed trial).

    budget: runs allowed in this invocation; seconds: wall time allowed (None: no bound);
    on_trial(config, rate or None, summary or failure): called after each run (storing, progress).
    """

    def __init__(
        self,
        space,
        run: Callable[[dict], tuple[float, dict]],
        budget: int | None = None,
        seconds: float | None = None,
        on_trial: Callable[[dict, float | None, dict], None] | None = None,
    ):
        self.space, self._run = space, run
        self.budget, self.seconds = budget, seconds
        self.on_trial = on_trial
        self.start = time.monotonic()
        self.held = 0.0  # the share of the budget (runs and seconds) held back, for a final race
        self.runs = 0
        self.resumed = 0
        self._rates: dict[str, list[float]] = {}
        self._failures: dict[str, str] = {}
        self._configs: dict[str, dict] = {}
        self._summary: dict[str, dict] = {}

    # -- what the search reads -------------------------------------------------------------------

    def stats(self, config: dict) -> Stats | None:
        rates = self._rates.get(self.space.key(config))
        return stats(rates) if rates else None

    def rates(self, config: dict) -> list[float]:
        """Its rates in the order they were measured (the rounds the decision rule pairs)."""
        return list(self._rates.get(self.space.key(config), []))

    def failed(self, config: dict) -> bool:
        return self.space.key(config) in self._failures

    def measured(self) -> list[dict]:
        return list(self._configs.values())

    def noise(self) -> float:
        """The spread measured in this run: the median of the relative standard deviations of the
        configurations measured at least twice (0 when none is); the median, so that one
        configuration that runs erratically (oversubscribed, say) does not blur all the others."""
        spreads = [stats(r).spread for r in self._rates.values() if len(r) >= 2]
        return statistics.median(spreads) if spreads else 0.0

    def measure(self, config: dict) -> None:
        """One more run of config; OutOfBudget when the runs or the time are spent (all but the
        share held)."""
        left = 1.0 - self.held
        if self.budget is not None and self.runs >= math.ceil(self.budget * left):
            raise OutOfBudget()
        if self.seconds is not None and time.monotonic() - self.start >= self.seconds * left:
            raise OutOfBudget()
        config = self.space.canonical(config)
        key = self.space.key(config)
        self._configs.setdefault(key, config)
        try:
            rate, summary = self._run(config)
        except BandwallError as e:
            self.runs += 1
            self._failures[key] = str(e)
            if self.on_trial:
                self.on_trial(config, None, {"failure": str(e)})
            alike = max(ALIKE, 1 + sum(len(k.values) - 1 for k in self.space.knobs))
            if not self._rates and len(self._failures) >= alike and len(set(self._failures.values())) == 1:
                raise RunFailed(f"the first {alike} configurations failed alike: {e}") from e
            return
        self.runs += 1
        self._rates.setdefault(key, []).append(float(rate))
        self._summary[key] = {k: v for k, v in summary.items() if k not in ("provenance", "validation")}
        if self.on_trial:
            self.on_trial(config, float(rate), summary)

    def add_stored(self, config: dict, rate: float | None, failure: str | None = None) -> None:
        """A trial measured by an earlier tune (resume)."""
        config = self.space.canonical(config)
        key = self.space.key(config)
        self._configs.setdefault(key, config)
        self.resumed += 1
        if failure is not None:
            self._failures[key] = failure
        else:
            self._rates.setdefault(key, []).append(float(rate))

    # -- what the record shows -------------------------------------------------------------------

    def table(self) -> list[dict]:
        """Each configuration tried: its rates (median, min, max, rounds) or its failure."""
        rows = []
        for key, config in self._configs.items():
            row: dict = {"config": config}
            if key in self._failures:
                row["failure"] = self._failures[key]
            elif key in self._rates:
                st = stats(self._rates[key])
                row.update(
                    rates=list(self._rates[key]), median=st.median, min=st.min, max=st.max, rounds=st.rounds
                )
                if key in self._summary:
                    row["summary"] = self._summary[key]
            else:
                continue
            rows.append(row)
        return rows

    def row(self, config: dict) -> dict:
        key = self.space.key(self.space.canonical(config))
        return next(r for r in self.table() if self.space.key(r["config"]) == key)


def trial_key(space, config: dict) -> str:
    """Names one run: the target and every option, searched or fixed (whatever space it came from)."""
    text = json.dumps({"target": space.target, "options": {**space.fixed, **config}}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def trial_record(space, machine, config: dict, rate: float | None, detail: dict, unit: str) -> dict:
    """The stored record of one trial: its configuration, rate or failure, and the run's provenance
    (the kernel's own where it printed a record, else the topology's)."""
    prov = dict(detail.pop("provenance", None) or machine.record["provenance"])
    result: dict = {"unit": unit}
    if rate is None:
        result["failure"] = detail.get("failure", "failed")
    else:
        result["rate"] = rate
        result.update(detail)
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": TOOL,
        "config": {
            "target": space.target,
            "space": space.digest(),
            "trial_key": trial_key(space, config),
            "knobs": config,
            "fixed": space.fixed,
            "build": machine.build,
        },
        "result": result,
        "validation": detail.pop("validation", None)
        or records.not_applicable("the trial failed before it could check anything"),
        "provenance": prov,
    }
    return records.finish(rec)


def resume(trials: Trials, space, machine, db) -> None:
    """Feeds the trials stored for this machine, build, target and fixed options to trials."""
    try:
        with store.Store(db, readonly=True) as s:
            stored = s.list(TOOL, oldest_first=True)
    except BandwallError:
        return
    fixed = json.dumps(space.fixed, sort_keys=True)
    for rec in stored:
        cfg = rec["config"]
        if (
            rec["provenance"].get("topology_digest") != machine.digest
            or cfg.get("build") != machine.build
            or cfg.get("target") != space.target
        ):
            continue
        full = {**cfg.get("fixed", {}), **cfg.get("knobs", {})}
        if set(full) != set(space.fixed) | set(space.names()):
            continue
        if json.dumps({k: full[k] for k in space.fixed}, sort_keys=True) != fixed:
            continue
        r = rec["result"]
        trials.add_stored({n: full[n] for n in space.names()}, r.get("rate"), r.get("failure"))
