"""Every kind of record bandwall makes has its block in the schema: the kinds are read from the code
(the native make_record calls, the measurements' facts and the profiler's hand-written JSON; the
records the front end builds), so a new kind without a block, or a block for a kind no code makes
any more, fails here."""

from __future__ import annotations

import re
from pathlib import Path

from bandwall.core import records

ROOT = Path(__file__).resolve().parent.parent
NATIVE = ROOT / "native"
PYTHON = ROOT / "python" / "bandwall"
KIND = r"([a-z0-9][a-z0-9_.-]*)"

# native: make_record("kind", ...), a measurement's facts (f.tool = "kind"), C writing the JSON itself
NATIVE_PATTERNS = [
    re.compile(r"make_record\(\s*\"" + KIND + '"'),
    re.compile(r"\.tool\s*=\s*\"" + KIND + '"'),
    re.compile(r'\\"tool\\":\s*\\"' + KIND + r'\\"'),
]
# the first argument of a make_record call that is neither a literal nor a measurement's facts
NATIVE_OPAQUE = re.compile(r"make_record\((?!\s*(?:\"|facts\.tool\b|const std::string& tool\b))\s*([^,)]+)")
PYTHON_LITERAL = re.compile(r"[\"']tool[\"']:\s*[\"']" + KIND + "[\"']")
PYTHON_CONSTANT = re.compile(r"[\"']tool[\"']:\s*([A-Z_]+)\b")


def _native_sources() -> list[Path]:
    return [
        p
        for p in NATIVE.rglob("*")
        if p.suffix in (".c", ".cpp", ".hpp", ".h") and "tests" not in p.relative_to(NATIVE).parts
    ]


def kinds_in_code() -> dict[str, str]:
    """kind -> the file that makes it."""
    found: dict[str, str] = {}
    for path in _native_sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in NATIVE_PATTERNS:
            for kind in pattern.findall(text):
                found.setdefault(kind, str(path.relative_to(ROOT)))
    for path in PYTHON.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for kind in PYTHON_LITERAL.findall(text):
            found.setdefault(kind, str(path.relative_to(ROOT)))
        for name in PYTHON_CONSTANT.findall(text):
            value = re.search(rf"^{name}\s*=\s*[\"']{KIND}[\"']", text, re.MULTILINE)
            assert value, f"{path.relative_to(ROOT)}: the record's tool {name} is not a string constant here"
            found.setdefault(value.group(1), str(path.relative_to(ROOT)))
    return found


def kinds_in_schema() -> set[str]:
    return {
        block["if"]["properties"]["tool"]["const"]
        for block in records.schema()["allOf"]
        if "tool" in block.get("if", {}).get("properties", {})
    }


def test_the_kinds_are_found_in_the_code():
    found = kinds_in_code()
    # a few of each source, so that a scan that finds nothing cannot pass
    assert {"stream", "peak", "iso3dfd", "topo", "place", "launch", "mpiprof", "mpi-pingpong"} <= set(found)
    assert {"sweep", "engine-sweep", "numa-matrix", "pin-compare", "report", "tune", "tune-trial"} <= set(
        found
    )


def test_every_make_record_names_its_kind():
    for path in _native_sources():
        opaque = NATIVE_OPAQUE.findall(path.read_text(encoding="utf-8", errors="replace"))
        assert not opaque, f"{path.relative_to(ROOT)}: make_record({opaque[0]}, ...): name the kind"


def test_every_kind_has_a_schema_block():
    found = kinds_in_code()
    lacking = sorted(k for k in found if k not in kinds_in_schema())
    assert not lacking, "no schema block for " + ", ".join(f"{k} ({found[k]})" for k in lacking)


def test_every_schema_block_is_of_a_kind_the_code_makes():
    stale = sorted(kinds_in_schema() - set(kinds_in_code()))
    assert not stale, f"schema blocks for kinds no code makes: {stale}"
