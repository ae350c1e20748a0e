"""Figures of merit: how a run of a command is scored (a field of its JSON record, a number matched in
its output, or wall time), turned into a rate; and the median of repeated rounds."""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field

from bandwall.core.errors import RunFailed, UsageError


@dataclass
class Fom:
    """How a run is scored: a field of the record a built-in prints, a number in the output, or wall time.

    Every mode is turned into a rate (higher is better) summed over its processes, so modes that run
    one process and modes that run one per node compare as throughput of the whole machine.
    """

    kind: str  # record, regex, wall
    path: tuple[str, ...] = ()  # for record
    regex: re.Pattern | None = None  # for regex: group 1 (or the whole match) is the number
    lower_is_better: bool = False  # for regex: the number is a time, not a rate
    unit: str = ""
    description: str = field(default="")

    @staticmethod
    def parse(text: str, lower_is_better: bool = False) -> Fom:
        """The --fom option: record:FIELD.PATH (a number of the last JSON record the command prints,
        as bandwall's executables do: record:result.best_GBps) or a regular expression."""
        if not text.startswith("record:"):
            return Fom.from_regex(text, lower_is_better)
        path = tuple(text[len("record:") :].split("."))
        if not all(path):
            raise UsageError(f"--fom {text!r}: name a field after record:, such as record:result.best_GBps")
        if lower_is_better:
            raise UsageError("--lower-is-better goes with a --fom regular expression, not with record:")
        return Fom("record", path=path, unit="as recorded", description=f"{'.'.join(path)} of the record")

    @staticmethod
    def from_regex(text: str, lower_is_better: bool = False) -> Fom:
        try:
            rx = re.compile(text)
        except re.error as e:
            raise UsageError(f"--fom {text!r} is not a regular expression: {e}") from e
        unit = "1/s" if lower_is_better else "as printed"
        return Fom(
            "regex",
            regex=rx,
            lower_is_better=lower_is_better,
            unit=unit,
            description=f"number matched by {text!r}" + (" (lower is better)" if lower_is_better else ""),
        )

    @staticmethod
    def wall() -> Fom:
        return Fom("wall", unit="runs/s", description="runs per second (from wall time)")

    def value(self, proc: dict) -> float:
        """The figure of merit of one process from its launcher entry (stdout, wall_s)."""
        if self.kind == "wall":
            return 1.0 / max(proc["wall_s"], 1e-9)
        if self.kind == "record":
            rec = last_record(proc["stdout"])
            v = rec
            for key in self.path:
                if not isinstance(v, dict) or key not in v:
                    raise RunFailed(f"the record has no {'.'.join(self.path)}")
                v = v[key]
            return float(v)
        matches = list(self.regex.finditer(proc["stdout"]))
        if not matches:
            raise RunFailed(
                f"--fom {self.regex.pattern!r} matched nothing in the output of process "
                f"{proc['rank']} ({proc['proc']})"
            )
        m = matches[-1]
        text = m.group(1) if m.groups() else m.group(0)
        try:
            v = float(text)
        except (TypeError, ValueError) as e:
            raise RunFailed(f"--fom {self.regex.pattern!r} matched {text!r}, which is not a number") from e
        if self.lower_is_better:
            if v <= 0:
                raise RunFailed(f"--fom {self.regex.pattern!r} matched {v}, not a positive time")
            return 1.0 / v
        return v

    def mode_value(self, processes: list[dict]) -> float:
        return sum(self.value(p) for p in processes)


def last_record(stdout: str) -> dict:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RunFailed("the built-in printed no record")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise RunFailed(f"the built-in printed a malformed record: {e}") from e


def median(values: list[float]) -> float:
    return statistics.median(values)
