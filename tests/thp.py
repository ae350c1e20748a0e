"""What the machine's transparent-huge-page mode lets each --pages word get, for the tests that hold
placement.huge_page_share to it."""

from __future__ import annotations

from pathlib import Path

ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def mode() -> str | None:
    """'always', 'madvise' or 'never' (the bracketed word), or None where the file is absent."""
    try:
        text = ENABLED.read_text()
    except OSError:
        return None
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else None


def granted(pages: str) -> bool | None:
    """Whether memory asked for with this --pages word gets huge pages here (None: unknown)."""
    m = mode()
    if m is None:
        return None
    return {"huge": m in ("always", "madvise"), "base": False, "system": m == "always"}[pages]
