"""The comparisons a sensitivity record states, as claims (bandwall.core.claims): the program's run
time beside each co-runner against alone, each control's, and the copies' throughput and time
against one copy. Every slowdown the record holds is an interval of paired ratios (time beside over
the same round's time alone, so that "rises" beyond noise is "slowed"); claim_of_ratio decides it
by the rule by which bandwall decides everything, and the sentences of the verdict, the controls and
the copies are rendered from those claims (say(), or words chosen by the claim's direction)."""

from __future__ import annotations

from bandwall.core import decide
from bandwall.core.claims import FALLS, NOISE, RISES, Claim, claim_of_ratio

PROGRAM = "the program's run time"
BANDWIDTH_CONTROL = "the bandwidth control's time"  # the STREAM triad's: its rate alone over beside
CACHE_CONTROL = "the cache control's time an access"
THROUGHPUT = "throughput"
COPY_TIME = "a copy's run time"
ALONE = "alone"
PLACEBO = "beside the placebo"
ONE_COPY = "one copy"
ONE_COPY_ALONE = "one copy alone"


def bandit(p: dict) -> str:
    """The label of a bandit dose: what it took beside the program (or the control), else its dose."""
    taken = p.get("taken_GBps")
    return f"the bandit taking {taken:.1f} GB/s" if taken is not None else f"the bandit at dose {p['dose']}"


def cache_left(p: dict) -> str:
    """The label of a pirate dose: the cache it left, else what it held."""
    left = p.get("left_MiB")
    if left is not None:
        return f"{left:.3g} MiB of the cache left"
    return f"the pirate holding {p['pirate_MiB']:.3g} MiB"


def copies(k: int) -> str:
    return f"{k} cop{'y' if k == 1 else 'ies'} at once"


def slowdown(figure: str, p: dict, label: str) -> Claim:
    """The rule on one dose's slowdown (p["slowdown"]: the interval of the paired ratios beside over
    alone that the record holds): "rises" when the dose slowed it beyond noise."""
    return claim_of_ratio(figure, ALONE, label, p["slowdown"])


def deciding(figure: str, points: list[dict], label) -> Claim | None:
    """The claim a curve's verdict rests on: at the worst dose (by its median) of those that slowed
    it beyond noise, else at the worst dose of all; None without doses. It rises exactly when some
    dose slowed it beyond noise."""
    claims = [(slowdown(figure, p, label(p)), p) for p in points]
    slowed = [cp for cp in claims if cp[0].direction == RISES] or claims
    worst = max(slowed, key=lambda cp: cp[1]["slowdown"]["median"], default=None)
    return worst[0] if worst else None


def figures(c: Claim) -> str:
    """'1.35x, 1.30 to 1.40 over 5 paired rounds' (and 'too few for a 90% interval' when so)."""
    if c.interval is None:
        return "no paired rounds to compare"
    out = f"{c.ratio:.2f}x, {c.interval[0]:.2f} to {c.interval[1]:.2f} over {c.rounds} paired rounds"
    if not c.enough:
        out += f", too few for a {decide.rule().confidence:.0%} interval"
    return out


def by_direction(c: Claim, rises: str, falls: str, noise: str = NOISE) -> str:
    """Words chosen by the claim's direction, with its figures: '{words} ({figures})'."""
    words = rises if c.direction == RISES else falls if c.direction == FALLS else noise
    return f"{words} ({figures(c)})"
