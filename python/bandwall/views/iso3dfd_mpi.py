"""Views of distributed ISO3DFD records: the scaling table and, per rank, where its threads ran
and where its slab's pages are."""

from __future__ import annotations

from collections.abc import Sequence

from bandwall.display import table
from bandwall.mpi import iso3dfd_mpi
from bandwall.views.host import steal_notes
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


def _box(p: dict) -> str:
    """The rank's interior points, global indices, per dimension (z-slab records: z only)."""
    if "origin" not in p:
        return f"z {p['z0']}..{p['z0'] + p['planes'] - 1}"
    return ", ".join(f"{o}..{o + e - 1}" for o, e in zip(p["origin"], p["extent"]))


def render(con, recs: Sequence[dict]) -> None:
    c = recs[0]["config"]
    con.print(
        f"ISO3DFD over MPI ({c['scaling']} scaling, {c['decomposition']}, ranks along x, y, z "
        f"{'x'.join(map(str, c.get('dims', [1, 1, c['ranks']])))}), grid {c['n1']}x{c['n2']}x"
        f"{c['n3']} for the fewest ranks, {c['nb_iter']} steps, ranks bound by {c['bind']}, "
        f"launched by {c['launcher']['name']} ({c['mpi_library']})"
    )
    con.print(table("Scaling", COLUMNS, rows(recs)))
    last = max(recs, key=lambda r: r["config"]["ranks"])
    c = last["config"]
    con.print(
        table(
            f"Ranks of the {last['config']['ranks']}-rank run",
            [
                "rank",
                "host",
                "box (x, y, z)",
                "halo B/step",
                "thread CPUs",
                "thread nodes",
                "wait s",
                "hidden",
                "prev pages",
            ],
            [
                [
                    p["rank"],
                    p["host"],
                    _box(p),
                    p.get("halo_bytes_per_step", "-"),
                    ",".join(map(str, p["thread_cpus"])),
                    ",".join(map(str, p["thread_nodes"])),
                    p["wait_s"],
                    f"{100 * p['hidden_share']:.0f}%" if "hidden_share" in p else "-",
                    page_map_text(p["page_map"]["prev"]),
                ]
                for p in last["result"]["ranks"]
            ],
        )
    )
    m = last["result"].get("exchange_model")
    if m and "unavailable" in m:
        con.print(f"halo exchange model: unavailable: {m['unavailable']}")
    elif m:
        depth = m.get("steps_per_exchange", 1)
        once = "a step" if depth == 1 else f"once a sweep of {depth} steps"
        hiding = (
            f"the update to hide it behind {1e6 * m['compute_min_s']:.1f} us "
            f"({'enough' if m['hideable'] else 'too short'}); "
            f"{100 * last['result'].get('hidden_share_mean', 0):.0f}% of it hidden on average"
            if last["config"].get("overlap", True)
            else f"not overlapped: the sweep between two exchanges {1e6 * m['compute_min_s']:.1f} us"
        )
        con.print(
            f"halo exchange {once}, the slowest rank: modelled {1e6 * m['predicted_max_s']:.1f} us from the "
            f"ping-pong ({m['pingpong']['latency_us']:.2f} us, {m['pingpong']['bandwidth_GBps']:.2f} GB/s), "
            f"measured alone {1e6 * m['alone_max_s']:.1f} us; {hiding}"
        )
    tb = c.get("time_block")
    if tb and tb["depth"] > 1:
        shares = [p.get("redundant_share", 0) for p in last["result"]["ranks"]]
        con.print(
            f"time block {tb['depth']}: halos {tb['halo_layers']} layers deep, {tb['exchanges']} exchanges in "
            f"{c['nb_iter']} steps; each rank computed {100 * max(shares):.0f}% more points than its own at most "
            "(its halo again)"
        )
    v = last["validation"]
    if "max_rel_error" in v:
        con.print(
            f"verified against one process: max rel error {v['max_rel_error']:.3e} "
            f"(single-process norm {v['single_process_norm']:.9g})"
        )
    for note in steal_notes(list(recs)):
        con.print(note)


def csv_rows(recs: Sequence[dict]):
    header = ["ranks", "threads_per_rank", "mpoints_per_s", "speedup", "efficiency", "comm_share", "norm"]
    return header, [[r[k] for k in header] for r in iso3dfd_mpi.scaling_rows(recs)]
