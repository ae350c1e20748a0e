"""Terminal and CSV views of counters: a `counters` record, or the `counters` part of a kernel's
record (--counters GROUP)."""

from __future__ import annotations

from bandwall.display import table


def rows(part: dict) -> list[list]:
    """(kind, name, value) rows of a record's software and hardware fields."""
    out = [["software", k, v] for k, v in part.get("software", {}).items()]
    out += [["hardware", k, v] for k, v in part.get("hardware", {}).items()]
    return out


def render(con, rec: dict) -> None:
    """Table of the counters of a `counters` record or of a kernel record's `counters` part; each
    distinct "unavailable" reason is written once, under the table."""
    part = rec.get("counters") or rec["result"]
    cfg = rec.get("counters") or rec["config"]
    title = "counters"
    if cfg.get("group"):
        title += f" (group {cfg['group']}, event set {cfg.get('eventset') or 'none'})"
    reasons: dict[str, int] = {}
    shown = []
    for kind, name, value in rows(part):
        if isinstance(value, str) and value.startswith("unavailable: "):
            n = reasons.setdefault(value.removeprefix("unavailable: "), len(reasons) + 1)
            value = f"unavailable [{n}]"
        shown.append([kind, name, value])
    notes = [f"[{n}] {why}" for why, n in reasons.items()]
    if rec.get("tool") == "counters":
        notes.insert(
            0, f"command {' '.join(rec['config']['command'])!r} exited with {rec['result']['exit_code']}"
        )
    con.print(table(title, ["kind", "event or metric", "value"], shown, caption="\n".join(notes) or None))


def csv_rows(recs: list[dict]):
    header = ["record", "kind", "name", "value"]
    body = [[i, *row] for i, rec in enumerate(recs) for row in rows(rec.get("counters") or rec["result"])]
    return header, body
