"""The settings of a node that explain a difference in its figures: transparent huge pages, NUMA
balancing, the CPU frequency governor and top frequency, the kernel, huge pages reserved and the
memory size, read from /proc and /sys (under $BANDWALL_SETTINGS_ROOT when set: a copy of another
node's files, or a test's)."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT_VARIABLE = "BANDWALL_SETTINGS_ROOT"
UNAVAILABLE = "unavailable"


def root() -> Path:
    return Path(os.environ.get(ROOT_VARIABLE) or "/")


def _text(base: Path, path: str) -> str | None:
    try:
        return (base / path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _meminfo(base: Path) -> dict[str, int]:
    """/proc/meminfo's fields in kB (counts for HugePages_*)."""
    out = {}
    for line in (_text(base, "proc/meminfo") or "").splitlines():
        m = re.match(r"(\w+):\s+(\d+)", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def read(base: Path | None = None) -> dict:
    """The node's settings; a setting the node does not expose reads 'unavailable'."""
    base = base or root()
    thp = _text(base, "sys/kernel/mm/transparent_hugepage/enabled")
    chosen = re.search(r"\[(\w+)\]", thp or "")
    balancing = _text(base, "proc/sys/kernel/numa_balancing")
    max_khz = _text(base, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    mem = _meminfo(base)
    return {
        "thp": chosen.group(1) if chosen else UNAVAILABLE,
        "numa_balancing": balancing if balancing is not None else UNAVAILABLE,
        "governor": _text(base, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or UNAVAILABLE,
        "max_mhz": int(max_khz) // 1000 if max_khz and max_khz.isdigit() else UNAVAILABLE,
        "kernel": _text(base, "proc/sys/kernel/osrelease") or UNAVAILABLE,
        "hugepages_total": mem.get("HugePages_Total", UNAVAILABLE),
        "memory_bytes": mem["MemTotal"] * 1024 if "MemTotal" in mem else UNAVAILABLE,
    }
