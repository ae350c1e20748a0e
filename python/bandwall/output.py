"""The command line's shared options: click options and parameter types every subcommand takes
(formats, stores, placement, threads, pages, instruction sets, radius, words read from the native
tools' manifest). How records are printed is bandwall.display's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import click

from bandwall.core import manifest, policies
from bandwall.core.errors import BandwallError
from bandwall.display import FORMATS
from bandwall.kernels import iso3dfd, stream


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
