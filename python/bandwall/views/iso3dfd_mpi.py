"""Views of distributed ISO3DFD records: the scaling table and, per rank, where its threads ran
and where its slab's pages are."""

from __future__ import annotations

from collections.abc import Sequence

from bandwall.mpi import iso3dfd_mpi
from bandwall.output import table
from bandwall.views.iso3dfd import page_map_text

COLUMNS = ["ranks", "threads/rank", "MPoints/s", "speed-up", "efficiency", "comm share", "norm"]


def rows(recs: Sequence[dict]) -> list[list]:
    return [
        [
            r["ranks"],
            r["threads_per_rank"],
            r["mpoints_per_s"],
            f"{r['speedup']:.2f}x",
            f"{100 * r['efficiency']:.0f}%",
            f"{100 * r['comm_share']:.1f}%",
            f"{r['norm']:.9g}",
        ]
        for r in iso3dfd_mpi.scaling_rows(recs)
    ]


def render(con, recs: Sequence[dict]) -> None:
    c = recs[0]["config"]
    con.print(
        f"ISO3DFD over MPI ({c['scaling']} scaling, {c['decomposition']} along z), grid {c['n1']}x{c['n2']}x"
        f"{c['n3']} for the fewest ranks, {c['nb_iter']} steps, ranks bound by {c['bind']}, "
        f"launched by {c['launcher']['name']} ({c['mpi_library']})"
    )
    con.print(table("Scaling", COLUMNS, rows(recs)))
    last = max(recs, key=lambda r: r["config"]["ranks"])
    con.print(
        table(
            f"Ranks of the {last['config']['ranks']}-rank run",
            ["rank", "host", "planes z", "thread CPUs", "thread nodes", "wait s", "prev pages"],
            [
                [
                    p["rank"],
                    p["host"],
                    f"{p['z0']}..{p['z0'] + p['planes'] - 1}",
                    ",".join(map(str, p["thread_cpus"])),
                    ",".join(map(str, p["thread_nodes"])),
                    p["wait_s"],
                    page_map_text(p["page_map"]["prev"]),
                ]
                for p in last["result"]["ranks"]
            ],
        )
    )
    v = last["validation"]
    if "max_rel_error" in v:
        con.print(
            f"verified against one process: max rel error {v['max_rel_error']:.3e} "
            f"(single-process norm {v['single_process_norm']:.9g})"
        )


def csv_rows(recs: Sequence[dict]):
    header = ["ranks", "threads_per_rank", "mpoints_per_s", "speedup", "efficiency", "comm_share", "norm"]
    return header, [[r[k] for k in header] for r in iso3dfd_mpi.scaling_rows(recs)]
