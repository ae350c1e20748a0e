"""Records: validation against the shipped JSON Schema and front-end provenance."""

from __future__ import annotations

import json
import platform
from functools import lru_cache
from importlib import resources

import jsonschema

from bandwall import __version__
from bandwall.errors import RunFailed

SCHEMA_VERSION = 1


@lru_cache(maxsize=1)
def schema() -> dict:
    text = resources.files("bandwall").joinpath("schema/record-v1.json").read_text()
    return json.loads(text)


def validate(record: dict) -> dict:
    """Returns record when it fits the schema; raises RunFailed naming the first problem."""
    try:
        jsonschema.validate(record, schema())
    except jsonschema.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "record"
        raise RunFailed(f"record from {record.get('tool', '?')!r} is malformed at {where}: {e.message}") from e
    return record


def finish(record: dict, **extra_provenance) -> dict:
    """Adds what only the front end knows to a native record and validates it."""
    prov = record.setdefault("provenance", {})
    prov.setdefault("bandwall_version", __version__)
    prov.setdefault("python", platform.python_version())
    prov.update(extra_provenance)
    return validate(record)


def passed(record: dict) -> bool:
    return bool(record.get("validation", {}).get("passed"))
