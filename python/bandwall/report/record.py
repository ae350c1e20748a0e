"""The report's own record (tool "report"): which sections ran, their status and the ids of their
records, and the recommendations of its first section. It is stored beside the measurements, so
`bandwall report --from-db` finds a report's records by id and rebuilds the page from them, and a
later report of the same topology digest finds the earlier ones (history)."""

from __future__ import annotations

from bandwall.core import records, topo
from bandwall.core.errors import UsageError
from bandwall.core.spread import NOISE
from bandwall.report import Outcome
from bandwall.report.advice import Line

TOOL = "report"


def provenance(recs: list[dict]) -> dict:
    """The provenance of the report's first record (where and on what it ran), else this machine's."""
    for r in recs:
        prov = r.get("provenance", {})
        if prov.get("topology_digest"):
            return dict(prov)
    return dict(topo.topology()["provenance"])


def make(
    recs: list[dict], outcomes: list[Outcome], meta: dict, lines: list[Line], history: list[str]
) -> dict:
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": TOOL,
        "config": {
            "quick": meta["quick"],
            "threads": meta["threads"],
            "sections": meta["sections_run"],
            "command": meta["command"],
        },
        "result": {
            "sections": [
                {
                    "name": o.name,
                    "title": o.title,
                    "status": o.status,
                    "reason": o.reason,
                    "seconds": round(o.seconds, 3),
                    "record_ids": [r["id"] for r in o.records if r.get("id") is not None],
                }
                for o in outcomes
            ],
            "date": meta["date"],
            "advice": [line.to_json() for line in lines],
            "history": history,
        },
        "validation": records.not_applicable(
            "a report compares nothing itself; its records say what they checked"
        ),
        "provenance": provenance(recs),
    }
    if meta.get("stopped"):
        rec["result"]["stopped"] = meta["stopped"]
    return records.finish(rec)


def latest(store) -> dict:
    """The newest report record of the store; UsageError (exit 2) when there is none."""
    found = store.list(tool=TOOL, limit=1)
    if not found:
        kinds = "no records at all" if store.count() == 0 else "no report record among its records"
        raise UsageError(f"nothing to rebuild: database {store.name} has {kinds} (run bandwall report first)")
    return found[0]


def section_records(store, rec: dict) -> dict[str, list[dict]]:
    """Each section's stored records, by the ids the report record lists; UsageError when one is gone."""
    out = {}
    for s in rec["result"]["sections"]:
        try:
            out[s["name"]] = [store.get(i) for i in s["record_ids"]]
        except Exception as e:  # StoreError: a record deleted since
            raise UsageError(f"cannot rebuild report record {rec['id']}: {e}") from e
    return out


def earlier(store, digest: str, before: int | None, tool: str = TOOL) -> list[dict]:
    """Stored records of tool (reports by default) of the same topology digest, newest first (older
    than id before)."""
    if store is None:
        return []
    return [
        r
        for r in store.list(tool=tool)
        if r["provenance"].get("topology_digest") == digest and (before is None or r["id"] < before)
    ]


def history(lines: list[Line], previous: list[dict]) -> list[str]:
    """What changed beyond noise since the newest earlier report: each topic whose headline figure
    moved out of the range it had, then how many stayed within noise."""
    if not previous:
        return []
    prev = previous[0]
    before = {d["topic"]: Line.from_json(d) for d in prev["result"].get("advice", [])}
    changed, same = [], 0
    for line in lines:
        old = before.get(line.topic)
        if old is None or old.value is None or line.value is None:
            continue
        if line.value.ranges_apart(old.value):
            changed.append(
                f"{line.topic}: {old.value.text()} in report {prev['id']} ({prev['provenance'].get('date', '')}), "
                f"now {line.value.text()}: {line.value.ratio(old.value):.2f}x"
            )
        else:
            same += 1
    changed.append(
        f"{same} other figure{'s' if same != 1 else ''} compared with report {prev['id']}: {NOISE}"
        if changed
        else f"since report {prev['id']} ({prev['provenance'].get('date', '')}): {NOISE} in {same} figure(s)"
    )
    return changed
