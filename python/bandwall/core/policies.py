"""Placement and binding policies from Python: the tables of the native side, read from
bandwall-topo --list-policies (where each policy is one row: name, argument, how it is applied,
help), for help texts. The native executables parse and apply the policies themselves."""

from __future__ import annotations

from functools import lru_cache

from bandwall.core import native

EXECUTABLE = "bandwall-topo"


@lru_cache(maxsize=1)
def table() -> dict:
    """{"placement": [{name, syntax, help, per_process}], "binding": [{name, syntax, help}]}."""
    return native.table(EXECUTABLE, "--list-policies")


def syntax(kind: str) -> str:
    """Every policy of kind ("placement" or "binding") as written: "compact, scatter, node:N or none"."""
    words = [row["syntax"] for row in table()[kind]]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)
