"""Which nodes of a survey stand out, each figure's verdict a claim of the decision rule.

A node is slow in a figure when the decision rule (bandwall.core.decide) finds its rounds below
the other nodes' median beyond noise, and the rule's interval lies wholly below the floor: the
others' median less the margin or three robust standard deviations of the others (1.4826 times the
median absolute deviation of their medians), the larger. The survey's rounds are not paired across
nodes: each node's repetitions ran on its own machine at its own time, so a node's k-th round has no
partner on another node. The rule is therefore used as Spread.below() uses it: the node's values in
the order they ran against the others' median as a constant series. Each comparison is a claim
(bandwall.core.claims) from "the other nodes' median" to the node; its words are say()'s, with
whether the interval lies beyond the floor. A node slower only by its median, within noise, is "no
difference beyond noise", never an outlier; a figure with a single round, or none (a record from
before the rounds were kept), is too few to decide and never an outlier.

A node whose topology digest, settings or measured core count differ from the majority's stands
out whatever its figures, and so does a node whose CPUs other processes kept busy (by half a CPU or
more beyond the nodes' median, or beyond none with fewer than three nodes or against a baseline):
its figures are not its own. These are facts of the node, not comparisons of measured rounds, and
carry no claim.
Against a baseline (the figures of an earlier survey, or one node's), a node is slow when its
rounds lie below the baseline's median beyond noise and the interval below the baseline's median
less the margin. The ring's links are judged like the nodes' figures, latency the other way (lower
is better: an outlier when it rises beyond noise and beyond the ceiling)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from bandwall.core import decide, records
from bandwall.core.claims import FALLS, RISES, Claim, claim, say
from bandwall.core.errors import UsageError
from bandwall.core.spread import Spread, fmt
from bandwall.survey import node as node_mod

TOOL = "survey"
DEFAULT_MARGIN = 0.10
MAD_SIGMAS = 3.0
MAD_SCALE = 1.4826  # MAD to the standard deviation of a normal population
LINK_FIGURES = ("bandwidth_GBps", "latency_us")  # of each link of the ring
LOWER_IS_BETTER = {"latency_us"}
BUSY_CPUS = 0.5  # other processes' CPU use that marks a node as not measured alone
NAMES = {
    **node_mod.NAMES,
    "link_bandwidth_GBps": "link bandwidth",
    "link_latency_us": "link latency",
}
OUTLIER = "an outlier"
NOT_OUTLIER = "not an outlier"


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
            k: {x: v[x] for x in ("median", "min", "max", "unit", "values") if x in v}
            for k, v in r["figures"].items()
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


def judge(
    nodes: list[dict], margin: float = DEFAULT_MARGIN, baseline: dict | None = None
) -> tuple[list[dict], list[dict]]:
    """The outliers among node summaries (node, metric, value, the others' median or the baseline's,
    reason, claims) and every comparison of a node's figure the decision rule made (node, metric,
    outlier, worse: the direction that would make it one, limit, words, claims)."""
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
    compared: list[dict] = []
    for key in sorted({k for n in nodes for k in n["figures"]}):
        have = [(n, n["figures"][key]) for n in nodes if key in n["figures"]]
        rows, done = _beyond(have, key, margin, baseline, "nodes")
        out += rows
        compared += done
    return out, compared


def judge_links(
    links: list[dict], margin: float = DEFAULT_MARGIN, baseline: dict | None = None
) -> tuple[list[dict], list[dict]]:
    """The ring's links that stand out: bandwidth below, or latency above, the other links' median by
    the same rule as the nodes' figures, and every comparison made. A row's node is the link, named
    by its two nodes. A link whose two nodes are one machine crosses no network: shown, not judged."""
    out, compared = [], []
    judged = [ln for ln in links if not ln.get("one_machine")]
    for key in LINK_FIGURES:
        have = [({"node": f"{ln['from']}-{ln['to']}"}, ln[key]) for ln in judged if key in ln]
        rows, done = _beyond(
            have, f"link_{key}", margin, baseline, "links", lower_is_better=key in LOWER_IS_BETTER
        )
        out += rows
        compared += done
    return out, compared


def rounds_of(f: dict) -> Spread:
    """A figure's spread with its rounds in the order they ran (none in a record from before they
    were kept: then the rule has nothing to decide on)."""
    unit = f.get("unit", "")
    values = f.get("values") or ()
    if values:
        return Spread.of(values, unit)
    return Spread(f["median"], f["min"], f["max"], 0, unit, ())


def _against(ref: float, end: Spread) -> Spread:
    """The reference as a constant series beside the item's rounds (the rounds are not paired across
    nodes: the rule judges the item's values against one number, as Spread.below() does)."""
    return Spread.of([ref] * len(end.values), end.unit) if end.values else Spread(ref, ref, ref, 0, end.unit)


def compare(
    item: str,
    key: str,
    f: dict,
    ref: float,
    limit: float,
    against: str,
    limit_why: str,
    lower_is_better: bool = False,
) -> dict:
    """The decision rule on one item's figure against a reference (the others' median or the
    baseline's): its claim, and whether it is an outlier, which it is only when the claim goes the
    bad way (falls; rises for a lower-is-better figure) beyond noise and the rule's interval lies
    wholly beyond limit. The words are the claim's (say()), then whether the interval lies beyond
    the limit (limit_why says what the limit is), chosen by the claim's direction."""
    end = rounds_of(f)
    c = claim(NAMES.get(key, key), _against(ref, end), end, against, item, paired=False)
    bad = RISES if lower_is_better else FALLS
    beyond = False
    if c.interval is not None and ref > 0:
        lo, hi = c.interval
        beyond = lo * ref > limit if lower_is_better else hi * ref < limit
    outlier = c.direction == bad and beyond
    return {
        "node": item,
        "metric": key,
        "outlier": outlier,
        "worse": bad,
        "limit": limit,
        "words": words(c, outlier, limit, limit_why, lower_is_better),
        "claims": [c.to_json()],
    }


def words(c: Claim, outlier: bool, limit: float, limit_why: str, lower_is_better: bool = False) -> str:
    """A comparison's verdict in words: say(c), then, when the claim goes the bad way beyond noise,
    whether the rule's interval (in the figure's unit: the ratios times the reference) lies wholly
    beyond the limit (an outlier) or not; else not an outlier."""
    side = "above" if lower_is_better else "below"
    bad = RISES if lower_is_better else FALLS
    if c.direction != bad or c.interval is None:
        return f"{say(c)}: {NOT_OUTLIER}"
    unit = f" {c.unit}" if c.unit else ""
    ref = c.start.value
    span = f"the interval, {fmt(c.interval[0] * ref)} to {fmt(c.interval[1] * ref)}{unit},"
    where = f"{side} {fmt(limit)}{unit} ({limit_why})"
    if outlier:
        return f"{say(c)}; {span} lies wholly {where}: {OUTLIER}"
    return f"{say(c)}; {span} does not lie wholly {where}: {NOT_OUTLIER}"


def _beyond(
    have: list[tuple[dict, dict]],
    key: str,
    margin: float,
    baseline: dict | None,
    whose: str,
    lower_is_better: bool = False,
) -> tuple[list[dict], list[dict]]:
    """Each item's figure against the other items' median (or the baseline's) by the decision rule
    (compare()): the outlier rows and every comparison. The limit lies the margin, or three robust
    deviations of the others' medians, the larger, beyond the reference on the bad side."""
    sign = 1 if lower_is_better else -1
    less = "plus" if lower_is_better else "less"
    if baseline is not None and key not in baseline:
        return [], []
    if baseline is None and len(have) < 3:
        return [], []
    rows, compared = [], []
    for k, (item, f) in enumerate(have):
        if baseline is not None:
            ref = float(baseline[key])
            room = margin * ref
            against = "the baseline's median"
            why = f"the baseline's median {less} the {margin:.0%} margin"
        else:
            medians = [g["median"] for j, (_, g) in enumerate(have) if j != k]
            ref = statistics.median(medians)
            mad = MAD_SCALE * statistics.median(abs(m - ref) for m in medians)
            room = max(margin * ref, MAD_SIGMAS * mad)
            against = f"the other {whose}' median"
            why = (
                f"the other {whose}' median {less} the {margin:.0%} margin or {MAD_SIGMAS:g} robust "
                f"deviations of theirs ({fmt(mad)}), the larger"
            )
        c = compare(item["node"], key, f, ref, ref + sign * room, against, why, lower_is_better)
        compared.append(c)
        if c["outlier"]:
            rows.append(
                _row(item, key, f["median"], ref, c["words"], unit=f.get("unit", ""), claims=c["claims"])
            )
    return rows, compared


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
        **{
            k: {**{x: ln[k][x] for x in ("median", "min", "max", "values") if x in ln[k]}, "unit": units[k]}
            for k in LINK_FIGURES
        },
    }


def _row(n: dict, metric: str, value, median, reason: str, claims: list | None = None, **extra) -> dict:
    """An outlier: claims are the decision rule's on a figure (none for a fact of the node, such as a
    setting, its topology or its CPUs kept busy by others)."""
    return {
        "node": n["node"],
        "metric": metric,
        "value": value,
        "population_median": median,
        "reason": reason,
        **extra,
        "claims": list(claims or []),
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
    outliers, compared = judge(nodes, margin, baseline)
    hosts = {n["node"]: n.get("host") for n in nodes}
    links = [_link(ln, hosts) for ln in ring["result"]["links"]] if ring else []
    link_outliers, link_compared = judge_links(links, margin, baseline)
    outliers += link_outliers
    compared += link_compared
    config = {
        "margin": margin,
        "nodes": len(nodes),
        "mad_sigmas": MAD_SIGMAS,
        "busy_cpus": BUSY_CPUS,
        "rule": decide.rule().text(),
    }
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
                "comparisons": compared,
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
            "provenance": records.provenance_of_parts(node_recs[0], node_recs),
        }
    )
