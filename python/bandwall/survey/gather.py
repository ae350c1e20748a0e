"""Where a survey's node records come from: files or folders gathered by hand, or one task on every
node of the Slurm allocation this runs in (one `srun` step a node), each writing its record to a
folder the nodes share.

What cannot be judged is named, not fatal. A file that is not a node record that can be judged (cut
short, empty, another tool's record, a second record of a node, a record whose own check failed, one
without figures) is skipped with the reason, and the others are judged; the files are only read.
A node of the allocation that gives no usable record (its task hangs past the timeout, its step
fails, its slurmd is gone, the record it wrote cannot be judged) is missing, with the reason, and
only missing (its file is not also counted skipped), by srun and by mpirun alike; the others are
judged. Each node is its own step
because Slurm aborts a whole step when its launch fails on one node, which would lose every node."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from bandwall.core import process, records
from bandwall.core.errors import RunFailed, UsageError
from bandwall.survey import node

# About how long one node's task takes (seconds), --short and not; the default timeout is a few
# times that. Nodes that are one machine take turns, so give those more (--timeout).
NODE_S = {True: 30, False: 120}
TIMEOUT_TIMES = 4
STOP_GRACE_S = 10.0  # after the timeout: how long a stopped launcher has to end its step before it is killed


def default_timeout(short: bool) -> float:
    return float(TIMEOUT_TIMES * NODE_S[short])


@dataclass
class Gathered:
    """The node records to judge; the files skipped ({file, reason}); the nodes that gave no record
    ({node, reason})."""

    records: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    missing: list[dict] = field(default_factory=list)


class Skip(Exception):
    """A file that holds no node record to judge; the message is why."""


def in_slurm() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None


def write(rec: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{rec['result']['node']}.json"
    tmp = path.with_suffix(".json.part")
    tmp.write_text(json.dumps(rec, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def load(path: Path) -> dict:
    """One record from a file (a baseline): UsageError naming the file when it is not one."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"{path}: not a JSON record ({e})") from None
    if not isinstance(rec, dict):
        raise UsageError(f"{path}: not a JSON record (a JSON {type(rec).__name__}, not an object)")
    try:
        return records.validate(rec)
    except RunFailed as e:
        raise UsageError(f"{path}: {e}") from None


def examine(path: Path) -> dict:
    """The node record in a file, or Skip with why it cannot be judged."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise Skip(f"cannot be read ({e.strerror or e})") from None
    if not data.strip():
        raise Skip(f"empty ({len(data)} bytes): no record")
    try:
        text = data.decode("utf-8")
        rec = json.loads(text)
    except UnicodeDecodeError:
        raise Skip("not a JSON record (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        # cut short: nothing of JSON's structure follows where the parser stopped, only the start of
        # a literal or a number ('tr', '1.5e-') or nothing at all, or a string left open
        if e.msg.startswith("Unterminated string") or not set(text[e.pos :]) & set(',:{}[]"'):
            raise Skip(f"truncated: not a JSON record, it stops after {len(data)} bytes ({e.msg})") from None
        raise Skip(f"not a JSON record ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("tool"), str):
        raise Skip("not a bandwall record (JSON without a tool)")
    if rec["tool"] != node.TOOL:
        raise Skip(f"a {rec['tool']!r} record, not a {node.TOOL} record (bandwall survey --local)")
    result = rec.get("result")
    if not isinstance(result, dict) or not result.get("figures"):
        raise Skip(f"a {node.TOOL} record without figures: nothing to judge")
    if records.failed(rec):
        how = rec["validation"].get("method") or "no method named"
        raise Skip(f"its own check failed (validation passed false: {how}): its figures are not trusted")
    found = records.problems(rec)
    if found:
        raise Skip(f"a malformed {node.TOOL} record at {found[0]}")
    return rec


def _when(rec: dict) -> tuple[int, datetime | None]:
    """The record's own time (provenance.date) for ordering; a record without one is oldest."""
    text = rec.get("provenance", {}).get("date")
    if isinstance(text, str):
        try:
            t = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return 1, t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return 0, None


def one_a_node(found: list[tuple[Path, dict]]) -> tuple[list[dict], list[dict]]:
    """One record a node: of two or more, the newest by its own time (provenance.date), of equal
    times the last by file name; the others skipped with the one kept. Returns (records, skipped)."""
    by_node: dict[str, list[tuple[Path, dict]]] = {}
    for path, rec in found:
        by_node.setdefault(rec["result"]["node"], []).append((path, rec))
    keep, skipped = [], []
    for name, group in by_node.items():
        group.sort(key=lambda pr: (_when(pr[1]), str(pr[0])))
        kept_path, kept = group[-1]
        keep.append(kept)
        for path, rec in group[:-1]:
            if _when(rec) == _when(kept):
                why = f"the same time as {kept_path.name}, kept as the last by name"
            else:
                why = f"older than {kept_path.name} ({_date(rec)} against {_date(kept)}), kept as the newest"
            skipped.append({"file": str(path), "reason": f"another record of node {name!r}: {why}"})
    order = {id(rec): k for k, (_, rec) in enumerate(found)}
    return sorted(keep, key=lambda r: order[id(r)]), skipped


def _date(rec: dict) -> str:
    return str(rec.get("provenance", {}).get("date") or "no date")


def files_of(paths: list[Path]) -> list[Path]:
    """The files named and the *.json files of the folders named."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                raise UsageError(f"{p}: a folder with no *.json node records")
            files += found
        elif p.exists():
            files.append(p)
        else:
            raise UsageError(f"{p}: no such file")
    return files


def examine_all(files: list[Path]) -> Gathered:
    """The node records among files, one a node, and the files skipped with why."""
    found, skipped = [], []
    for f in files:
        try:
            found.append((f, examine(f)))
        except Skip as e:
            skipped.append({"file": str(f), "reason": _line(str(e))})
    recs, twice = one_a_node(found)
    order = {str(f): k for k, f in enumerate(files)}
    return Gathered(recs, sorted(skipped + twice, key=lambda s: order[s["file"]]))


def read(paths: list[Path]) -> Gathered:
    """The node records in files and folders (a folder: its *.json files), read and never changed;
    UsageError (one line, every file and why) when none can be judged."""
    got = examine_all(files_of(paths))
    if not got.records:
        why = "; ".join(f"{s['file']}: {s['reason']}" for s in got.skipped)
        raise UsageError(f"no node record to judge: {why}")
    return got


def _line(text: str) -> str:
    return " ".join(text.split())


def local_task(folder: Path, short: bool) -> list[str]:
    """The command each node's task runs: this node's record into folder."""
    argv = [sys.executable, "-m", "bandwall", "survey", "--local", "--no-store", "--format", "json"]
    return [*argv, "--out-dir", str(folder), *(["--short"] if short else [])]


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _why_failed(text: str, code: int, what: str) -> str:
    """A launcher's failure in one line: the task's own error, else the launcher's, else its exit."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    own = [ln for ln in lines if ln.startswith("bandwall:")]
    errors = [ln for ln in lines if "error" in ln.lower()]
    if own:
        line = own[-1]
    elif errors:
        line = errors[0]  # srun's first error names the node and the cause; the later ones follow from it
    else:
        line = process.last_line(text)
    return _line(f"its task failed ({what} exit {code})" + (f": {line}" if line else ""))


def judge_written(written: list[Path], nodes: list[str], why_none) -> Gathered:
    """What the nodes' tasks wrote during this run, judged; the same for every way the tasks are
    launched. A node that gave no usable record is missing, with why, and only missing: a file this
    run wrote that cannot be judged names its node (the task writes <node>.json) missing with the
    file's reason, not a file skipped; only a second record of a node that has a usable one stays
    skipped. why_none(node, wrote) is why a node of nodes that wrote nothing gave no record (None:
    not missing), wrote how many nodes wrote a record, usable or not. Missing nodes come in the
    order of nodes, then the other nodes whose record cannot be judged."""
    got = examine_all(written)
    names = {r["result"]["node"] for r in got.records}
    unusable: dict[str, str] = {}
    kept = []
    for s in got.skipped:
        name = Path(s["file"]).stem
        if name in names:
            kept.append(s)
        else:
            unusable.setdefault(name, f"its record was not judged: {s['reason']}")
    got.skipped = kept
    wrote = len(names) + len(unusable)
    missing = []
    for n in nodes:
        if n in names:
            continue
        why = unusable.pop(n, None) or why_none(n, wrote)
        if why:
            missing.append({"node": n, "reason": why})
    got.missing = missing + [{"node": n, "reason": why} for n, why in unusable.items()]
    return got


def run_tasks(
    commands: dict[str, list[str]],
    folder: Path,
    timeout: float,
    env: dict | None = None,
    what: str = "srun",
) -> Gathered:
    """Starts each node's command at once (the node's task: it writes folder/<node>.json), each in
    a session of its own, and waits for them until the timeout; then stops those still running. A
    node whose record was not written during this run is missing, with why (a record already there
    from an earlier run is left as it was, not judged)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {n: folder / f"{n}.json" for n in commands}
    before = {n: _stamp(p) for n, p in paths.items()}
    children: dict[str, process.Child] = {}
    late: set[str] = set()
    unstarted: dict[str, str] = {}
    try:
        try:
            for n, argv in commands.items():
                try:
                    children[n] = process.start(argv, session=True, env={**os.environ, **(env or {})})
                except OSError as e:
                    unstarted[n] = f"{argv[0]}: {e.strerror or e}"
            deadline = time.monotonic() + timeout
            for n, c in children.items():
                if c.wait(max(0.0, deadline - time.monotonic())) is None:
                    late.add(n)
        finally:
            process.stop(list(children.values()), STOP_GRACE_S)

        written = [p for n, p in paths.items() if _stamp(p) not in (None, before[n])]

        def why_none(n: str, wrote: int) -> str | None:
            if paths[n] in written:  # a record judged under the name it gives itself
                return None
            if n in unstarted:
                return f"its task could not be started ({unstarted[n]})"
            if n in late:
                return f"no record after {timeout:g} s: its task was still running, stopped"
            if children[n].returncode != 0:
                return _why_failed(children[n].stderr(), children[n].returncode, what)
            return "its task ended without writing a record"

        return judge_written(written, list(commands), why_none)
    finally:
        for c in children.values():
            c.close()


def launch(
    prefix: list[str],
    folder: Path,
    short: bool,
    hosts: list[str],
    timeout: float,
    env: dict | None = None,
    what: str = "mpirun",
) -> Gathered:
    """One task per host started by prefix (mpirun, in a session of its own), each measuring its
    host into folder, waited for until the timeout. A host whose task wrote a record that cannot be
    judged is missing with why; the hosts that gave no record are missing when fewer records came
    than hosts (a host's record is named by the host's own name, which the hostfile may spell
    otherwise)."""
    folder.mkdir(parents=True, exist_ok=True)
    before = {p.name: _stamp(p) for p in folder.glob("*.json")}
    ended = process.run(
        [*prefix, *local_task(folder, short)],
        timeout=timeout,
        grace=STOP_GRACE_S,
        session=True,
        env={**os.environ, **(env or {})},
    )
    if ended.timed_out:
        why = f"no record after {timeout:g} s: {what} was still running, stopped"
    else:
        why = "" if ended.code == 0 else _why_failed(ended.stderr, ended.code, what)
    written = [p for p in sorted(folder.glob("*.json")) if _stamp(p) != before.get(p.name)]

    def why_none(host: str, wrote: int) -> str | None:
        if wrote >= len(hosts):  # every host wrote a record: this one under its own spelling
            return None
        return why or "its task ended without writing a record"

    got = judge_written(written, hosts, why_none)
    if not got.records:
        raise RunFailed(f"{what} of the survey's tasks gave no record: {why or 'none was written'}")
    return got


def cpus_per_node(text: str) -> int:
    """The fewest CPUs the allocation holds on any node, from SLURM_JOB_CPUS_PER_NODE ("8(x3),4")."""
    counts = [int(part.split("(")[0]) for part in text.split(",") if part.split("(")[0].isdigit()]
    return min(counts) if counts else 1


def hostnames(text: str) -> list[str]:
    """The node names of a Slurm host list ("cn[01-03,7],gpu1" gives cn01, cn02, cn03, cn7, gpu1)."""
    names: list[str] = []
    for part in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", text):
        names += _expand(part.strip())
    return names


def _expand(word: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", word)
    if not m:
        return [word] if word else []
    head, tail = word[: m.start()], word[m.end() :]
    out = []
    for rng in m.group(1).split(","):
        lo, _, hi = rng.partition("-")
        if not hi:
            values = [lo]
        elif lo.isdigit() and hi.isdigit():
            values = [str(k).zfill(len(lo)) for k in range(int(lo), int(hi) + 1)]
        else:
            raise UsageError(f"cannot read the Slurm node list {word!r}")
        out += [head + v + rest for v in values for rest in _expand(tail) or [""]]
    return out


def slurm_nodes() -> list[str]:
    """The nodes of this allocation (SLURM_JOB_NODELIST)."""
    text = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST") or ""
    names = hostnames(text)
    if not names:
        raise UsageError("inside Slurm but SLURM_JOB_NODELIST names no node")
    return names


def slurm(folder: Path, short: bool, timeout: float) -> Gathered:
    """One task on every node of the allocation, each its own step (a node whose launch fails does
    not abort the others'), given every CPU the allocation holds there (a task would otherwise be
    bound to one CPU and measure one core)."""
    cpus = cpus_per_node(os.environ.get("SLURM_JOB_CPUS_PER_NODE", "1"))
    task = local_task(folder, short)
    commands = {
        n: ["srun", "--nodes=1", "--ntasks=1", f"--nodelist={n}", f"--cpus-per-task={cpus}", *task]
        for n in slurm_nodes()
    }
    got = run_tasks(commands, folder, timeout)
    if not got.records:
        why = "; ".join(f"{m['node']}: {m['reason']}" for m in got.missing)
        raise RunFailed(f"no node of the allocation gave a record to judge: {why}")
    return got


def hosts(path: Path) -> list[str]:
    """The host names of an MPI hostfile (the first word of each line; # starts a comment)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise UsageError(f"{path}: cannot read the hostfile ({e.strerror or e})") from None
    names = [ln.split("#", 1)[0].split()[0] for ln in lines if ln.split("#", 1)[0].strip()]
    if not names:
        raise UsageError(f"{path}: a hostfile with no hosts")
    return names
