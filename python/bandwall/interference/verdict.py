"""Does leaving the surplus cores free pay? Read from an interference record: the kernel on the
knee's cores with the noise on a surplus core against the kernel on every core beside the noise,
their interleaved rounds paired and decided by the decision rule (core/decide.py), as the report's
card decides them: a difference the rule does not show is "no difference beyond noise". A plain
function of records, so the report can use it."""

from __future__ import annotations

from bandwall.core import decide

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


def verdict(rec: dict) -> dict:
    """The answer with its figures: the two cases compared, their median, min and max, the speed-up
    of leaving the surplus cores free beside the noise with the rule's interval (claims: what was
    compared, the direction the rule found, the interval), and what leaving them free costs when the
    machine is quiet; advice (how to keep them free) when it pays."""
    hib = rec["config"]["higher_is_better"]
    unit = rec["result"]["unit"]
    all_noise, knee_noise = case(rec, ALL_NOISE), case(rec, KNEE_NOISE)
    answer, ratio, iv = compare(all_noise, knee_noise, hib)
    quiet, quiet_ratio, _ = compare(case(rec, ALL_ALONE), case(rec, KNEE_ALONE), hib)
    k, n = rec["config"]["cores_knee"], rec["config"]["cores_all"]
    figures = lambda c: f"{c['median']:.4g} {unit} (min {c['min']:.4g}, max {c['max']:.4g})"  # noqa: E731
    told = f"{ratio:.2f}x, {iv.lo:.2f} to {iv.hi:.2f} over {iv.rounds} paired rounds" + (
        "" if iv.enough else ", too few for a 90% interval"
    )
    if answer == PAYS:
        text = f"leaving {n - k} surplus core(s) free pays beside the noise: {told}"
    elif answer == DOES_NOT_PAY:
        text = f"leaving {n - k} surplus core(s) free does not pay beside the noise: {told}"
    else:
        text = f"no difference beyond noise between {k} and {n} cores beside the noise ({told})"
    direction = {PAYS: "rises", DOES_NOT_PAY: "falls"}.get(answer, NO_DIFFERENCE)
    out = {
        "answer": answer,
        "text": text,
        "speedup": ratio,
        "compared": [ALL_NOISE, KNEE_NOISE],
        "figures": {
            f"{n} of {n} cores beside the noise": figures(all_noise),
            f"{k} of {n} cores, noise on a surplus core": figures(knee_noise),
        },
        "claims": [
            {
                "figure": "speed beside the noise",
                "from": f"{n} of {n} cores",
                "to": f"{k} of {n} cores, the noise on a surplus core",
                "direction": direction,
                "ratio": ratio,
                "interval": [iv.lo, iv.hi],
                "rounds": iv.rounds,
                "enough": iv.enough,
            }
        ],
        "quiet": {"answer": quiet, "speedup": quiet_ratio},
    }
    if answer == PAYS:
        out["advice"] = keep_free_advice(rec)
    return out
