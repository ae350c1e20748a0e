"""Does leaving the surplus cores free pay? Read from an interference record: the kernel on the
knee's cores with the noise on a surplus core against the kernel on every core beside the noise,
their interleaved rounds paired and decided by the decision rule (core/decide.py), as the report's
card decides them: a difference the rule does not show is "no difference beyond noise". A plain
function of records, so the report can use it."""

from __future__ import annotations

from bandwall.core import decide
from bandwall.core.claims import Claim, better, claim, say
from bandwall.core.spread import Spread

PAYS = "pays"
DOES_NOT_PAY = "does not pay"
NO_DIFFERENCE = "no difference beyond noise"
ANSWERS = (PAYS, DOES_NOT_PAY, NO_DIFFERENCE)
# The cases of an interference record (result.cases[].case).
ALL_ALONE, ALL_NOISE, KNEE_ALONE, KNEE_NOISE = "all-alone", "all-noise", "knee-alone", "knee-noise"


def case(rec: dict, name: str) -> dict:
    return next(c for c in rec["result"]["cases"] if c["case"] == name)


def compare(a: dict, b: dict, higher_is_better: bool) -> tuple[str, float, decide.Interval]:
    """(PAYS when b beats a beyond noise by the decision rule on their rounds paired in order,
    DOES_NOT_PAY when a beats b, else NO_DIFFERENCE; the median of the per-round ratios as a
    speed-up of b over a (above 1 when b is better); the rule's interval of it)."""
    xa, xb = list(a["values"]), list(b["values"])
    # rates: higher is better; a time becomes its inverse so that the ratio is b's speed-up either way
    ra, rb = (xa, xb) if higher_is_better else ([1 / x for x in xa if x > 0], [1 / x for x in xb if x > 0])
    iv = decide.ratio_interval(rb, ra)
    v = decide.verdict(iv)
    answer = PAYS if v == decide.FASTER else DOES_NOT_PAY if v == decide.SLOWER else NO_DIFFERENCE
    return answer, iv.median, iv


def keep_free_advice(rec: dict) -> list[str]:
    """How to keep the surplus cores free on the user's system."""
    cfg = rec["config"]
    k, n = cfg["cores_knee"], cfg["cores_all"]
    spare = n - k
    free = cfg["surplus_cpus"]
    return [
        f"run the memory-bound code on {k} of {n} cores: --threads {k}, OMP_NUM_THREADS={k} (or {k} MPI ranks per node)",
        f"under Slurm, keep {spare} core(s) per node for the system: sbatch --core-spec={spare} "
        f"(or --thread-spec={spare} for hardware threads)",
        f"on a machine you configure, keep daemons and interrupts off CPU(s) {free}: "
        f"the kernel parameters isolcpus={free} nohz_full={free} (and irqaffinity to the others)",
    ]


def surplus_claim(rec: dict) -> Claim:
    """The comparison the answer rests on: the kernel's figure on every core beside the noise
    against the knee's cores with the noise on a surplus core, their interleaved rounds paired in the
    order they ran, as the decision rule takes it (the report's card states this same claim)."""
    cfg, unit = rec["config"], rec["result"].get("unit", "")
    k, n = cfg["cores_knee"], cfg["cores_all"]
    hib = bool(cfg.get("higher_is_better", True))
    a, b = (Spread.of(case(rec, c)["values"], unit) for c in (ALL_NOISE, KNEE_NOISE))
    figure = "bandwidth beside the noise" if hib else "run time beside the noise"
    return claim(figure, a, b, f"{n} of {n} cores", f"{k} of {n} cores, the noise on a surplus core")


def verdict_text(rec: dict, c: Claim) -> tuple[str, bool | None]:
    """The answer's words, rendered from the claim, and whether leaving the cores free pays (True),
    costs (False) or makes no difference beyond noise (None)."""
    k, n = rec["config"]["cores_knee"], rec["config"]["cores_all"]
    found = better(c, bool(rec["config"].get("higher_is_better", True)))
    spare = f"{n - k} surplus core{'s' if n - k != 1 else ''}"
    if found is True:
        return f"leaving {spare} free pays beside the noise: {say(c)}", found
    if found is False:
        return f"leaving {spare} free does not pay beside the noise: {say(c)}", found
    return f"leaving {spare} free makes {say(c)}", found


def verdict(rec: dict) -> dict:
    """The answer with its figures: the two cases compared, their median, min and max, the speed-up
    of leaving the surplus cores free beside the noise (the median per-round ratio), the claim it
    rests on (surplus_claim: what was compared, the direction the rule found, the interval) and the
    words rendered from it, and what leaving them free costs when the machine is quiet; advice (how
    to keep them free) when it pays."""
    hib = rec["config"]["higher_is_better"]
    unit = rec["result"]["unit"]
    all_noise, knee_noise = case(rec, ALL_NOISE), case(rec, KNEE_NOISE)
    _, ratio, _ = compare(all_noise, knee_noise, hib)
    quiet, quiet_ratio, _ = compare(case(rec, ALL_ALONE), case(rec, KNEE_ALONE), hib)
    k, n = rec["config"]["cores_knee"], rec["config"]["cores_all"]
    figures = lambda c: f"{c['median']:.4g} {unit} (min {c['min']:.4g}, max {c['max']:.4g})"  # noqa: E731
    c = surplus_claim(rec)
    text, found = verdict_text(rec, c)
    answer = PAYS if found is True else DOES_NOT_PAY if found is False else NO_DIFFERENCE
    out = {
        "answer": answer,
        "text": text,
        "speedup": ratio,
        "compared": [ALL_NOISE, KNEE_NOISE],
        "figures": {
            f"{n} of {n} cores beside the noise": figures(all_noise),
            f"{k} of {n} cores, noise on a surplus core": figures(knee_noise),
        },
        "claims": [c.to_json()],
        "quiet": {"answer": quiet, "speedup": quiet_ratio},
    }
    if answer == PAYS:
        out["advice"] = keep_free_advice(rec)
    return out
