"""The parts every recommendation shares: the scorecard line, the claims it makes, the evidence it
reads, the registry type, and the common wording (record ids, the efficiency flag).

A card's words about a comparison are rendered from its claims (say()): a claim is the decision
rule's verdict on two figures measured in paired rounds (claim()), with the medians and the interval
the rule used, so a sentence cannot say "rises" when the rule found no difference beyond noise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bandwall.core.claims import Claim
from bandwall.core.spread import Spread

EFFICIENCY_FLAG = 0.8  # efficiencies below this are flagged (the POP CoE's performance-assessment rule)
PROGRAM = "./your_program"
STORED = "stored"  # the Evidence section of stored experiments of this machine (interference, sensitivity)


def stream_rates(rec: dict) -> Spread:
    """A stream record's bandwidth over the rates of its kept repetitions (median, min and max of the
    rates the rule compares, so a card shows the figures its claim used), else its own figures."""
    s = Spread.of_stream(rec)
    return Spread.of(s.values, s.unit) if s.values else s


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
    claims: list[Claim] = field(default_factory=list)  # the comparisons its verdict words (say())

    def to_json(self) -> dict:
        out = {
            k: getattr(self, k)
            for k in ("topic", "measured", "threshold", "verdict", "fix", "evidence", "flag")
        }
        if self.value is not None:
            out["value"] = self.value.to_json()
        if self.limit is not None:
            out["limit"] = self.limit
        out["claims"] = [c.to_json() for c in self.claims]
        return out

    @classmethod
    def from_json(cls, d: dict) -> Line:
        value = Spread.from_json(d["value"]) if d.get("value") else None
        claims = [Claim.from_json(c) for c in d.get("claims", [])]
        rest = {k: v for k, v in d.items() if k not in ("value", "limit", "claims")}
        return cls(**rest, value=value, limit=d.get("limit"), claims=claims)


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
