#!/usr/bin/env python3
"""Writes bandwall's man pages (section 1) into OUTDIR.

- `bandwall` and each subcommand (`bandwall-stream.1`, `bandwall-engine-sweep.1`, ...) from the
  click commands themselves, through click-man;
- each native executable in BINDIR (`bandwall-*`, not the .so libraries) from its --help, through
  Debian's help2man.

A subcommand and a native executable can share a name (`bandwall iso3dfd` runs
`bandwall-iso3dfd`); their page is then one: the subcommand, then the executable under
"NATIVE EXECUTABLE". An executable whose --help fails gets a short page with its usage line.

Usage: gen_man.py OUTDIR [BINDIR]   (BINDIR: default the folder of this Python interpreter)
Called by ./bootstrap after installing bandwall into .venv (OUTDIR .venv/share/man/man1, where
man-db finds it from PATH: .venv/bin -> .venv/share/man).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import click_man.core
from click_man.core import generate_man_page

# The COMMANDS list of a group's page: click-man cuts each command's help at 45 characters.
_short_help = click_man.core.get_short_help_str
click_man.core.get_short_help_str = lambda command, limit=45: _short_help(command, limit=90)

DOCS = "the manual: docs/ in bandwall's source (mkdocs serve), or README.md"


def roff_escape(text: str) -> str:
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.splitlines())


def see_also(names: list[str]) -> str:
    refs = ",\n".join(f".BR {n} (1)" for n in names)
    return f'.SH "SEE ALSO"\n{refs}\n.PP\n{roff_escape(DOCS)}\n'


def full_name_line(page: str, name: str, cmd: click.Command) -> str:
    """NAME with the help's first sentence whole (click-man cuts it at 45 characters)."""
    text = cmd.short_help or (cmd.help or "").split("\n\n")[0]
    text = " ".join(text.split()).removeprefix(f"{name}: ")
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0].rstrip(".")
    lines = page.splitlines()
    i = lines.index(".SH NAME")
    lines[i + 1] = f"{roff_escape(name)} \\- {roff_escape(first)}"
    return "\n".join(lines) + "\n"


def click_pages(group: click.Group, version: str) -> dict[str, str]:
    """Page name -> roff of `bandwall` and every subcommand, recursively."""
    pages: dict[str, str] = {}

    def walk(cmd: click.Command, name: str, parent: click.Context | None) -> None:
        ctx = click.Context(cmd, info_name=name, parent=parent)
        page = ctx.command_path.replace(" ", "-")
        pages[page] = full_name_line(generate_man_page(ctx, version=version), page, cmd)
        for sub_name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if not sub.hidden:
                walk(sub, sub_name, ctx)

    walk(group, "bandwall", None)
    return pages


def native_executables(bindir: Path) -> list[Path]:
    return sorted(
        p for p in bindir.glob("bandwall-*") if p.is_file() and os.access(p, os.X_OK) and ".so" not in p.name
    )


def help_works(exe: Path) -> tuple[bool, str]:
    try:
        r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def help2man_page(exe: Path, version: str, first_line: str) -> str:
    # "bandwall-stream: one STREAM kernel, one JSON record" -> NAME's description
    desc = first_line.split(": ", 1)[1] if ": " in first_line else f"bandwall's native {exe.name}"
    r = subprocess.run(
        [
            "help2man",
            "--no-info",
            "--no-discard-stderr",
            f"--version-string={version}",
            "--name",
            desc,
            str(exe),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return r.stdout


def usage_page(exe: Path, version: str, output: str) -> str:
    """A short page for an executable whose --help does not work: its usage line, when it gives one."""
    m = re.search(r"usage: (.+)", output)
    synopsis = m.group(1).rstrip(")") if m else exe.name
    return (
        f'.TH {exe.name.upper()} "1" "" "{exe.name} {version}" "User Commands"\n'
        f".SH NAME\n{roff_escape(exe.name)} \\- bandwall's native {roff_escape(exe.name)}\n"
        f".SH SYNOPSIS\n{roff_escape(synopsis)}\n"
        ".SH DESCRIPTION\n"
        f"{roff_escape(exe.name)} prints no --help of its own; see the manual.\n"
    )


def demote(page: str, heading: str) -> str:
    """A full page as one section of another: its NAME dropped, its sections as subsections."""
    out, skipping = [f'.SH "{heading}"'], True
    for line in page.splitlines():
        if line.startswith(".TH") or line.startswith('.\\"'):
            continue
        if line.startswith(".SH"):
            skipping = line.split(None, 1)[1].strip('"') == "NAME"
            if not skipping:
                out.append(".SS" + line[3:])
            continue
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        print("usage: gen_man.py OUTDIR [BINDIR]", file=sys.stderr)
        return 2
    out = Path(argv[1])
    bindir = Path(argv[2]) if len(argv) == 3 else Path(sys.executable).parent
    out.mkdir(parents=True, exist_ok=True)

    from bandwall import __version__, cli

    group = cli._build()
    pages = click_pages(group, __version__)
    names = sorted(pages)

    natives: dict[str, str] = {}
    if shutil.which("help2man") is None:
        print(
            "gen_man: help2man not found (Debian: help2man); no pages for the native executables",
            file=sys.stderr,
        )
    else:
        for exe in native_executables(bindir):
            ok, text = help_works(exe)
            page = None
            if ok:
                try:
                    page = help2man_page(exe, __version__, text.splitlines()[0])
                except subprocess.CalledProcessError as e:
                    print(f"gen_man: help2man failed on {exe.name}: {e.stderr.strip()}", file=sys.stderr)
            else:
                print(
                    f"gen_man: {exe.name} --help fails; its page gives the usage line only", file=sys.stderr
                )
            natives[exe.name] = page or usage_page(exe, __version__, text)

    for name, exe_page in natives.items():
        if name in pages:
            pages[name] += demote(exe_page, f"NATIVE EXECUTABLE {name}")
        else:
            pages[name] = exe_page
    everything = sorted(pages)
    for name, page in pages.items():
        related = ["bandwall"] if name != "bandwall" else [n for n in everything if n != "bandwall"]
        (out / f"{name}.1").write_text(page.rstrip("\n") + "\n" + see_also(related))
    print(f"gen_man: {len(pages)} pages in {out} ({len(names)} commands, {len(natives)} native executables)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
