"""Which nodes of a survey stand out, by robust statistics over the nodes.

A node is slow in a figure when even its best repetition lies below the population's median (the
median of the nodes' medians) by more than the margin and by more than three robust standard
deviations of the population (1.4826 times the median absolute deviation of the nodes' medians):
its own spread, the population's spread and a stated margin all have to agree. A node whose
topology digest, settings or measured core count differ from the majority's stands out whatever
its figures, and so does a node whose CPUs other processes kept busy (by half a CPU or more beyond
the nodes' median, or beyond none with fewer than three nodes or against a baseline): its figures
are not its own.
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
LINK_FIGURES = ("bandwidth_GBps", "latency_us")  # of each link of the ring
LOWER_IS_BETTER = {"latency_us"}
BUSY_CPUS = 0.5  # other processes' CPU use that marks a node as not measured alone


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
        "cores": rec["config"]["cores"],
        **({"load": r["load"]} if "load" in r else {}),
        **({"host": r["host"]} if "host" in r else {}),
    }


def _busy(nodes: list[dict], against_none: bool) -> list[dict]:
    """Nodes whose CPUs others kept busy while the survey watched them."""
    have = [n for n in nodes if "load" in n]
    if not have:
        return []
    busy = [n["load"]["busy_cpus"] for n in have]
    ref = 0.0 if against_none or len(have) < 3 else statistics.median(busy)
    out = []
    for n, b in zip(have, busy):
        if b - ref >= BUSY_CPUS:
            who = ", ".join(
                f"{p['command']} (pid {p['pid']}) {p['cpus']:.2g}" for p in n["load"]["processes"]
            )
            out.append(
                _row(
                    n,
                    "busy_cpus",
                    b,
                    ref,
                    f"other processes kept {b:.2g} of its CPUs busy ({who or 'short-lived processes'}), "
                    f"{BUSY_CPUS:g} or more beyond {ref:.2g}",
                )
            )
    return out


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
        cores, votes = _majority([n.get("cores") for n in nodes])
        if cores is not None and votes > len(nodes) / 2:
            for n in nodes:
                if n.get("cores") is not None and n["cores"] != cores:
                    why = (
                        f"measured on {n['cores']} cores, the majority on {cores}: its all-core figures are "
                        "not comparable (allocate whole nodes: salloc --exclusive)"
                    )
                    out.append(_row(n, "cores", n["cores"], cores, why))
        for key in sorted({k for n in nodes for k in n["settings"]}):
            values = [n["settings"].get(key) for n in nodes]
            common, votes = _majority(values)
            if votes <= len(nodes) / 2:
                continue
            for n, v in zip(nodes, values):
                if v != common:
                    out.append(_row(n, key, v, common, f"setting {key} is {v!r}, the majority's {common!r}"))
    out += _busy(nodes, against_none=baseline is not None)
    for key in sorted({k for n in nodes for k in n["figures"]}):
        have = [(n, n["figures"][key]) for n in nodes if key in n["figures"]]
        out += _beyond(have, key, margin, baseline, "nodes'")
    return out


def judge_links(
    links: list[dict], margin: float = DEFAULT_MARGIN, baseline: dict | None = None
) -> list[dict]:
    """The ring's links that stand out: bandwidth below, or latency above, the links' median by the
    same rule as the nodes' figures. A row's node is the link, named by its two nodes. A link whose
    two nodes are one machine crosses no network: shown, not judged."""
    out = []
    judged = [ln for ln in links if not ln.get("one_machine")]
    for key in LINK_FIGURES:
        have = [({"node": f"{ln['from']}-{ln['to']}"}, ln[key]) for ln in judged if key in ln]
        out += _beyond(
            have, f"link_{key}", margin, baseline, "links'", lower_is_better=key in LOWER_IS_BETTER
        )
    return out


def _beyond(
    have: list[tuple[dict, dict]],
    key: str,
    margin: float,
    baseline: dict | None,
    whose: str,
    lower_is_better: bool = False,
) -> list[dict]:
    """Rows for the items whose best repetition lies beyond the population's (or the baseline's)
    median, on the bad side, by the margin and three robust deviations."""
    worse, best_of = ("above", "min") if lower_is_better else ("below", "max")
    sign = -1 if lower_is_better else 1
    if baseline is not None:
        if key not in baseline:
            return []
        ref, room = baseline[key], margin * baseline[key]
        why = f"its best is {worse} the baseline's median {ref:.4g} by more than {margin:.0%}"
    elif len(have) >= 3:
        medians = [f["median"] for _, f in have]
        ref = statistics.median(medians)
        mad = statistics.median(abs(m - ref) for m in medians)
        room = max(margin * ref, MAD_SIGMAS * MAD_SCALE * mad)
        why = (
            f"its best is {worse} the {whose} median {ref:.4g} by more than {margin:.0%} and "
            f"{MAD_SIGMAS:g} robust deviations ({MAD_SCALE * mad:.3g})"
        )
    else:
        return []
    rows = []
    for item, f in have:
        if sign * (ref - f[best_of]) > room:
            rows.append(_row(item, key, f["median"], ref, why, best=f[best_of], unit=f.get("unit", "")))
    return rows


def shared_hosts(nodes: list[dict]) -> list[list[str]]:
    """Groups of nodes that are one machine (measured in turns, not at once)."""
    groups: dict[str, list[str]] = {}
    for n in nodes:
        if "host" in n:
            groups.setdefault(n["host"], []).append(n["node"])
    return [sorted(g) for g in groups.values() if len(g) > 1]


def _link(ln: dict, hosts: dict) -> dict:
    units = {"bandwidth_GBps": "GB/s", "latency_us": "us"}
    a, b = hosts.get(ln["from"]), hosts.get(ln["to"])
    return {
        "from": ln["from"],
        "to": ln["to"],
        "one_machine": a is not None and a == b,
        **{k: {**{x: ln[k][x] for x in ("median", "min", "max")}, "unit": units[k]} for k in LINK_FIGURES},
    }


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
        out = {
            k: statistics.median(n["figures"][k]["median"] for n in nodes if k in n["figures"]) for k in keys
        }
        for k in LINK_FIGURES:
            got = [ln[k]["median"] for ln in rec["result"].get("links", [])]
            if got:
                out[f"link_{k}"] = statistics.median(got)
        return out
    if rec.get("tool") == node_mod.TOOL:
        return {k: v["median"] for k, v in rec["result"]["figures"].items()}
    raise UsageError(f"a baseline must be a {TOOL} or {node_mod.TOOL} record, not {rec.get('tool')!r}")


def survey_record(
    node_recs: list[dict],
    margin: float = DEFAULT_MARGIN,
    baseline: dict | None = None,
    ring: dict | None = None,
    links_note: str | None = None,
    skipped: list[dict] | None = None,
    missing: list[dict] | None = None,
    timeout_s: float | None = None,
) -> dict:
    """The survey's record: every node's figures and settings, the ring's links (the mpi-ring
    record, when measured; else links_note says why not), the outliers, the files skipped ({file,
    reason}) and the nodes that gave no record to judge ({node, reason}; timeout_s: how long they
    were waited for)."""
    nodes = [summary(r) for r in node_recs]
    names = [n["node"] for n in nodes]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        raise UsageError(f"node {twice[0]!r} has more than one record: give one record per node")
    outliers = judge(nodes, margin, baseline)
    hosts = {n["node"]: n.get("host") for n in nodes}
    links = [_link(ln, hosts) for ln in ring["result"]["links"]] if ring else []
    outliers += judge_links(links, margin, baseline)
    config = {"margin": margin, "nodes": len(nodes), "mad_sigmas": MAD_SIGMAS, "busy_cpus": BUSY_CPUS}
    if baseline is not None:
        config["baseline"] = baseline
    if timeout_s is not None:
        config["timeout_s"] = timeout_s
    return records.validate(
        {
            "schema_version": records.SCHEMA_VERSION,
            "tool": TOOL,
            "config": config,
            "result": {
                "nodes": nodes,
                "outliers": outliers,
                "flagged": sorted({o["node"] for o in outliers}),
                "shared_hosts": shared_hosts(nodes),
                "skipped": list(skipped or []),
                "missing": list(missing or []),
                "links": links,
                **({"links_note": links_note} if links_note and not links else {}),
                "judged": "against the baseline"
                if baseline is not None
                else (
                    "against the other nodes"
                    if len(nodes) >= 3
                    else "too few nodes to judge figures (3 at least)"
                ),
            },
            "validation": records.of_parts(
                [*node_recs, *([ring] if ring else [])],
                "node records and the ring" if ring else "node records",
            ),
            "provenance": dict(node_recs[0]["provenance"]),
        }
    )
