"""Counter groups: parsing the group files in counter_groups/, choosing the event set a machine's
PAPI event list can count, and computing metrics from counts. Nothing here counts: the same code
runs on recorded event lists and counts of other machines (tests/fixtures/counters)."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from pathlib import Path

from bandwall.core.errors import UsageError

GROUP_DIR = Path(__file__).with_name("counter_groups")
SCOPES = ("task", "socket")


@dataclass
class EventSet:
    label: str
    events: dict[str, str] = field(default_factory=dict)  # alias -> PAPI event name
    metrics: dict[str, str] = field(default_factory=dict)  # metric name -> formula


@dataclass
class Group:
    name: str
    short: str
    scope: str
    eventsets: list[EventSet]

    def metric_names(self) -> list[str]:
        return list(dict.fromkeys(m for es in self.eventsets for m in es.metrics))


def group_names() -> list[str]:
    return sorted(p.stem for p in GROUP_DIR.glob("*.txt"))


def load(name: str) -> Group:
    """The group called name (case-insensitive); UsageError naming the known groups otherwise."""
    for n in group_names():
        if n.lower() == name.lower():
            return parse((GROUP_DIR / f"{n}.txt").read_text(), n)
    raise UsageError(f"unknown counter group {name!r} (groups: {', '.join(group_names())})")


def parse(text: str, name: str) -> Group:
    """Parses a group file (format in counter_groups/README.md); ValueError says where it is wrong."""
    short, scope, sets, in_metrics = "", "task", [], False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(" ")
        rest = rest.strip()
        where = f"group {name}, line {number}"
        if key == "SHORT":
            short = rest
        elif key == "SCOPE":
            if rest not in SCOPES:
                raise ValueError(f"{where}: SCOPE must be one of {', '.join(SCOPES)}")
            scope = rest
        elif key == "EVENTSET":
            sets.append(EventSet(rest or f"set{len(sets)}"))
            in_metrics = False
        elif key == "METRICS":
            if not sets:
                raise ValueError(f"{where}: METRICS before any EVENTSET")
            in_metrics = True
        elif not sets or not rest:
            raise ValueError(f"{where}: expected 'ALIAS EVENT' or 'NAME FORMULA', got {line!r}")
        elif in_metrics:
            _check_formula(rest, sets[-1].events, where)
            sets[-1].metrics[key] = rest
        else:
            sets[-1].events[key] = rest
    if not sets:
        raise ValueError(f"group {name}: no EVENTSET")
    return Group(name, short, scope, sets)


# --- resolution against a machine's event list ---------------------------------------------


def listed_names(listing: dict) -> set[str]:
    """Every name PAPI lists (presets and native events, with and without their PMU prefix)."""
    names = set(listing.get("presets", []))
    for comp in listing.get("components", []):
        if comp.get("disabled"):
            continue
        for ev in comp.get("events", []):
            names.add(ev)
            if "::" in ev:
                names.add(ev.split("::", 1)[1])
    return names


def _bare(event: str) -> str:
    """An event name without qualifiers that carry a value (:cpu=0, :u=1)."""
    return ":".join(p for p in event.split(":") if "=" not in p)


def resolve(group: Group, listing: dict) -> tuple[EventSet | None, str]:
    """The first event set all of whose events are listed, or (None, reason)."""
    names = listed_names(listing)
    missing_by_set = []
    for es in group.eventsets:
        missing = [ev for ev in es.events.values() if _bare(ev) not in names]
        if not missing:
            return es, ""
        missing_by_set.append(f"{es.label} lacks {missing[0]}")
    return None, f"PAPI lists no event set of group {group.name} here ({'; '.join(missing_by_set)})"


def event_names(group: Group, es: EventSet, socket_cpus: list[int]) -> dict[tuple[str, int | None], str]:
    """(alias, socket) -> the PAPI name to count; per-socket groups count each event on the first
    CPU of every socket."""
    if group.scope == "task":
        return {(alias, None): ev for alias, ev in es.events.items()}
    return {
        (alias, s): f"{ev}:cpu={cpu}" for s, cpu in enumerate(socket_cpus) for alias, ev in es.events.items()
    }


# --- metrics -------------------------------------------------------------------------------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _check_formula(formula: str, aliases: dict, where: str) -> None:
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{where}: formula {formula!r} does not parse") from e
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id != "time" and node.id not in aliases:
            raise ValueError(f"{where}: formula {formula!r} names {node.id!r}, not an alias of its event set")
        if not isinstance(
            node,
            (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.Constant, ast.Name, ast.Load, *_OPS),
        ):
            raise ValueError(f"{where}: formula {formula!r} uses {type(node).__name__}; only + - * / ( )")


def evaluate(formula: str, values: dict[str, float]) -> float:
    """The formula's value; KeyError for a missing name, ZeroDivisionError as Python raises it."""

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(values[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"formula {formula!r}: unsupported {type(node).__name__}")

    return ev(ast.parse(formula, mode="eval"))


def hardware_fields(
    group: Group,
    es: EventSet | None,
    reason: str,
    counts: dict,
    time_s: float,
    socket_cpus: list[int],
) -> dict:
    """result.hardware: every PAPI event counted (count or "unavailable: ...") and every metric of
    the group (value or "unavailable: <why>"); per-socket metrics are named NAME[socketS]."""
    sockets = [None] if group.scope == "task" else list(range(len(socket_cpus)))

    def label(metric, s):
        return metric if s is None else f"{metric}[socket{s}]"

    if es is None:
        return {label(m, s): f"unavailable: {reason}" for m in group.metric_names() for s in sockets}
    out: dict = {}
    names = event_names(group, es, socket_cpus)
    for name in names.values():
        out[name] = counts.get(name, "unavailable: not counted")
    for s in sockets:
        values, bad = {"time": time_s}, {}
        for alias in es.events:
            c = counts.get(names[(alias, s)])
            if isinstance(c, (int, float)) and not isinstance(c, bool):
                values[alias] = c
            else:
                bad[alias] = c if isinstance(c, str) else "unavailable: not counted"
        for metric, formula in es.metrics.items():
            needed = {n.id for n in ast.walk(ast.parse(formula, mode="eval")) if isinstance(n, ast.Name)}
            missing = sorted(needed & set(bad))
            if missing:
                why = bad[missing[0]].removeprefix("unavailable: ")
                out[label(metric, s)] = f"unavailable: {es.events[missing[0]]}: {why}"
                continue
            try:
                out[label(metric, s)] = evaluate(formula, values)
            except ZeroDivisionError:
                out[label(metric, s)] = f"unavailable: {formula} divides by zero"
    return out
