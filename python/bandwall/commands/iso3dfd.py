"""`bandwall iso3dfd`: the 16th-order stencil of seed 000, its roofline, and the seed's ablation."""

from __future__ import annotations

import click

from bandwall import iso3dfd, store
from bandwall.output import db_option, emit, format_option, no_store_option, pages_option, refuse_empty, table
from bandwall.registry import commands


def _row(rec: dict) -> list:
    r, c = rec["result"], rec["config"]
    roof = r.get("roofline", {})
    pm = rec.get("placement", {}).get("page_map", {})
    return [
        c["init"],
        c["schedule"],
        r["mpoints_per_s"],
        r["gflops"],
        r["time_s"],
        _pct(roof, "memory"),
        _pct(roof, "incore"),
        iso3dfd.page_map_text(pm.get("prev", {})),
    ]


def _pct(roof: dict, which: str):
    key = f"percent_of_{which}_bound"
    if key in roof:
        return f"{roof[key]:.0f}%"
    return "-" if not roof else roof.get(which, "-")


def _pages(rec: dict) -> str:
    """'huge pages (59% granted)': the page size asked for and what the kernel gave prev."""
    pl = rec.get("placement", {})
    share = pl.get("huge_page_share", {}).get("prev")
    granted = f" ({100 * share:.0f}% in huge pages)" if share is not None else ""
    return f"{pl.get('pages', 'system')} pages asked{granted}"


COLUMNS = [
    "init",
    "schedule",
    "MPoints/s",
    "GFlops",
    "time s",
    "% memory bound",
    "% in-core bound",
    "prev pages",
]


def render(con, recs: list[dict]) -> None:
    first = recs[0]
    c, r = first["config"], first["result"]
    con.print(
        f"ISO3DFD {c['n1']}x{c['n2']}x{c['n3']} (halo included), {c['nb_iter']} steps, blocks "
        f"{c['n1_block']}x{c['n2_block']}x{c['n3_block']}, {c['threads']} threads ({c['affinity']}, CPUs "
        f"{first['provenance']['cpus']}), placement {c['placement']}, {_pages(first)}, kernel {c['kernel']} ({c['isa']})"
    )
    con.print(table("Runs", COLUMNS, [_row(rec) for rec in recs]))
    con.print(
        f"norm of the latest wavefield: {r['norm']:.9g}; {r['flops_per_point']} flops and at least "
        f"{r['bytes_per_point']} bytes per point"
    )
    roof = r.get("roofline", {})
    if "memory_bound_mpoints_per_s" in roof:
        kernel = f"stream {roof['stream_kernel']}, " if "stream_kernel" in roof else ""
        con.print(
            f"memory bound: {roof['memory_bound_mpoints_per_s']:.0f} MPoints/s from "
            f"{roof['stream_best_GBps']:.1f} GB/s ({kernel}the best of stream copy and triad on the same cores)"
        )
    for which in ("memory", "incore"):
        if which in roof:
            con.print(f"{which} bound: {roof[which]}")
    v = first["validation"]
    if v.get("checked"):
        con.print(
            f"verified against the plain reference: max abs error {v['max_abs_error']:.3e}, "
            f"max rel error {v['max_rel_error']:.3e}"
        )
    if len(recs) > 1:
        con.print(
            table(
                "Page maps after initialisation",
                ["init", "schedule", "prev", "next", "vel"],
                [
                    [x["config"]["init"], x["config"]["schedule"]]
                    + [iso3dfd.page_map_text(x["placement"]["page_map"][a]) for a in ("prev", "next", "vel")]
                    for x in recs
                ],
            )
        )


def csv_rows(recs: list[dict]):
    return COLUMNS + ["norm"], [_row(x) + [x["result"]["norm"]] for x in recs]


@commands.register("iso3dfd")
@click.command("iso3dfd")
@click.option(
    "--grid",
    callback=refuse_empty,
    default="272x272x272",
    show_default=True,
    help="n1xn2xn3, halo of 8 included",
)
@click.option("--iters", default=10, show_default=True, type=click.IntRange(min=0), help="time steps")
@click.option(
    "--blocks",
    callback=refuse_empty,
    default=None,
    help="cache blocks n1xn2xn3 (default: whole rows x 24 x 128)",
)
@click.option("--threads", default=None, type=int, help="OpenMP threads (default: every CPU available)")
@click.option(
    "--bind",
    default="compact",
    show_default=True,
    type=click.Choice(iso3dfd.BINDINGS),
    help="thread placement (the seed's affinity word)",
)
@click.option("--init", default="first-touch", show_default=True, type=click.Choice(iso3dfd.INITS))
@click.option("--schedule", default="static", show_default=True, type=click.Choice(iso3dfd.SCHEDULES))
@click.option(
    "--placement",
    callback=refuse_empty,
    default="first-touch",
    show_default=True,
    help="first-touch, serial, bind:N, interleave[:N,M], preferred:N",
)
@pages_option("huge")
@click.option(
    "--verify",
    is_flag=True,
    help="compare with the plain reference (exit 1 when it differs; "
    "BANDWALL_ISO3DFD_FAULT=1 perturbs the kernel to show the failure)",
)
@click.option("--ablation", is_flag=True, help="the seed's four runs: serial/first-touch x static/dynamic")
@click.option(
    "--roofline/--no-roofline",
    default=True,
    show_default=True,
    help="measure the best of stream copy and triad, and the FMA peak, on the same cores",
)
@format_option
@db_option
@no_store_option
def iso3dfd_cmd(
    grid,
    iters,
    blocks,
    threads,
    bind,
    init,
    schedule,
    placement,
    pages,
    verify,
    ablation,
    roofline,
    fmt,
    db,
    no_store,
):
    """Run the 16th-order isotropic stencil (seed 000's ISO3DFD) and store its record."""
    dims = iso3dfd.parse_dims(grid, "grid")
    blk = iso3dfd.parse_dims(blocks, "blocks") if blocks is not None else None
    if not no_store:
        store.check(db)
    if ablation:
        recs = iso3dfd.ablation(dims, iters, blk, threads, bind, placement, verify, pages=pages)
    else:
        recs = [iso3dfd.run(dims, iters, blk, threads, bind, init, schedule, placement, verify, pages=pages)]
    if roofline:
        roof = iso3dfd.Roofline()
        recs = [roof.place(rec) for rec in recs]
    if not no_store:
        for rec in recs:
            store.save(rec, db)
    data = recs if ablation else recs[0]
    emit(data, fmt, lambda con: render(con, recs), lambda: csv_rows(recs))
