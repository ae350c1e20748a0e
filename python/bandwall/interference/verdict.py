"""Does leaving the surplus cores free pay? Read from an interference record: the kernel on the
knee's cores with the noise on a surplus core against the kernel on every core beside the noise.
A difference within the spread (the two cases' ranges over the rounds overlap) is "no difference
beyond noise". A plain function of records, so the report can use it."""

from __future__ import annotations

PAYS = "pays"
DOES_NOT_PAY = "does not pay"
NO_DIFFERENCE = "no difference beyond noise"
ANSWERS = (PAYS, DOES_NOT_PAY, NO_DIFFERENCE)
# Fewer rounds than this measure no spread: the verdict is then no difference beyond noise.
MIN_ROUNDS = 2

# The cases of an interference record (result.cases[].case).
ALL_ALONE, ALL_NOISE, KNEE_ALONE, KNEE_NOISE = "all-alone", "all-noise", "knee-alone", "knee-noise"


def case(rec: dict, name: str) -> dict:
    return next(c for c in rec["result"]["cases"] if c["case"] == name)


def compare(a: dict, b: dict, higher_is_better: bool) -> tuple[str, float]:
    """(PAYS when b beats a beyond both spreads, DOES_NOT_PAY when a beats b, else NO_DIFFERENCE;
    b's median over a's, as a speed-up: above 1 when b is better)."""
    ratio = b["median"] / a["median"] if higher_is_better else a["median"] / b["median"]
    if higher_is_better:
        b_wins, a_wins = b["min"] > a["max"], a["min"] > b["max"]
    else:
        b_wins, a_wins = b["max"] < a["min"], a["max"] < b["min"]
    return (PAYS if b_wins else DOES_NOT_PAY if a_wins else NO_DIFFERENCE), ratio


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
    of leaving the surplus cores free beside the noise, and what leaving them free costs when the
    machine is quiet; advice (how to keep them free) when it pays."""
    hib = rec["config"]["higher_is_better"]
    unit = rec["result"]["unit"]
    all_noise, knee_noise = case(rec, ALL_NOISE), case(rec, KNEE_NOISE)
    answer, ratio = compare(all_noise, knee_noise, hib)
    quiet, quiet_ratio = compare(case(rec, ALL_ALONE), case(rec, KNEE_ALONE), hib)
    k, n = rec["config"]["cores_knee"], rec["config"]["cores_all"]
    rounds = min(len(all_noise["values"]), len(knee_noise["values"]))
    if rounds < MIN_ROUNDS:  # one value per case has no spread to judge a difference against
        answer = NO_DIFFERENCE
    figures = lambda c: f"{c['median']:.4g} {unit} (min {c['min']:.4g}, max {c['max']:.4g})"  # noqa: E731
    if answer == PAYS:
        text = f"leaving {n - k} surplus core(s) free pays beside the noise: {ratio:.2f}x"
    elif answer == DOES_NOT_PAY:
        text = f"leaving {n - k} surplus core(s) free does not pay: every core is {1 / ratio:.2f}x as fast beside the noise"
    elif rounds < MIN_ROUNDS:
        text = f"no difference beyond noise can be told from {rounds} round(s): no spread measured ({ratio:.2f}x)"
    else:
        text = f"no difference beyond noise between {k} and {n} cores beside the noise ({ratio:.2f}x, ranges overlap)"
    out = {
        "answer": answer,
        "text": text,
        "speedup": ratio,
        "compared": [ALL_NOISE, KNEE_NOISE],
        "figures": {
            f"{n} of {n} cores beside the noise": figures(all_noise),
            f"{k} of {n} cores, noise on a surplus core": figures(knee_noise),
        },
        "quiet": {"answer": quiet, "speedup": quiet_ratio},
    }
    if answer == PAYS:
        out["advice"] = keep_free_advice(rec)
    return out
