"""The choices measured on this machine and kept because a race settled them beyond noise, one JSON
file per kind and machine under the user's cache folder (native/common/choice_cache.hpp writes
them; the manifest names the files): the instruction-set variants faster than the default
(native/common/isa_choice.hpp), ISO3DFD's time steps per sweep (--time-block auto), and the row
kernel knobs a CPU without its own row in the table of measured choices raced on a run's data
(native/common/knob_race.hpp). Read them, and forget them so the next run measures again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bandwall.core import manifest, native
from bandwall.core.errors import RunFailed, UsageError


def path() -> Path:
    """The cache file of this machine, as the native executables resolve it now (from
    BANDWALL_CACHE_DIR or XDG_CACHE_HOME and the topology digest): asked afresh, not from the
    manifest read once per process."""
    return Path(native.table(manifest.EXECUTABLE)["isa"]["cache_path"])


def _load(p: Path) -> dict:
    if not p.exists():
        return {"choices": {}}
    try:
        doc = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise RunFailed(f"the cache of measured choices {str(p)!r} cannot be read: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("choices", {}), dict):
        raise RunFailed(f"the cache of measured choices {str(p)!r} is not one bandwall wrote")
    doc.setdefault("choices", {})
    return doc


def _save(p: Path, doc: dict) -> None:
    """Writes a cache file whole: a temporary file renamed over the old one."""
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(p)


def rows() -> list[dict]:
    """One row per cached choice: kernel, size class, variant, its state (confirmed: faster beyond
    noise twice in a row; unconfirmed: a first race's winner the next run races again; default: the
    default stood), CPU, date, why."""
    out = []
    for key, e in sorted(_load(path())["choices"].items()):
        out.append(
            {
                "kernel": _kernel(key, e),
                "size_class": e.get("size_class", ""),
                "ceiling": e.get("ceiling", ""),
                "isa": e.get("isa", ""),
                "state": e.get("state") or ("confirmed" if e.get("decisive") else ""),
                "cpu": e.get("cpu", ""),
                "measured": e.get("measured", ""),
                "why": (e.get("decision") or {}).get("why", ""),
            }
        )
    return out


def _kernel(key: str, entry: dict) -> str:
    """The kernel an entry was measured for, as the native side wrote it beside the choice (the key's
    grammar is the native side's alone); an entry written before it did so is named by its key."""
    return str(entry.get("kernel") or key)


def forget(kernel: str | None = None) -> int:
    """Removes the cached choices of kernel (a key such as stream.triad.nt; every one when None);
    returns how many. UsageError for a kernel with no cached choice."""
    p = path()
    doc = _load(p)
    keys = [k for k, e in doc["choices"].items() if kernel is None or _kernel(k, e) == kernel]
    if kernel is not None and not keys:
        known = sorted({_kernel(k, e) for k, e in doc["choices"].items()})
        raise UsageError(f"no cached choice for {kernel!r} (cached: {', '.join(known) or 'none'})")
    for k in keys:
        del doc["choices"][k]
    if keys:
        _save(p, doc)
    return len(keys)


def _cache_file(kind: str) -> Path:
    """The cache file of a kind of choice (the manifest's caches) on this machine, asked afresh.
    RunFailed when there is no cache folder (neither BANDWALL_CACHE_DIR, XDG_CACHE_HOME nor HOME)."""
    where = native.table(manifest.EXECUTABLE)["caches"][kind]
    if not where:
        raise RunFailed("no cache folder: set BANDWALL_CACHE_DIR (or XDG_CACHE_HOME, or HOME)")
    return Path(where)


def time_blocks_path() -> Path:
    """The cache file of ISO3DFD's settled time-block races on this machine."""
    return _cache_file("time_blocks")


def time_block_rows() -> list[dict]:
    """One row per race kept: the run it holds for (grid, threads, kernel, blocks, team, NUMA
    nodes), its depth and team, whether it settled (an undecided race's rounds are kept for the next
    race like it to decide on with its own), how many races in a row settled on it (sweeps are taken
    without racing from the second on), the CPU, the date, why."""
    out = []
    for key, e in _entries(time_blocks_path(), "settled races"):
        out.append(
            {
                "run": key,
                "depth": e.get("depth", ""),
                "team": e.get("team", ""),
                "settled": bool(e.get("decisive", True)),
                "races": e.get("races", 1),
                "cpu": e.get("cpu", ""),
                "measured": e.get("measured", ""),
                "why": e.get("why", ""),
            }
        )
    return out


def _entries(p: Path, what: str) -> list[tuple[str, dict]]:
    """The cache file's entries by key; RunFailed naming the file for one that is not an object."""
    out = sorted(_load(p)["choices"].items())
    for key, e in out:
        if not isinstance(e, dict):
            raise RunFailed(
                f"the cache of {what} {str(p)!r} holds an entry that is not one bandwall wrote: {key!r}"
            )
    return out


def _forget_all(p: Path) -> int:
    """Empties the cache file p of its choices; returns how many there were."""
    doc = _load(p)
    n = len(doc["choices"])
    if n:
        doc["choices"] = {}
        _save(p, doc)
    return n


def forget_time_blocks() -> int:
    """Removes every settled time-block race of this machine; returns how many."""
    return _forget_all(time_blocks_path())


SHAPES_ABOUT = (
    "ISO3DFD register shapes that bandwall tune iso3dfd settled beyond noise on this machine, per radius "
    "(the table's key) and variant; bandwall-iso3dfd runs them by default (config.row_shape.how: tuned). "
    "Delete this file, or run bandwall db row-kernels --forget, to go back to the table's or the compiled default."
)


def shapes_path() -> Path:
    """The cache file of the ISO3DFD register shapes bandwall tune kept on this machine."""
    return _cache_file("iso3dfd_shapes")


# what bandwall-iso3dfd reads from a kept entry (Measurement::choose_*): the step shape, the prefetch
# setting (distance and cache) and the sweeps' shape
ROW_KNOBS = ("shape", "prefetch", "swept_shape")


def keep_row_kernel(kernel: str, isa: str, knobs: dict | None, why: str, measured: str) -> None:
    """Keeps the row kernel's knobs (shape: a register shape's name; prefetch: the setting as --prefetch
    takes it, rows ahead and cache, 1:L2; swept_shape:
    the sweeps' register shape) for its
    key (iso3dfd.rows, iso3dfd.rows.r1, ...) and variant, so that later runs take them (a knob left
    out stays the table's or the compiled default); None forgets what was kept there."""
    p = shapes_path()
    doc = _load(p)
    key = f"{kernel} {isa}"
    if knobs is None:
        if doc["choices"].pop(key, None) is None:
            return
    else:
        unknown = set(knobs) - set(ROW_KNOBS)
        if unknown or not knobs:
            raise ValueError(f"row kernel knobs are {', '.join(ROW_KNOBS)}, not {sorted(unknown) or 'none'}")
        doc["choices"][key] = {"kernel": kernel, "isa": isa, **knobs, "why": why, "measured": measured}
    doc["about"] = SHAPES_ABOUT
    p.parent.mkdir(parents=True, exist_ok=True)
    _save(p, doc)


def forget_row_kernels() -> int:
    """Removes every row kernel knob bandwall tune kept on this machine; returns how many entries."""
    return _forget_all(shapes_path())


def shape_rows() -> list[dict]:
    """One row per kept entry: kernel, variant, shape, prefetch, swept shape, date, why."""
    return [
        {k: e.get(k, "") for k in ("kernel", "isa", *ROW_KNOBS, "measured", "why")}
        for _, e in sorted(_load(shapes_path())["choices"].items())
        if isinstance(e, dict)
    ]


def knob_races_path() -> Path:
    """The cache file of the row kernel knobs raced on runs' data on this machine."""
    return _cache_file("knob_races")


def knob_race_rows() -> list[dict]:
    """One row per knob race kept: the run it holds for (kernel key, variant, knob, size class,
    threads), the knob chosen and the default, whether it settled (a first race's winner awaits a
    second race that confirms it), the candidates, the CPU, the date, why."""
    out = []
    for key, e in _entries(knob_races_path(), "knob races"):
        out.append(
            {
                "run": key,
                "chosen": e.get("chosen", ""),
                "default": e.get("default", ""),
                "settled": bool(e.get("settled", False)),
                "candidates": ", ".join(map(str, e.get("candidates", []))),
                "cpu": e.get("cpu", ""),
                "measured": e.get("measured", ""),
                "why": e.get("why", ""),
            }
        )
    return out


def forget_knob_races() -> int:
    """Removes every knob race kept on this machine; returns how many."""
    return _forget_all(knob_races_path())
