"""Records: validation against the shipped JSON Schema, front-end provenance, and the numbers in them."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

from bandwall import __version__
from bandwall.core.errors import RunFailed

SCHEMA_VERSION = 1
SCHEMA_FILE = "schema/record-v1.json"


@lru_cache(maxsize=1)
def schema() -> dict:
    text = resources.files("bandwall").joinpath(SCHEMA_FILE).read_text()
    return json.loads(text)


@lru_cache(maxsize=1)
def _validator():
    import jsonschema  # on first use: most commands print --help or fail on input before storing

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema())


def problems(record) -> list[str]:
    """Every way record departs from the schema, as 'where: what' lines (empty when it fits)."""
    errors = sorted(_validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or 'record'}: {e.message}" for e in errors]


def validate(record) -> dict:
    """Returns record when it fits the schema; raises RunFailed naming the first problem."""
    found = problems(record)
    if found:
        tool = record.get("tool", "?") if isinstance(record, dict) else "?"
        raise RunFailed(f"record from {tool!r} is malformed at {found[0]}")
    return record


def finish(record: dict, **extra_provenance) -> dict:
    """Adds what only the front end knows to a native record and validates it."""
    if not isinstance(record, dict):
        raise RunFailed(f"a record must be a JSON object, not {type(record).__name__}")
    prov = record.setdefault("provenance", {})
    if isinstance(prov, dict):
        prov.setdefault("bandwall_version", __version__)
        prov.setdefault("python", platform.python_version())
        prov.update(extra_provenance)
    return validate(record)


NOT_APPLICABLE = "not applicable"


def checked(passed: bool, method: str, **details) -> dict:
    """A validation part that compared something (method: what, against what)."""
    return {"checked": True, "passed": bool(passed), "method": method, **details}


def not_applicable(why: str) -> dict:
    """A validation part of a record that compares nothing: it never says passed."""
    return {"checked": False, "passed": NOT_APPLICABLE, "method": why}


def of_parts(parts: list[dict], what: str) -> dict:
    """The validation of a record made of other records: checked when every part checked something,
    passed when every part passed; otherwise not applicable, naming how many parts checked."""
    n = len(parts)
    done = [p for p in parts if p.get("validation", {}).get("checked") is True]
    if n and len(done) == n:
        return checked(
            all(passed(p) for p in parts), f"each of the {n} {what} checked its own answer", parts_checked=n
        )
    return not_applicable(f"{len(done)} of the {n} {what} checked an answer")


def provenance_of_parts(base: dict, parts: Sequence[dict]) -> dict:
    """The provenance of a record made of other records: base's (the part that says where it ran),
    with steal over all the parts: the largest share the host took of any part's CPUs, the seconds
    summed over the parts, and how many runs the record is made of; null when no part could count it."""
    prov = dict(base["provenance"])
    steals = [s for s in (p.get("provenance", {}).get("steal") for p in parts) if s]
    if steals:
        prov["steal"] = {
            "share": max(s["share"] for s in steals),
            "seconds": sum(s["seconds"] for s in steals),
            "runs": sum(s.get("runs", 1) for s in steals) + len(parts) - len(steals),
        }
    elif "steal" in prov:
        prov["steal"] = None
    return prov


def passed(record: dict) -> bool:
    """True only for a record that checked something and found it right."""
    v = record.get("validation", {})
    return v.get("checked") is True and v.get("passed") is True


def failed(record: dict) -> bool:
    """True for a record that checked something and found it wrong."""
    v = record.get("validation", {})
    return v.get("checked") is True and v.get("passed") is False


def numbers(data, prefix: str = "") -> dict[str, float]:
    """The finite numbers in data (a record's result, say) by dotted path; list items by index.

    Booleans are not numbers here. {"points": [{"cores": 1, "best_GBps": 9.5}]} gives
    {"points.0.cores": 1, "points.0.best_GBps": 9.5}.
    """
    out: dict[str, float] = {}
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return out
    for k, v in items:
        key = f"{prefix}{k}"
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            if math.isfinite(v):
                out[key] = v
        else:
            out.update(numbers(v, key + "."))
    return out
