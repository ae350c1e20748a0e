"""bandwall tune: builds the space of a target, resumes its stored trials, searches, and makes the
tune record (result.best, result.trials, result.space_size, result.runs, result.surplus_cores,
result.command, result.final_race: what the search's final race ran and whether the budget cut it
short, and the verdict's claims: result.claims and their words, result.claims_said)."""

from __future__ import annotations

import math
from typing import Callable

from bandwall.core import decide, records, store
from bandwall.core.errors import RunFailed, UsageError
from bandwall.engine.pipeline import takes_cpus
from bandwall.tune import space as space_mod
from bandwall.tune import targets, verdict
from bandwall.tune.search import FINAL_SHARE, MIN_ROUNDS, Search
from bandwall.tune.trials import Trials, resume, trial_record

TOOL = "tune"
# An exhaustive search measures every distinct configuration (binding words that put the threads on
# the same CPUs counted once) this many times in rotated rounds; the default budget is a quarter.
EXHAUSTIVE_ROUNDS = 3
DEFAULT_SHARE = 0.25
MIN_BUDGET = 4
FINAL_MEMBERS = 3  # the final race's best, runner-up and model's guess


def default_budget(size: int) -> int:
    """A quarter of an exhaustive search's runs, and never too few for the search's final race: the
    decision rule's rounds for the best and the (at most) two configurations it races with there,
    either beside every configuration measured the walk's MIN_ROUNDS times or as the share of the
    budget the walk leaves it (FINAL_SHARE), whichever is fewer (a small space needs the first)."""
    quarter = math.ceil(DEFAULT_SHARE * EXHAUSTIVE_ROUNDS * size)
    if size < 2:
        return max(MIN_BUDGET, quarter)
    final = min(size, FINAL_MEMBERS) * decide.rule().rounds
    floor = min(final + MIN_ROUNDS * size, math.ceil(final / FINAL_SHARE))
    return max(MIN_BUDGET, quarter, floor)


def prepare(words: list[str], names: list[str] | None, db, keep, **options):
    """(machine, target, space): the space of the target the words name, narrowed to names."""
    m = space_mod.machine()
    target = targets.make(words, m, **options)
    sp = target.space(m, db, keep)
    if names is not None:
        sp = sp.narrow(names)
    if not m.isas and "isa" in sp.names():
        raise RunFailed("the topology offers no instruction-set variant")
    return m, target, sp


def tune(
    words: list[str],
    names: list[str] | None = None,
    budget: int | None = None,
    seconds: float | None = None,
    db=None,
    no_store: bool = False,
    progress: Callable[[dict, float | None, dict, int], None] | None = None,
    **options,
) -> dict:
    """Tunes the target the words name (a kernel, iso3dfd, pipeline, or a command) and returns the
    tune record (stored unless no_store, as is every trial). options: size, reps, grid, iters,
    kernel (pipeline), fom, lower, timeout (command). A budget of runs or seconds bounds it; with
    neither, the budget is a quarter of an exhaustive search's runs."""
    keep = store.Series(db, no_store)
    m, target, sp = prepare(words, names, db, keep, **options)
    distinct = len(sp.grid())
    if budget is None and seconds is None:
        budget = default_budget(distinct)

    def on_trial(config: dict, rate: float | None, detail: dict) -> None:
        rec = trial_record(sp, m, config, rate, dict(detail), target.unit)
        keep(rec)
        if progress:
            progress(config, rate, detail, trials.runs)

    trials = Trials(sp, lambda c: target.run({**sp.fixed, **c}), budget, seconds, on_trial)
    resume(trials, sp, m, db)
    outcome = Search(sp, trials).run()
    if outcome.best is None:
        failures = [r["failure"] for r in trials.table() if "failure" in r]
        why = f": {failures[0]}" if failures else " (the budget allowed none)"
        raise RunFailed(f"no configuration of {sp.target} gave a rate{why}")
    rec = record(m, target, sp, trials, outcome, budget, seconds, distinct)
    if not no_store:
        # kept only when the claims find the best better beyond noise than every other compared
        decided = verdict.set_apart(verdict.stored_claims(rec))
        kept = target.settled({**sp.fixed, **outcome.best}, trials.row(outcome.best), decided)
        if kept:
            rec["result"]["kept"] = kept
        rec["id"] = store.save(rec, db)
    return rec


def record(m, target, sp, trials: Trials, outcome, budget, seconds, distinct: int) -> dict:
    best = outcome.best
    full = {**sp.fixed, **best}
    row = trials.row(best)
    threads = int(full.get("threads") or len(m.cpus))
    result = {
        "best": {k: row[k] for k in ("config", "median", "min", "max", "rounds")},
        "unit": target.unit,
        "why": outcome.why,
        "indistinguishable": [trials.row(c) for c in outcome.tied],
        "spread": trials.noise(),
        "trials": trials.table(),
        "space_size": sp.size(),
        "distinct_configurations": distinct,
        "runs": trials.runs,
        "resumed_trials": trials.resumed,
        "guide_runs": target.guide_runs,
        "exhaustive_runs": distinct * EXHAUSTIVE_ROUNDS,
        # an engine that runs on CPUs of its own takes the CPUs the threads leave (bandwall-pipeline's
        # default)
        "surplus_cores": 0
        if full.get("engine") and takes_cpus(full["engine"])
        else max(0, len(m.cpus) - threads),
        "stopped": outcome.stopped,
        # the final race: the rounds it gave each pair the verdict compares, and whether the budget
        # cut it short of the decision rule's rounds
        "final_race": outcome.final,
        "command": target.commands(full),
    }
    config = {
        "target": sp.target,
        "knobs": {k.name: list(k.values) for k in sp.knobs},
        "fixed": sp.fixed,
        "left_out": sp.left_out,
        "notes": target.notes,
        "space": sp.digest(),
        "build": m.build,
        "budget_runs": budget,
        "budget_seconds": seconds,
        "exhaustive_rounds": EXHAUSTIVE_ROUNDS,
    }
    prov = dict(m.record["provenance"])
    prov.update(
        threads=threads,
        cpus=str(row.get("summary", {}).get("cpus", prov.get("cpus", ""))),
        binding=str(full.get("bind", "")),
        placement=str(full.get("placement", "first-touch")),
        repetitions=trials.runs,
    )
    if sp.target == "command":
        validation = records.not_applicable("compares the speed of a user's program under configurations")
    else:
        validation = records.checked(
            True,
            "every trial that gave a rate validated its kernel's answer; a failed check is a failed trial",
        )
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": TOOL,
        "config": config,
        "result": result,
        "validation": validation,
        "provenance": prov,
    }
    verdict.add_claims(rec)  # the verdict's claims are the record's, stored with it
    return records.finish(rec)


def check_bounds(budget: int | None, seconds: float | None) -> None:
    if budget is not None and budget < 1:
        raise UsageError(f"--budget {budget} must be at least 1 run")
    if seconds is not None and not seconds > 0:
        raise UsageError(f"--time {seconds} must be more than 0 seconds")
