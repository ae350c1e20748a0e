"""The report's file: one self-contained HTML page (DIR/index.html); and report_csv(), the report's
records as CSV (one row per record, for a spreadsheet). The records are the report's only data.

Sections build their HTML fragments with html_table(), facts() and note() (which escape what they
show), bandwall.report.plots.img_tag() and figures() (plots side by side), or a template of their own
(template()); the page puts them in the template templates/report.html.j2, with its style inline
and no external links or scripts (one small inline script adds the copy buttons of the fixes; the
page reads the same without it).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

import jinja2
from markupsafe import Markup

from bandwall.core import records
from bandwall.core.errors import UsageError
from bandwall.report import FAILED, OK, Context, Outcome


def html_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str | None = None) -> str:
    """An HTML table; every cell is escaped; numbers are right-aligned and formatted like the terminal's."""
    from bandwall.display import fmt_cell

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for v in row:
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(
                f'<td class="num">{html.escape(fmt_cell(v))}</td>'
                if num
                else f"<td>{html.escape(fmt_cell(v))}</td>"
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def note(text: str, kind: str = "note") -> str:
    """A short paragraph; kind is note, warn or bad (its colour)."""
    return f'<p class="{html.escape(kind)}">{html.escape(text)}</p>'


def facts(pairs: Sequence[tuple[str, Any]]) -> str:
    """A compact list of name: value lines."""
    items = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>" for k, v in pairs)
    return f'<dl class="facts">{items}</dl>'


def figures(*img_tags: str) -> str:
    """Several plots side by side (wrapping on narrow pages)."""
    return '<div class="figs">' + "".join(img_tags) + "</div>"


def template(name: str) -> jinja2.Template:
    """A template of templates/, escaping every value it shows (mark trusted HTML with Markup)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bandwall.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template(name)


def section_html(ctx: Context, section: Any, outcome: Outcome) -> str:
    """The section's fragment, or the reason it has none. A section that cannot render is failed."""
    if outcome.status == OK:
        try:
            return section.html(ctx, outcome.data)
        except Exception as e:  # noqa: BLE001 — shown in the page; the report exits 1
            if os.environ.get("BANDWALL_DEBUG"):
                raise
            outcome.status, outcome.reason = FAILED, f"cannot render: {type(e).__name__}: {e}"
    return note(f"{outcome.status}: {outcome.reason}", "warn" if outcome.status != FAILED else "bad")


def page(
    ctx: Context, chosen: list[tuple[str, Any]], outcomes: list[Outcome], meta: dict, first: dict
) -> str:
    """The page: first (a block of name, title and body: the recommendations) then each section."""
    blocks = [
        {
            "name": o.name,
            "title": o.title,
            "status": o.status,
            "reason": o.reason,
            "seconds": o.seconds,
            "record_ids": o.record_ids,
            "body": Markup(section_html(ctx, s, o)),
        }
        for (_, s), o in zip(chosen, outcomes)
    ]
    head = {
        "status": OK,
        "reason": "",
        "seconds": 0.0,
        "record_ids": [],
        **first,
        "body": Markup(first["body"]),
    }
    return template("report.html.j2").render(meta=meta, sections=[head, *blocks], record_ids=ctx.record_ids)


CSV_COLUMNS = [
    "section",
    "section_status",
    "record_id",
    "tool",
    "name",
    "threads",
    "metric",
    "value",
    "unit",
    "passed",
    "host",
    "date",
]
STOPPED = "stopped"  # section_status of the records of a section a signal stopped


def _iso3dfd_name(rec: dict) -> str:
    c = rec["config"]
    return " ".join(str(c[k]) for k in ("init", "schedule") if k in c) or "iso3dfd"


def _check_value(rec: dict) -> tuple[str, Any, str]:
    r = rec["result"]
    modes = r.get("modes", {})
    mode = "all" if "all" in modes else next(iter(modes), None)
    return (
        (f"modes.{mode}.value", modes[mode].get("value"), r.get("fom_unit", "")) if mode else ("", None, "")
    )


def _matrix_value(rec: dict) -> tuple[str, Any, str]:
    r = rec["result"]
    if "remote_over_local" in r:
        return "remote_over_local", r["remote_over_local"], "x"
    return "matrix.0.0", (r.get("matrix") or [[None]])[0][0], r.get("unit", "GB/s")


def _field(path: str, unit: str) -> Callable[[dict], tuple[str, Any, str]]:
    return lambda rec: (path, rec["result"].get(path), unit)


# tool -> (the record's name in its row, its headline figure as (metric, value, unit))
CSV_HEADLINES: dict[str, tuple[Callable[[dict], Any], Callable[[dict], tuple[str, Any, str]]]] = {
    "topo": (lambda r: r["result"].get("cpu_model", ""), _field("cores", "cores")),
    "stream": (lambda r: r["config"].get("kernel", ""), _field("best_GBps", "GB/s")),
    "sweep": (lambda r: r["config"].get("kernel", ""), _field("best_GBps", "GB/s")),
    "peak": (lambda r: r["config"].get("isa", ""), _field("total_gflops_dp", "GFlop/s")),
    "balance": (lambda r: r["config"].get("kernel", ""), _field("bytes_per_flop_dp", "B/F")),
    "numa-check": (lambda r: r["config"].get("target", ""), _check_value),
    "numa-matrix": (lambda r: r["config"].get("kernel", ""), _matrix_value),
    "iso3dfd": (_iso3dfd_name, _field("mpoints_per_s", "MPoints/s")),
}


def _first_number(rec: dict) -> tuple[str, Any, str]:
    nums = {k: v for k, v in records.numbers(rec.get("result", {})).items() if "." not in k}
    return next(iter(nums.items()), ("", None)) + ("",)


def _threads(rec: dict) -> Any:
    """The cores the headline figure came from: a sweep's best point, else the record's threads
    (empty for a record that ran none, as topo's)."""
    if rec["tool"] == "sweep" and "best_cores" in rec["result"]:
        return rec["result"]["best_cores"]
    for t in (rec["config"].get("threads"), rec.get("provenance", {}).get("threads")):
        if isinstance(t, int) and not isinstance(t, bool) and t > 0:
            return t
    return ""


def csv_row(section: str, status: str, record_id: int | None, rec: dict) -> list:
    name, headline = CSV_HEADLINES.get(rec["tool"], (lambda r: r["config"].get("kernel", ""), _first_number))
    try:
        metric, value, unit = headline(rec)
    except (KeyError, IndexError, TypeError, AttributeError):  # an odd record still gets its row
        metric, value, unit = "", None, ""
    if isinstance(value, float) and not math.isfinite(value):
        value = None
    prov = rec.get("provenance", {})
    return [
        section,
        status,
        "" if record_id is None else record_id,
        rec["tool"],
        name(rec),
        _threads(rec),
        metric,
        "" if value is None else value,
        unit,
        rec.get("validation", {}).get("passed", ""),
        prov.get("host", ""),
        prov.get("date", ""),
    ]


def report_csv(ctx: Context, outcomes: list[Outcome], stopped_section: str | None = None) -> str:
    """One row per record of the report, in the order it made them (CSV_COLUMNS). The records of a
    section a signal stopped (stopped_section: its name) follow with section_status "stopped"."""
    rows = [csv_row(o.name, o.status, rec.get("id"), rec) for o in outcomes for rec in o.records]
    if stopped_section is not None:
        done = sum(len(o.records) for o in outcomes)
        rows += [csv_row(stopped_section, STOPPED, rec.get("id"), rec) for rec in ctx.records[done:]]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    w.writerows(rows)
    return buf.getvalue()


def plain(o: Any) -> Any:
    """o with numpy values made Python ones, NaN and infinities made null, sets made lists."""
    if hasattr(o, "tolist") and not isinstance(o, (str, bytes)):  # numpy arrays and scalars
        o = o.tolist()
    if isinstance(o, dict):
        return {str(k): plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, set, frozenset)):
        return [plain(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if o is None or isinstance(o, (str, int, float, bool)):
        return o
    return str(o)


def dumps(doc: dict) -> str:
    return json.dumps(plain(doc), indent=2) + "\n"


def prepare_out(out: Path) -> Path:
    """Creates the output folder (refusing a file in its place) before anything is measured."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create report folder {str(out)!r}: {e.strerror}") from e
    if not os.access(out, os.W_OK):
        raise UsageError(f"cannot write in report folder {str(out)!r}")
    return out


def write_text(path: Path, text: str) -> None:
    """Writes path whole or not at all (a temporary file renamed into place)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {str(path)!r}: {e.strerror}") from e
