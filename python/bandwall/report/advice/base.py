"""The parts every recommendation shares: the scorecard line, the evidence it reads, the registry
type, and the common wording (record ids, the efficiency flag)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bandwall.report.spread import Spread

EFFICIENCY_FLAG = 0.8  # efficiencies below this are flagged (the POP CoE's performance-assessment rule)
PROGRAM = "./your_program"
STORED = "stored"  # the Evidence section of stored experiments of this machine (interference, sensitivity)


@dataclass
class Line:
    topic: str
    measured: str
    threshold: str
    verdict: str
    fix: str = ""
    evidence: str = ""
    flag: bool = False
    value: Spread | None = None  # the headline figure, compared with earlier reports
    limit: float | None = None  # the number value is judged against, in its unit (a mark on the page)

    def to_json(self) -> dict:
        out = {
            k: getattr(self, k)
            for k in ("topic", "measured", "threshold", "verdict", "fix", "evidence", "flag")
        }
        if self.value is not None:
            out["value"] = self.value.to_json()
        if self.limit is not None:
            out["limit"] = self.limit
        return out

    @classmethod
    def from_json(cls, d: dict) -> Line:
        value = Spread.from_json(d["value"]) if d.get("value") else None
        rest = {k: v for k, v in d.items() if k not in ("value", "limit")}
        return cls(**rest, value=value, limit=d.get("limit"))


@dataclass
class Evidence:
    """The records a report rests on, by section (each record with its "id" when stored)."""

    sections: dict[str, list[dict]] = field(default_factory=dict)

    def all(self, tool: str) -> list[dict]:
        return [r for recs in self.sections.values() for r in recs if r.get("tool") == tool]

    def section(self, name: str) -> list[dict]:
        return self.sections.get(name, [])

    def home_of(self, rec: dict) -> list[dict]:
        """The records of the section rec belongs to."""
        return next((recs for recs in self.sections.values() if any(r is rec for r in recs)), [])


Rule = Callable[[Evidence], list[Line]]


def ids(recs: list[dict]) -> str:
    found = [f"#{r['id']}" for r in recs if r.get("id") is not None]
    return ("records " + ", ".join(found)) if found else "records not stored (--no-store)"


def efficiency_flag(e: float) -> str:
    return f"below {EFFICIENCY_FLAG}: flagged" if e < EFFICIENCY_FLAG else f"at or above {EFFICIENCY_FLAG}"


def command_lines(lines: list[Line]) -> list[str]:
    """The fixes to use, each once, in page order."""
    seen: dict[str, None] = {}
    for line in lines:
        if line.fix:
            seen.setdefault(line.fix, None)
    return list(seen)
