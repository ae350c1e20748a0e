"""MkDocs hooks of bandwall's manual (mkdocs.yml: hooks).

- on_config: attaches the subcommands to the click group `bandwall.cli:group` (the front end does
  it when `bandwall` starts), so that mkdocs-click documents every command from the CLI itself.
- on_page_markdown: replaces `<!-- record-fields -->` with a table of the record's fields, written
  from the JSON schema the tests validate every record against (python/bandwall/schema/).
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "python" / "bandwall" / "schema" / "record-v1.json"
MARKER = "<!-- record-fields -->"


def on_config(config, **kwargs):
    from bandwall import cli

    cli._build()
    return config


def _type(node: dict) -> str:
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    if "oneOf" in node:
        return " or ".join(_type(n) for n in node["oneOf"])
    t = node.get("type", "")
    if isinstance(t, list):
        return " or ".join(t)
    if t == "string" and "pattern" in node and node["pattern"].startswith("^unavailable"):
        return "string `unavailable: <reason>`"
    return t or "any"


def _resolve(node: dict, defs: dict) -> dict:
    ref = node.get("$ref")
    if ref:
        return {**defs[ref.rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _rows(path: str, node: dict, required: bool, defs: dict, out: list) -> None:
    node = _resolve(node, defs)
    desc = node.get("description", "").replace("|", "\\|").replace("\n", " ")
    out.append((path, _type(node), "yes" if required else "", desc))
    req = set(node.get("required", []))
    for name, child in node.get("properties", {}).items():
        _rows(f"{path}.{name}", child, name in req, defs, out)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and (extra.get("properties") or extra.get("$ref")):
        _rows(f"{path}.*", extra, False, defs, out)
    items = node.get("items")
    if isinstance(items, dict) and (items.get("properties") or items.get("$ref")):
        _rows(f"{path}[]", items, False, defs, out)


def record_fields_table(schema: dict) -> str:
    """The schema's fields as one Markdown table: field, type, required, description."""
    defs = schema.get("$defs", {})
    rows: list = []
    req = set(schema.get("required", []))
    for name, child in schema["properties"].items():
        _rows(name, child, name in req, defs, rows)
    # Per-tool rules (allOf: if tool == X then result ...)
    for rule in schema.get("allOf", []):
        tool = rule["if"]["properties"]["tool"]["const"]
        result = rule["then"]["properties"]["result"]
        for name in result.get("required", []):
            if name in result.get("properties", {}):
                continue
            rows.append((f"result.{name}", "", f"yes (tool `{tool}`)", ""))
        for name, child in result.get("properties", {}).items():
            sub: list = []
            _rows(f"result.{name}", child, name in result.get("required", []), defs, sub)
            rows.extend((p, t, f"{r} (tool `{tool}`)" if r else f"(tool `{tool}`)", d) for p, t, r, d in sub)
    lines = ["| field | type | required | what it holds |", "|---|---|---|---|"]
    lines += [f"| `{p}` | {t} | {r} | {d} |" for p, t, r, d in rows]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    if MARKER not in markdown:
        return markdown
    schema = json.loads(SCHEMA.read_text())
    return markdown.replace(MARKER, record_fields_table(schema))
