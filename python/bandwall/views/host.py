"""What a virtual machine's host took from a run's CPUs while it ran (the records' provenance.steal)."""

from __future__ import annotations

# From a hundredth of the run's CPU time on, the host's share is named: a repetition or a round it
# fell in runs that much slower, and more on the CPUs it fell on (one vCPU of two stopped for a
# while turns a two-core figure into one core's).
SHOWN_STEAL = 0.01


def steal_notes(recs: list[dict]) -> list[str]:
    """One line for the runs whose host took SHOWN_STEAL or more of their CPUs' time, else none. A
    record made of several runs (provenance.steal.runs) counts as those runs: its share is the most
    any of them lost, its seconds theirs together."""
    stolen = [
        s for s in (r.get("provenance", {}).get("steal") for r in recs) if s and s["share"] >= SHOWN_STEAL
    ]
    if not stolen:
        return []
    worst = max(stolen, key=lambda s: s["share"])
    many = worst.get("runs", 1)
    if len(recs) == 1:
        runs = "the run" if many == 1 else f"its {many} runs"
    else:
        runs = f"{len(stolen)} of {len(recs)} runs"
    most = "" if len(stolen) == 1 and many == 1 else "up to "
    seconds = f"{worst['seconds']:.2f} s" + (" in all" if many > 1 else "")
    return [
        f"the host took {most}{worst['share']:.0%} of the CPUs' time ({seconds}) in {runs} "
        "(steal: this virtual machine's vCPUs given to other work): figures taken then are slow and "
        "unsteady; compare only rounds run side by side"
    ]
