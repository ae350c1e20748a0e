"""The verdict of bandwall tune as claims: the best configuration against each it was found within
noise of (result.indistinguishable) and against the runner-up by median, each decided by the
decision rule (core/decide.py) on their last common rounds. The tune record carries them
(result.claims) with their words (result.claims_said, say()), and the best is called set apart only
when every claim finds it better beyond noise: the terminal view's words, and what the tune keeps
for later runs (a register shape), follow the same claims."""

from __future__ import annotations

from bandwall.core.claims import Claim, better, claim, say
from bandwall.core.spread import Spread


def _words(config: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in config.items()) or "the defaults"


def verdict_claims(rec: dict) -> list[Claim]:
    """The comparisons the tune's verdict rests on, as the decision rule takes them: the best
    configuration against each it was found within noise of (result.indistinguishable) and against
    the runner-up by median, each pair of rates on their last common rounds (those of the races that
    measured both, in the order they ran: the search's own pairing)."""
    r = rec["result"]
    rows = [t for t in r["trials"] if t.get("rates")]
    best = next((t for t in rows if t["config"] == r["best"]["config"]), None)
    if best is None:
        return []
    others = [t for t in rows if t is not best]
    tied = [t for t in others if any(t["config"] == x["config"] for x in r.get("indistinguishable", []))]
    runner = max((t for t in others if t not in tied), key=lambda t: t["median"], default=None)
    out = []
    for t in [*tied, *([runner] if runner is not None else [])]:
        n = min(len(t["rates"]), len(best["rates"]))
        a, b = (Spread.of(x["rates"][-n:], r["unit"]) for x in (t, best))
        out.append(claim(f"rate ({r['unit']})", a, b, _words(t["config"]), _words(best["config"])))
    return out


def set_apart(claims: list[Claim]) -> bool:
    """True when every claim finds the best (each claim's end) higher beyond noise than the
    configuration it is compared with; so when nothing else gave a rate."""
    return all(better(c) is True for c in claims)


def add_claims(rec: dict) -> list[Claim]:
    """Puts the verdict's claims (result.claims) and their words (result.claims_said) in the tune
    record; returns the claims."""
    claims = verdict_claims(rec)
    rec["result"]["claims"] = [c.to_json() for c in claims]
    rec["result"]["claims_said"] = [say(c) for c in claims]
    return claims


def stored_claims(rec: dict) -> list[Claim]:
    """The claims a tune record carries (none in a record from before they were stored)."""
    return [Claim.from_json(c) for c in rec["result"].get("claims", [])]


BEST = "best"
NOT_FASTEST = "chosen, slower beyond noise than another (cheaper)"
NO_DIFFERENCE = "chosen, no difference beyond noise from another"


def standing(claims: list[Claim]) -> str:
    """What the claims let the tune call its choice: BEST when set apart from every configuration
    compared, NOT_FASTEST when one of them is faster beyond noise (the cheaper choice within the
    rule's tolerance), else NO_DIFFERENCE (the rule could not separate them: within noise, or too
    few paired rounds)."""
    if set_apart(claims):
        return BEST
    if any(better(c) is False for c in claims):
        return NOT_FASTEST
    return NO_DIFFERENCE
