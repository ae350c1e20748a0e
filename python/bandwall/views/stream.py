"""Terminal and CSV views of bandwall-stream records."""

from __future__ import annotations

from bandwall.display import table
from bandwall.views.host import steal_notes
from bandwall.views.place import moved_notes

COLUMNS = ["kernel", "threads", "stores", "best GB/s", "median GB/s", "min GB/s", "GFlop/s", "MiB/array"]


def row(rec: dict) -> list:
    c, r = rec["config"], rec["result"]
    return [
        c["kernel"],
        c["threads"],
        c["stores"],
        r["best_GBps"],
        r["median_GBps"],
        r["min_GBps"],
        r["best_GFlops"],
        round(c["size_per_array_bytes"] / 2**20),
    ]


def render(con, recs: list[dict]) -> None:
    first = recs[0]
    c, p = first["config"], first["provenance"]
    con.print(
        table(
            "STREAM",
            COLUMNS,
            [row(r) for r in recs],
            caption=f"CPUs {p['cpus'] or 'unbound'} ({p['binding']}), placement {p['placement']}, "
            f"{c['reps']} reps (first dropped), {c['isa']}; GB/s = 1e9 B/s without "
            f"write-allocate (STREAM's counting)",
        )
    )
    for rec in recs:
        r = rec["result"]
        if r["traffic"]["write_allocate_occurs"]:
            con.print(
                f"{rec['config']['kernel']}: {rec['config']['stores']} stores also read the written array first "
                f"(+{r['write_allocate_bytes_per_element']:.0f} B/element): "
                f"{r['traffic']['with_write_allocate']['best_GBps']:.2f} GB/s of real traffic"
            )
    for note in [*moved_notes(recs), *steal_notes(recs)]:
        con.print(note)


CSV_FIELDS = [
    "kernel",
    "threads",
    "stores",
    "best_GBps",
    "median_GBps",
    "avg_GBps",
    "min_GBps",
    "best_GFlops",
    "size_per_array_bytes",
    "reps",
]


def csv_rows(recs: list[dict]):
    return CSV_FIELDS, [[{**r["config"], **r["result"]}[f] for f in CSV_FIELDS] for r in recs]
