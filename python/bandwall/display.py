"""How bandwall prints: the console of its views, tables whose figures are never cut (a table fitted
to any width keeps every word whole), and emit(), which prints a record or a list of records as a
table, JSON or CSV. Data goes to stdout; notices go to stderr."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Callable

from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.styled import Styled
from rich.table import Table
from rich.text import Text

FORMATS = ("table", "json", "csv")


# Tables. A figure is never cut: bandwall's tables are WholeTables, which take, each time they are
# rendered, the first of these layouts whose cells keep every word whole (a number, a name, a CPU
# list) within the width they are given: the boxed table, its columns wrapped between words; a
# compact one (no borders, a space between columns); each row as key/value lines; each key above its
# value. Only a single word wider than the whole line is folded onto the next; no cell ever ends
# in an ellipsis. On a terminal (or with COLUMNS set) the width is the line's; when stdout is not a
# terminal and COLUMNS is not set (a pipe, tee, a batch job's log), each table is printed at its
# natural width, its rows one line each, as wide as its figures need.

HUGE = 1 << 20  # a width no table reaches: measures a table's natural width


class WholeTable(Table):
    """A rich Table whose cells are never cut (see above): rich's API, fitted to the width it is
    given when it is rendered, however narrow."""

    @classmethod
    def of(cls, t: Table) -> WholeTable:
        """The WholeTable of a rich Table (the same columns and rows)."""
        if isinstance(t, WholeTable):
            return t
        whole = cls.__new__(cls)
        whole.__dict__.update(t.__dict__)
        return whole

    def __rich_console__(self, console, options):
        yield fit(self, console, options.max_width)

    def natural_width(self, console: Console) -> int:
        """Characters of its widest line when nothing wraps."""
        if not self.columns:
            return 0
        return sum(_extents(self, console)[1]) + _chrome(self)


class FigureConsole(Console):
    """The console of bandwall's views: plain rich Tables printed through it are WholeTables, and
    when it writes to no terminal and COLUMNS is unset, a table is printed at its natural width."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unbounded = not self.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit()

    def print(self, *objects, **kwargs) -> None:
        objects = tuple(WholeTable.of(o) if isinstance(o, Table) else o for o in objects)
        need = max((o.natural_width(self) for o in objects if isinstance(o, WholeTable)), default=0)
        if not self.unbounded or need <= self.width:
            super().print(*objects, **kwargs)
            return
        saved = self._width
        self.width = need
        try:
            super().print(*objects, **kwargs)
        finally:
            self._width = saved


def console(stderr: bool = False, **kwargs) -> Console:
    return FigureConsole(stderr=stderr, highlight=False, **kwargs)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence], caption: str | None = None) -> Table:
    t = WholeTable(title=title, caption=caption, title_justify="left")
    for i, c in enumerate(columns):
        t.add_column(c, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*[fmt_cell(v) for v in r])
    return t


def _copy(t: Table, **changes) -> Table:
    """A plain rich Table with t's rows and copies of its columns (whose widths are then set)."""
    out = Table.__new__(Table)
    out.__dict__.update(t.__dict__)
    out.columns = [copy.copy(c) for c in t.columns]
    for name, value in changes.items():
        setattr(out, name, value)  # through the properties (padding)
    return out


def _chrome(t: Table) -> int:
    """Characters of a table's line that are not its cells' text: borders and padding."""
    n = len(t.columns)
    width = (2 if t.box and t.show_edge else 0) + (n - 1 if t.box else 0)
    _, right, _, left = t.padding
    return width + sum(right + (max(0, right - left) if t.collapse_padding and i else left) for i in range(n))


def _extent(console: Console, renderable, whole_line: bool = False) -> tuple[int, int]:
    """(narrowest, natural) width of a cell: its longest word (its longest line when it stays on
    one line), and its longest line."""
    m = Measurement.get(console, console.options.update_width(HUGE), renderable)
    return (m.maximum if whole_line else m.minimum), m.maximum


def _extents(t: Table, console: Console) -> tuple[list[int], list[int], list[int]]:
    """Each column's narrowest width (its longest word), its natural width, and its cells' natural
    width (the header and footer left out)."""
    lows, highs, bodies = [], [], []
    for c in t.columns:
        ends = [*([c.header] if t.show_header else []), *([c.footer] if t.show_footer else [])]
        body = [_extent(console, x, c.no_wrap) for x in c.cells]
        ext = body + [_extent(console, x, c.no_wrap) for x in ends]
        lows.append(max([1] + [lo for lo, _ in ext]))
        highs.append(max([1] + [hi for _, hi in ext]))
        bodies.append(max([1] + [hi for _, hi in body]))
    return lows, highs, bodies


def _widths(
    lows: list[int], highs: list[int], room: int, bodies: list[int] | None = None
) -> list[int] | None:
    """Column widths within room: natural when they fit, else the widest column narrowed first,
    headers wrapped before cells (bodies: the cells' natural widths), no column below its longest
    word; None when even the words do not fit."""
    if sum(lows) > room:
        return None
    widths = list(highs)
    for floors in ([max(lo, b) for lo, b in zip(lows, bodies)] if bodies else lows, lows):
        while sum(widths) > room:
            narrower = [i for i in range(len(widths)) if widths[i] > floors[i]]
            if not narrower:
                break
            widths[max(narrower, key=lambda i: (widths[i], -i))] -= 1
    return widths


def _sized(t: Table, widths: list[int]) -> Table:
    """t with its columns' widths fixed; a word wider than its column folds, never cut."""
    for c, w in zip(t.columns, widths):
        c.width, c.min_width, c.max_width, c.overflow = w, None, None, "fold"
    return t


def fit(t: Table, console: Console, width: int) -> RenderableType:
    """The first layout of table t whose cells keep every word whole within width (see above)."""
    if not t.columns:
        return _copy(t)
    lows, highs, bodies = _extents(t, console)
    compact = {"box": box.SIMPLE_HEAD, "show_edge": False, "padding": (0, 0, 0, 0), "pad_edge": False}
    layouts = [_copy(t)] + ([_copy(t, **compact)] if t.row_count > 1 else [])  # one row reads best by key
    for layout in layouts:
        widths = _widths(lows, highs, width - _chrome(layout), bodies)
        if widths is not None:
            return _sized(layout, widths)
    return _by_row(t, console, width)


def _blank(cell) -> bool:
    return isinstance(cell, (str, Text)) and not str(cell).strip()


def _by_row(t: Table, console: Console, width: int):
    """Table t a row at a time, rows apart by a blank line, its title and caption at the line's
    width: each column's header beside the row's cell (key/value lines) or, narrower still, the
    row's first cell then each other cell below it, after its header."""
    heads = [c.header for c in t.columns]
    cells = [list(c.cells) for c in t.columns]
    rows = [[(h, col[i]) for h, col in zip(heads, cells)] for i in range(t.row_count)]
    shape = {"show_header": False, "box": box.SIMPLE, "show_edge": False, "pad_edge": False}
    layout = Table(padding=(0, 1, 0, 0), **shape)
    layout.add_column(style="bold")
    layout.add_column()
    keys = [_extent(console, h) for h in heads]
    values = [_extent(console, v) for row in rows for _, v in row] or [(1, 1)]
    widths = _widths(
        [max(lo for lo, _ in keys), max(lo for lo, _ in values)],
        [max(hi for _, hi in keys), max(hi for _, hi in values)],
        width - _chrome(layout),
    )
    if widths is not None and len(heads) > 2:
        for row in rows:
            shown = [(h, v) for h, v in row if not (_blank(h) and _blank(v))]
            for j, (h, v) in enumerate(shown):
                layout.add_row(h, v, end_section=j == len(shown) - 1)
        _sized(layout, widths)
    else:
        layout = Table(padding=(0, 0, 0, 0), **shape)
        layout.add_column()
        for (_, first), *rest in rows:
            shown = [(h, v) for h, v in rest if not _blank(v)]
            layout.add_row(first, style="bold", end_section=not shown)
            for j, (h, v) in enumerate(shown):
                line = v
                if len(heads) > 2 and not _blank(h):
                    line = Text.assemble(_text(console, h), ": ", _text(console, v))
                layout.add_row(Padding(line, (0, 0, 0, 2)), end_section=j == len(shown) - 1)
        _sized(layout, [max(1, width)])
    notes = [Styled(t.title, "table.title")] if t.title else []
    return Group(*notes, layout, *([Styled(t.caption, "table.caption")] if t.caption else []))


def _text(console: Console, cell) -> Text:
    return cell if isinstance(cell, Text) else console.render_str(str(cell))


def fmt_cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.2f}" if abs(v) < 1e5 else f"{v:,.0f}"
    return str(v)


def emit(
    data,
    fmt: str,
    render_table: Callable[[Console], None],
    csv_rows: Callable[[], tuple[Sequence[str], Sequence[Sequence]]] | None = None,
) -> None:
    """Prints data (a record or a list of records) in fmt."""
    openmp_notice(data)
    if fmt == "json":
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    elif fmt == "csv":
        header, rows = csv_rows() if csv_rows else _flat_rows(data)
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(header)
        w.writerows(rows)
        sys.stdout.write(buf.getvalue())
    else:
        render_table(console())


def openmp_notice(data) -> None:
    """Tells on stderr which OpenMP variables bandwall's own runs removed (provenance.openmp_env)."""
    recs = data if isinstance(data, list) else [data]
    names: dict[str, None] = {}
    for rec in recs:
        env = rec.get("provenance", {}).get("openmp_env") if isinstance(rec, dict) else None
        if isinstance(env, dict):
            names.update(
                dict.fromkeys(n for n, v in env.items() if str(v.get("action", "")).startswith("removed"))
            )
    if names:
        console(stderr=True).print(
            f"bandwall: ignored {', '.join(names)} in its own runs; threads go where --cpus/--bind/--threads say "
            "(provenance.openmp_env)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _flat_rows(data) -> tuple[list[str], list[list]]:
    records = data if isinstance(data, list) else [data]
    flat = [flatten(r) for r in records]
    header: list[str] = []
    for f in flat:
        for k in f:
            if k not in header:
                header.append(k)
    return header, [[f.get(k, "") for k in header] for f in flat]


def flatten(d: dict, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        elif isinstance(v, list):
            out[key] = json.dumps(v)
        else:
            out[key] = v
    return out
