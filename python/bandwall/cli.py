"""The `bandwall` command: a click group whose subcommands come from bandwall.commands."""

from __future__ import annotations

import sys

import click

from bandwall import __version__
from bandwall.commands import load_all
from bandwall.core.errors import BandwallError
from bandwall.core.registry import commands


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bandwall")
def group() -> None:
    """bandwall: measure, diagnose and break the memory wall on NUMA multicore nodes."""


def _build() -> click.Group:
    load_all()
    for name, cmd in commands.items():
        group.add_command(cmd, name)
    return group


def main(argv: list[str] | None = None) -> None:
    """Runs the CLI; every expected error becomes one line on stderr and exit 1 or 2."""
    cli = _build()
    try:
        cli.main(args=argv, prog_name="bandwall", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:  # usage errors: bad option, bad value
        click.echo(f"bandwall: error: {e.format_message()}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("bandwall: interrupted", err=True)
        sys.exit(130)
    except BandwallError as e:
        click.echo(f"bandwall: error: {e}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("bandwall: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(0)
