"""Which nodes of a survey stand out, by robust statistics over the nodes.

A node is slow in a figure when even its best repetition lies below the population's median (the
median of the nodes' medians) by more than the margin and by more than three robust standard
deviations of the population (1.4826 times the median absolute deviation of the nodes' medians):
its own spread, the population's spread and a stated margin all have to agree. A node whose
topology digest or whose settings differ from the majority's stands out whatever its figures.
Against a baseline (the figures of an earlier survey, or one node's), a node is slow when its
best repetition lies below the baseline's median by more than the margin."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from bandwall.core import records
from bandwall.core.errors import UsageError
from bandwall.survey import node as node_mod

TOOL = "survey"
DEFAULT_MARGIN = 0.10
MAD_SIGMAS = 3.0
MAD_SCALE = 1.4826  # MAD to the standard deviation of a normal population


def check_margin(margin: float) -> float:
    if not 0 < margin < 1:
        raise UsageError(f"--margin {margin!r} must be a share between 0 and 1 (0.1: 10%)")
    return margin


def _majority(values: Sequence) -> tuple[object, int]:
    value, count = Counter(map(repr, values)).most_common(1)[0]
    return next(v for v in values if repr(v) == value), count


def summary(rec: dict) -> dict:
    r = rec["result"]
    return {
        "node": r["node"],
        "digest": r["digest"],
        "figures": {
            k: {x: v[x] for x in ("median", "min", "max", "unit") if x in v} for k, v in r["figures"].items()
        },
        "settings": r["settings"],
    }


def judge(nodes: list[dict], margin: float = DEFAULT_MARGIN, baseline: dict | None = None) -> list[dict]:
    """The outliers among node summaries: node, metric, value, population median (or the
    baseline's), reason."""
    check_margin(margin)
    out: list[dict] = []
    many = len(nodes) >= 3
    if many:
        digest, votes = _majority([n["digest"] for n in nodes])
        if votes > len(nodes) / 2:
            for n in nodes:
                if n["digest"] != digest:
                    out.append(
                        _row(n, "topology", n["digest"], digest, "its topology differs from the majority's")
                    )
        for key in sorted({k for n in nodes for k in n["settings"]}):
            values = [n["settings"].get(key) for n in nodes]
            common, votes = _majority(values)
            if votes <= len(nodes) / 2:
                continue
            for n, v in zip(nodes, values):
                if v != common:
                    out.append(_row(n, key, v, common, f"setting {key} is {v!r}, the majority's {common!r}"))
    for key in sorted({k for n in nodes for k in n["figures"]}):
        have = [n for n in nodes if key in n["figures"]]
        if baseline is not None:
            if key not in baseline:
                continue
            ref, floor = baseline[key], baseline[key] * (1 - margin)
            why = f"its best is below the baseline's median {ref:.4g} by more than {margin:.0%}"
        elif len(have) >= 3:
            medians = [n["figures"][key]["median"] for n in have]
            ref = statistics.median(medians)
            mad = statistics.median(abs(m - ref) for m in medians)
            floor = ref - max(margin * ref, MAD_SIGMAS * MAD_SCALE * mad)
            why = (
                f"its best is below the nodes' median {ref:.4g} by more than {margin:.0%} and "
                f"{MAD_SIGMAS:g} robust deviations ({MAD_SCALE * mad:.3g})"
            )
        else:
            continue
        for n in have:
            f = n["figures"][key]
            if f["max"] < floor:
                out.append(_row(n, key, f["median"], ref, why, best=f["max"], unit=f.get("unit", "")))
    return out


def _row(n: dict, metric: str, value, median, reason: str, **extra) -> dict:
    return {
        "node": n["node"],
        "metric": metric,
        "value": value,
        "population_median": median,
        "reason": reason,
        **extra,
    }


def baseline_of(rec: dict) -> dict[str, float]:
    """The figures to judge against: a survey's medians over its nodes, or one node's medians."""
    if rec.get("tool") == TOOL:
        nodes = rec["result"]["nodes"]
        keys = {k for n in nodes for k in n["figures"]}
        return {
            k: statistics.median(n["figures"][k]["median"] for n in nodes if k in n["figures"]) for k in keys
        }
    if rec.get("tool") == node_mod.TOOL:
        return {k: v["median"] for k, v in rec["result"]["figures"].items()}
    raise UsageError(f"a baseline must be a {TOOL} or {node_mod.TOOL} record, not {rec.get('tool')!r}")


def survey_record(
    node_recs: list[dict], margin: float = DEFAULT_MARGIN, baseline: dict | None = None
) -> dict:
    """The survey's record: every node's figures and settings, and the outliers."""
    nodes = [summary(r) for r in node_recs]
    names = [n["node"] for n in nodes]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        raise UsageError(f"node {twice[0]!r} has more than one record: give one record per node")
    outliers = judge(nodes, margin, baseline)
    config = {"margin": margin, "nodes": len(nodes), "mad_sigmas": MAD_SIGMAS}
    if baseline is not None:
        config["baseline"] = baseline
    return records.validate(
        {
            "schema_version": records.SCHEMA_VERSION,
            "tool": TOOL,
            "config": config,
            "result": {
                "nodes": nodes,
                "outliers": outliers,
                "flagged": sorted({o["node"] for o in outliers}),
                "judged": "against the baseline"
                if baseline is not None
                else (
                    "against the other nodes"
                    if len(nodes) >= 3
                    else "too few nodes to judge figures (3 at least)"
                ),
            },
            "validation": records.of_parts(node_recs, "node records"),
            "provenance": dict(node_recs[0]["provenance"]),
        }
    )
