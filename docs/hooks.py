"""MkDocs hooks of bandwall's manual (mkdocs.yml: hooks).

- on_config: attaches the subcommands to the click group `bandwall.cli:group` (the front end does
  it when `bandwall` starts), so that mkdocs-click documents every command from the CLI itself.
- on_page_markdown: replaces `<!-- record-fields -->` with a table of the record's fields, written
  from the JSON schema the tests validate every record against (python/bandwall/schema/).
- on_config also adds a Markdown preprocessor that runs after mkdocs-click and escapes the
  placeholders of help texts (`unavailable: <reason>`), which Markdown would otherwise take for
  HTML tags and drop.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "python" / "bandwall" / "schema" / "record-v1.json"
MARKER = "<!-- record-fields -->"


def on_config(config, **kwargs):
    from bandwall import cli

    cli._build()
    config.markdown_extensions.append(PlaceholderExtension())
    return config


# <word> or <a few words> outside code, that is no HTML tag a page would use and no autolink.
PLACEHOLDER = re.compile(
    r"<(?!/|https?:|!--)(?!(?:a|b|i|em|strong|code|br|p|div|span|img|kbd|sup|sub)\b)([a-z][^<>\n]*)>"
)


class PlaceholderPreprocessor(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        out, fence = [], False
        for line in lines:
            if line.lstrip().startswith(("```", "~~~")):
                fence = not fence
            if not fence and "<" in line:
                parts = re.split(r"(`[^`]*`)", line)
                line = "".join(
                    part if part.startswith("`") else PLACEHOLDER.sub(r"&lt;\1&gt;", part) for part in parts
                )
            out.append(line)
        return out


class PlaceholderExtension(Extension):
    def extendMarkdown(self, md):
        # after mkdocs-click (141), before the fenced code blocks and raw HTML are stashed
        md.preprocessors.register(PlaceholderPreprocessor(md), "bandwall_placeholders", 100)


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
