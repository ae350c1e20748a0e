"""Terminal views of the MPI records: mpiprof profiles, mpi-pingpong rails and the rail advice."""

from __future__ import annotations

from bandwall.display import table
from bandwall.mpi import mpi_pingpong, mpiprof


def profile(con, recs: list[dict]) -> None:
    for rec in recs:
        r, c = rec["result"], rec["config"]
        con.print(
            f"[bold]mpiprof[/bold] {c.get('program', '')}: {c['ranks']} ranks, {c.get('mpi_library', '')}, "
            f"clock {r['clock']['source']} ({r['clock']['resolution_ns']:.2f} ns)"
        )
        con.print(table("MPI calls (summed over ranks)", mpiprof.CALL_COLUMNS, mpiprof.call_rows(rec)))
        n = len(r["partners"])
        if n <= 16:
            con.print(
                table(
                    "Bytes sent (row: from rank, column: to rank)",
                    ["from \\ to"] + [str(j) for j in range(n)],
                    [[i] + row for i, row in enumerate(r["partners"])],
                )
            )
        con.print(f"text histograms: {r['text_report']}")


def pingpong_record(con, rec: dict) -> None:
    r = rec["result"]
    con.print(
        f"[bold]mpi-pingpong[/bold] {rec['config']['mpi_library']}: latency {r['latency_us']:.2f} us, "
        f"bandwidth {r['bandwidth_GBps']:.2f} GB/s"
    )
    con.print(table("One-way latency and bandwidth", mpi_pingpong.COLUMNS, mpi_pingpong.rows(rec)))


ADVICE_COLUMNS = ["rails", "point-to-point s", "collectives s", "total s"]


def advice_rows(a: dict) -> list[list]:
    return [[e["rails"], e["p2p_s"], e["collective_s"], e["total_s"]] for e in a["estimates"]]


def advice(con, a: dict) -> None:
    rail = a["rail"]
    con.print(
        f"[bold]rail model[/bold]: {rail['latency_us']:.2f} us, {rail['bandwidth_GBps']:.2f} GB/s per rail "
        f"({rail['source']}); messages of {a['stripe_min']} bytes and more are striped"
    )
    con.print(
        f"point-to-point: {a['p2p_messages']} messages, mean {a['p2p_mean_bytes']:.0f} bytes, "
        f"{100 * a['p2p_striped_share']:.0f}% striped; collectives {100 * a['collective_share']:.0f}% of the time"
    )
    con.print(table("Estimated communication time", ADVICE_COLUMNS, advice_rows(a)))
    con.print(
        f"[bold]recommended rails: {a['recommended_rails']}[/bold]"
        + ("  (uncertain)" if a["uncertain"] else "")
    )
    for stack, env in a["settings"].items():
        con.print(f"  {stack}: " + " ".join(f"{k}={v}" for k, v in env.items()))
    for n in a["notes"]:
        con.print(f"note: {n}")
