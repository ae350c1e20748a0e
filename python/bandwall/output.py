"""Views of records: rich tables on a terminal, JSON and CSV for programs. Data goes to stdout."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Callable

import click
from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.styled import Styled
from rich.table import Table
from rich.text import Text

from bandwall.core import manifest, policies
from bandwall.core.errors import BandwallError
from bandwall.kernels import iso3dfd, stream

FORMATS = ("table", "json", "csv")


def refuse_empty(ctx, param, value):
    """Click callback: an option given as "" (or blanks) is refused instead of reading as left out,
    which would silently pick its default (every CPU, 4x the LLC, the default database...)."""
    if isinstance(value, str) and not value.strip():
        raise click.BadParameter("is empty: give it a value or leave it out for the default", ctx, param)
    return value


def refuse_options_as_command(ctx, param, value):
    """Click callback of a COMMAND argument taken with ignore_unknown_options: a misspelt option
    (--grup) would otherwise be read as the command's name."""
    if value and value[0].startswith("-") and value[0] != "-":
        raise click.UsageError(
            f"no such option {value[0]!r} (bandwall's options go before --, the command after it)"
        )
    return value


# Help of every --cpus option (lists are resolved natively: common/cpulist.hpp).


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="how to print the result",
)
db_option = click.option(
    "--db",
    "db",
    type=click.Path(dir_okay=False),
    default=None,
    callback=refuse_empty,
    help="SQLite database (default: $BANDWALL_DB or the user data directory)",
)
no_store_option = click.option("--no-store", is_flag=True, help="do not store the record")


class FromManifest:
    """An option's default read from the manifest when it is used or shown, never at import: click
    calls it for the value, and --help shows its str() (the word itself, not "(dynamic)")."""

    def __init__(self, read: Callable[[], str]):
        self.read = read

    def __call__(self) -> str:
        return self.read()

    def __str__(self) -> str:
        try:
            return str(self.read())
        except BandwallError:
            return ""


def pages_option():
    """--pages for commands whose buffers come from the native allocator; left out, the executable
    asks for its own default, which the record's placement.pages names."""
    return click.option(
        "--pages",
        cls=TableHelp,
        default=None,
        type=ManifestChoice(manifest.pages),
        help_from=lambda: (
            f"page size asked for: {manifest.words_help(manifest.page_kinds())} (default: "
            "the executable's own, named in the record's placement.pages); placement.huge_page_share says "
            "what was granted"
        ),
        fallback="page size asked for (bandwall-manifest); placement.huge_page_share says what was granted",
    )


def stores_option():
    """--stores: a STREAM store kind of the manifest, its first by default."""
    return click.option(
        "--stores",
        cls=TableHelp,
        default=FromManifest(lambda: manifest.stores()[0]),
        show_default=True,
        type=ManifestChoice(manifest.stores),
        help_from=lambda: f"store kind: {manifest.words_help(manifest.store_kinds())}",
        fallback="store kind (bandwall-manifest)",
    )


def isa_option(what: str):
    """--isa for commands whose kernels are chosen by instruction set at run time; what names them."""
    return click.option(
        "--isa",
        default="auto",
        show_default=True,
        type=ManifestChoice(manifest.isa_choices),
        help=f"instruction set of {what} (auto: the variant fastest for the kernel on this CPU, from the "
        "table of measured choices or a short timing; exit 2 when the CPU lacks the one named)",
    )


def radius_option(what: str):
    """--radius for the ISO3DFD stencil (its half width; space order 2R), the radii the native tools
    take (the manifest's); the value is an int, None when not given (the tools' default)."""

    def radii() -> list[str]:
        s = iso3dfd.stencil()
        return [str(r) for r in range(int(s["radius_min"]), int(s["radius_max"]) + 1)]

    def text() -> str:
        s = iso3dfd.stencil()
        radii = [int(r) for r in s["kernel_radii"]]
        every = radii == list(range(int(s["radius_min"]), int(s["radius_max"]) + 1))
        compiled = (
            "every radius" if every else ", ".join(map(str, radii)) + ", other radii run the generic loops"
        )
        return (
            f"{what}: the stencil's radius R (space order 2R; default {s['radius_default']}, the article's "
            f"16th order): its halo on each side of the grid and its exact central-difference weights; the "
            f"vector kernels are compiled for {compiled} (rows too short for whole vectors run the generic "
            "loops; config.radius_path)"
        )

    return click.option(
        "--radius",
        cls=TableHelp,
        help_from=text,
        fallback=f"{what}: the stencil's radius R (space order 2R)",
        default=None,
        type=ManifestChoice(radii),
        callback=lambda ctx, param, value: None if value is None else int(value),
    )


class ManifestChoice(click.Choice):
    """A choice whose words come from the manifest of the native tables (core/manifest.py), read
    when a value is checked or the help shown, never at import."""

    def __init__(self, words: Callable[[], Sequence[str]], case_sensitive: bool = True):
        self.words = words
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.words())


class TableHelp(click.Option):
    """An option whose help is made from a table the native executables print (kernels, policies)
    when --help shows it, so the table is read only then and never at import; help_from() returns
    the text, and the fallback is shown when the executable cannot be run."""

    def __init__(self, *args, help_from: Callable[[], str], fallback: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.help_from = help_from
        self.fallback = fallback

    def get_help_record(self, ctx):
        try:
            self.help = self.help_from()
        except BandwallError:
            self.help = self.fallback
        return super().get_help_record(ctx)


def table_option(flag: str, default: str, what: str, help_from: Callable[[], str], listing: str):
    """An option whose value is a row of a native table: help_from() lists the rows in the help,
    the executable checks the value."""
    return click.option(
        flag,
        cls=TableHelp,
        callback=refuse_empty,
        default=default,
        show_default=True,
        help_from=lambda: f"{what}: {help_from()}",
        fallback=f"{what} ({listing})",
    )


def kernel_option(default: str = "triad"):
    """--kernel: a kernel of bandwall-stream's table."""
    kernels = lambda: ", ".join(stream.kernel_names())  # noqa: E731
    return table_option("--kernel", default, "a STREAM kernel", kernels, "bandwall-stream --list-kernels")


def placement_option(default: str = "first-touch"):
    """--placement: a row of the native placement table."""
    rows = lambda: policies.syntax("placement")  # noqa: E731
    return table_option("--placement", default, "memory placement", rows, "bandwall-topo --list-policies")


def bind_option(default: str | None = "compact", note: str = ""):
    """--bind: a row of the native binding table; note follows the rows in the help."""
    rows = lambda: policies.syntax("binding") + note  # noqa: E731
    return table_option("--bind", default, "thread binding", rows, "bandwall-topo --list-policies" + note)


class ThreadCount(click.ParamType):
    """--threads N (at least 1) or auto."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if value == "auto" or isinstance(value, int):
            return value
        return click.IntRange(min=1).convert(value, param, ctx)  # click's own messages for the rest


THREADS_AUTO_HELP = (
    "threads, or auto: the fewest shown to be within 3% of every other count by the decision rule, from "
    "a stored sweep (stream) or tune (iso3dfd) of this machine's topology, or timed in the run's first "
    "steps; else every thread (default: every CPU of --cpus or --bind)"
)


def placing_options(bind_default: str | None = "compact", note: str = "", allow_auto: bool = False):
    """--threads, --cpus and --bind, with one meaning in every command that places threads: --cpus
    (read by the one native parser) wins over --bind, --threads caps the list or sizes the policy.
    bind_default None leaves the binding to the command (note says what it does then); allow_auto
    lets --threads be auto (feedback-driven threading, native/common/harness.hpp)."""

    def add(f):
        f = bind_option(bind_default, note)(f)
        f = click.option(
            "--cpus",
            cls=TableHelp,
            callback=refuse_empty,
            default=None,
            help_from=manifest.cpus_help,
            fallback="CPU of each thread in order (wins over --bind): a CPU list (bandwall-manifest)",
        )(f)
        return click.option(
            "--threads",
            type=ThreadCount() if allow_auto else click.IntRange(min=1),
            default=None,
            help=THREADS_AUTO_HELP if allow_auto else "threads (default: every CPU of --cpus or --bind)",
        )(f)

    return add


thread_options = placing_options()
auto_thread_options = placing_options(allow_auto=True)


def given(name: str) -> bool:
    """Whether the option name was given on the command line (not left to its default)."""
    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) not in (
        click.core.ParameterSource.DEFAULT,
        click.core.ParameterSource.DEFAULT_MAP,
        None,
    )


def plot_option(against: str):
    """--plot FILE: the bandwidth curve against `against` (cores, ranks) as an image."""
    return click.option(
        "--plot",
        "plot_file",
        callback=refuse_empty,
        type=click.Path(dir_okay=False),
        default=None,
        help=f"write the bandwidth-against-{against} plot (PNG, SVG or PDF by extension)",
    )


def measuring_options(f):
    """--format, --db and --no-store: what every measuring subcommand takes."""
    return format_option(db_option(no_store_option(f)))


def counters_option(f):
    """--counters GROUP for commands running a built-in kernel: counts around the run."""
    return click.option(
        "--counters",
        "counters",
        callback=refuse_empty,
        default=None,
        metavar="GROUP",
        help="count around the run: software events always, the PAPI group's events and metrics "
        "(MEM, NUMA, CACHE, FLOPS_DP) where the machine has them; the record's `counters` part",
    )(f)


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


def words_option(
    *flags: str,
    words: Callable[[], list[dict]],
    what: str,
    default: Callable[[], str] | None = None,
    optional: bool = False,
    tail: str = "",
):
    """An option whose words are a native table's (the manifest's rows of name and help): its
    choices, its help ("what: name: help; ...", then tail) and its default (default(), else the
    table's first row), all read from the manifest when used or shown, never at import. optional:
    the option is None when not given (the caller tells it apart from a word given, and the help
    names the default)."""
    names = lambda: [w["name"] for w in words()]  # noqa: E731
    first = default or (lambda: names()[0])
    said = (lambda: f" (default: {first()})") if optional else (lambda: "")  # noqa: E731
    return click.option(
        *flags,
        cls=TableHelp,
        default=None if optional else FromManifest(first),
        show_default=not optional,
        type=ManifestChoice(names),
        help_from=lambda: f"{what}: {manifest.words_help(words())}{said()}{tail}",
        fallback=f"{what} (bandwall-manifest)",
    )
