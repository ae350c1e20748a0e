"""Placement and binding policies from Python: the tables of the native side (common/policies.cpp,
where each policy is one row: name, argument, how it is applied, help), read from the manifest, for
help texts. The native executables parse and apply the policies themselves."""

from __future__ import annotations

from bandwall.core import manifest


def table() -> dict:
    """{"placement": [{name, arg, syntax, help, per_process}], "binding": [{name, arg, syntax, help}]}."""
    return manifest.policies()


def syntax(kind: str) -> str:
    """Every policy of kind ("placement" or "binding") as written: "compact, scatter, node:N or none"."""
    words = [row["syntax"] for row in table()[kind]]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)
