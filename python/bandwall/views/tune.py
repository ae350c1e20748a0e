"""Terminal and CSV views of tune records: the trials ranked, the choice and the verdict in words
rendered from the record's claims (the best against what it ties with and against the runner-up),
the command lines."""

from __future__ import annotations

from bandwall.display import table
from bandwall.tune.verdict import BEST, standing, stored_claims


def _words(config: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in config.items())


def rows(rec: dict) -> list[list]:
    """One row per configuration tried, fastest first, failures last."""
    r = rec["result"]
    best = r["best"]["config"]
    chosen = "best" if standing(stored_claims(rec)) == BEST else "chosen"
    tied = [t["config"] for t in r["indistinguishable"]]
    ok = sorted((t for t in r["trials"] if "median" in t), key=lambda t: -t["median"])
    out = []
    for t in ok:
        mark = chosen if t["config"] == best else ("tie" if t["config"] in tied else "")
        out.append([_words(t["config"]), t["median"], t["min"], t["max"], t["rounds"], mark])
    for t in r["trials"]:
        if "failure" in t:
            out.append([_words(t["config"]), None, None, None, 0, f"failed: {t['failure']}"])
    return out


def render(con, rec: dict) -> None:
    r, c = rec["result"], rec["config"]
    con.print(
        table(
            f"tune {c['target']}: {len(r['trials'])} configurations tried of {r['space_size']} "
            f"({r['runs']} runs, {r['resumed_trials']} stored trials reused; an exhaustive search: "
            f"{r['exhaustive_runs']} runs)",
            ["configuration", f"median {r['unit']}", "min", "max", "rounds", ""],
            rows(rec),
        )
    )
    b = r["best"]
    con.print(
        f"{standing(stored_claims(rec))}: {_words(b['config'])}: {b['median']:.2f} {r['unit']} "
        f"(min {b['min']:.2f}, max {b['max']:.2f}, {b['rounds']} rounds); {r['why']}",
        markup=False,
    )
    for said in r.get("claims_said", []):  # rendered from result.claims when the record was made
        con.print(f"verdict: {said}", markup=False)
    if r["stopped"] != "converged":
        con.print(f"stopped: {r['stopped']} (the best so far)", markup=False)
    con.print(f"surplus cores: {r['surplus_cores']}", markup=False)
    for note in c["notes"]:
        con.print(f"pruned: {note}", markup=False)
    for knob, why in c["left_out"].items():
        con.print(f"not searched: {knob}: {why}", markup=False)
    con.print(f"run it: {r['command']['bandwall']}", markup=False, soft_wrap=True)
    if "plain" in r["command"]:
        con.print(f"without bandwall: {r['command']['plain']}", markup=False, soft_wrap=True)


def csv_rows(rec: dict):
    return (["configuration", "median", "min", "max", "rounds", "mark"], rows(rec))
