"""Terminal views of pin records: the run with where each thread ran, and the compare table."""

from __future__ import annotations

import sys

from bandwall.display import table
from bandwall.pinning import pin

# Where the CPUs came from, as the user wrote it: bandwall pin's options travel to the library as
# BANDWALL_PIN_CPUS; MP_BLIST and MP_BIND are PGI's variables.
SOURCES = {"BANDWALL_PIN_CPUS": "--cpus/--bind", "": "no binding"}


def render(con, rec: dict) -> None:
    c, r = rec["config"], rec["result"]
    where = ",".join(str(x) for x in c["cpus"]) or "-"
    con.print(
        f"pin: {' '.join(c['command'])}\n  policy {c['policy']} (from {SOURCES.get(c['source'], c['source'])}), CPUs {where}, "
        f"binding {c['mode']}, spin {c['spin']}, exit {r['exit_code']}, wall {r['wall_s']:.3f} s"
    )
    told = ", ".join(f"{k}={'(unset)' if v is None else v}" for k, v in c["openmp_env"].items())
    if told:
        con.print(f"  OpenMP runtimes told: {told}")
    if c["user_openmp_env"]:
        con.print(
            "  replaced from the environment: "
            + ", ".join(f"{k}={v}" for k, v in c["user_openmp_env"].items())
        )
    if "threads" in r:
        con.print(
            table(
                f"where each thread ran ({r['samples']} samples, every {c['interval_ms']} ms, and at exit)",
                ["thread", "tid", "meant for", "CPUs seen", "migrations", "voluntary", "involuntary"],
                pin.thread_rows(rec),
            )
        )
    summary = r.get("thread_summary")
    if summary:
        parts = []
        if summary["bound"]:
            parts.append(
                f"{summary['bound_stayed']} of {summary['bound']} bound threads seen only on their CPU"
            )
        if summary["unbound"]:
            parts.append(
                f"{summary['unbound_wandered']} of {summary['unbound']} unbound threads seen on more than one CPU"
            )
        con.print("  " + "; ".join(parts) + f"; {summary['migrations']} migrations in all")


def render_compare(con, rec: dict) -> None:
    r = rec["result"]
    rows = [
        [name, m["title"], m["value"], " ".join(f"{v:.4g}" for v in m["rounds"])]
        for name, m in r["modes"].items()
    ]
    con.print(
        table(
            f"pin --compare, {r['threads']} threads: {r['fom']}",
            ["mode", "what", f"median {r['fom_unit']}", "rounds"],
            rows,
        )
    )
    verdict = r.get("verdict")
    if verdict:  # rendered from the record's claims (the decision rule on the paired rounds)
        for line in verdict["claims_said"]:
            con.print(line, markup=False)
        return
    ratios = [  # a record from before the claims: the ratios of the medians alone
        f"{label}: {r[key]:.2f}x"
        for key, label in (
            ("bound_over_one_cpu", "bound / one CPU"),
            ("bound_over_unbound", "bound / unbound"),
        )
        if r.get(key) is not None
    ]
    if ratios:
        con.print("; ".join(ratios))


def echo_output(rec: dict, fmt: str) -> None:
    """The program's own output (its stdout where data goes only for tables, its stderr to stderr),
    then what bandwall-pin noted about the run (a static program bound as a whole)."""
    out = rec["result"].get("stdout", "")
    if out:
        (sys.stdout if fmt == "table" else sys.stderr).write(out if out.endswith("\n") else out + "\n")
    err = rec["result"].get("stderr", "")
    if err:
        sys.stderr.write(err if err.endswith("\n") else err + "\n")
    for line in rec["result"].get("notes", []):
        sys.stderr.write(f"bandwall: {line}\n")
