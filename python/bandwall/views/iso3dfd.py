"""Terminal and CSV views of bandwall-iso3dfd records (one run or the NUMA 3DFD article's four)."""

from __future__ import annotations

import statistics

from bandwall.display import table
from bandwall.kernels import iso3dfd
from bandwall.views.host import steal_notes
from bandwall.views.place import moved_notes

COLUMNS = [
    "init",
    "schedule",
    "MPoints/s",
    "GFlops",
    "time s",
    "% memory bound",
    "% FMA bound",
    "% port bound",
    "% kernel in L2",
    "% ECM",
    "prev pages",
]
ARRAYS = ("prev", "next", "vel")


def page_map_text(page_map: dict) -> str:
    """{'0': 0.5, '1': 0.5} -> 'node 0 50%, node 1 50%' (absent pages last)."""
    parts = [f"node {k} {100 * v:.0f}%" for k, v in sorted(page_map.items()) if k != "absent"]
    if page_map.get("absent"):
        parts.append(f"absent {100 * page_map['absent']:.0f}%")
    return ", ".join(parts) or "-"


def row(rec: dict) -> list:
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
        _pct(roof, "port"),
        _pct(roof, "kernel_in_l2", "percent_of_kernel_bound"),
        _pct(roof, "l1_fills", "percent_of_ecm"),
        page_map_text(pm.get("prev", {})),
    ]


def page_map_rows(recs: list[dict]) -> list[list]:
    """init, schedule and the page map of each array, one row per run."""
    return [
        [x["config"]["init"], x["config"]["schedule"]]
        + [page_map_text(x["placement"]["page_map"][a]) for a in ARRAYS]
        for x in recs
    ]


def _pct(roof: dict, which: str, key: str = ""):
    key = key or f"percent_of_{which}_bound"
    if key in roof:
        return f"{roof[key]:.0f}%"
    return "-" if not roof else roof.get(which, "-")


def _pages(rec: dict) -> str:
    """'huge pages asked (59% in huge pages)': the page size asked for and what prev was given."""
    pl = rec.get("placement", {})
    share = pl.get("huge_page_share", {}).get("prev")
    granted = f" ({100 * share:.0f}% in huge pages)" if share is not None else ""
    asked = pl.get("pages") or rec.get("config", {}).get("pages")
    return f"{asked} pages asked{granted}" if asked else f"page size not recorded{granted}"


def _swept(c: dict) -> bool:
    """Whether the run ran sweeps of several steps: its depth, its own race of depths (the steps it
    raced, race_steps) or a check of the table's depth (config.time_block)."""
    tb = c.get("time_block", {})
    return (
        int(tb.get("depth", 1)) > 1
        or int(tb.get("race_steps", 0)) > 0
        or bool(tb.get("check", {}).get("ran"))
    )


def _kernel(c: dict) -> str:
    """The instruction set, the register shape when one was asked for (--row-shape) or a race chose
    it, the sweeps' shape when it is another (from --swept-shape, the tune or the table) and the run
    swept, and the prefetch distance when it was not the default's."""
    shape, pf = c.get("row_shape", {}), c.get("prefetch", {})
    words = [c["isa"]]
    if c.get("isa_choice", {}).get("how") == "shape race":
        replaced = c["isa_choice"].get("source", {}).get("replaced", {}).get("isa", "the variant chosen")
        words = [f"{c['isa']} (with its shape, faster than {replaced}'s in the shape race)"]
    if shape.get("how") in ("raced", "kept"):
        words.append(f"register shape {shape['name']} ({shape['how']})")
    elif shape.get("requested", "default") != "default":
        words.append(f"register shape {shape['name']}")
    swept = shape.get("swept", {})
    if swept.get("how", "same") != "same" and swept.get("name") != shape.get("name") and _swept(c):
        words.append(f"sweeps in shape {swept['name']} ({swept['how']})")
    if pf.get("how", "default") != "default":
        rows = pf["rows_ahead"]
        into = f" into {pf['cache']}" if pf.get("cache") else ""
        ahead = f"{rows} row{'s' if rows != 1 else ''} ahead{into}" if rows else "none"
        unused = "" if pf.get("used", True) else ", unused by this kernel"
        words.append(f"prefetch {ahead} ({pf['how']}{unused})")
    return ", ".join(words)


def _layout(c: dict) -> str | None:
    """'rows 272 floats apart, planes 17424, led by 12 floats (every row's interior on a 64-byte
    line), next and vel 336 and 672 floats after prev in their pages': the arrays' layout
    (config.row_pitch, plane_pitch and array_offset); None for records without it."""
    rows, planes = c.get("row_pitch"), c.get("plane_pitch")
    if not rows or not planes:
        return None
    lead = rows.get("lead", 0)
    led = f", led by {lead} floats (every row's interior on a 64-byte line)" if lead else ""
    off = c.get("array_offset")
    offset = (
        f", next and vel {off['floats']} and {2 * off['floats']} floats after prev in their pages ({off['requested']})"
        if off
        else ""
    )
    return f"rows {rows['floats']} floats apart ({rows['requested']}), planes {planes['floats']} ({planes['requested']}){led}{offset}"


def _order(c: dict) -> str:
    """'radius 8 (16th order)', and how a radius the vector kernels lack runs."""
    radius = int(c.get("radius", c["half_length"]))  # records before --radius give half_length only
    path = " on the generic loops" if c.get("radius_path") == "generic" and c.get("isa") != "generic" else ""
    return f"radius {radius} ({iso3dfd.order_name(radius)}{path})"


def render(con, recs: list[dict]) -> None:
    first = recs[0]
    c, r = first["config"], first["result"]
    con.print(
        f"ISO3DFD {_order(c)}, {c['n1']}x{c['n2']}x{c['n3']} (halo included), {c['nb_iter']} steps, blocks "
        f"{c['n1_block']}x{c['n2_block']}x{c['n3_block']}, {c['threads']} threads ({c['affinity']}, CPUs "
        f"{first['provenance']['cpus']}), placement {c['placement']}, {_pages(first)}, kernel {c['kernel']} ({_kernel(c)})"
    )
    layout = _layout(c)
    if layout:
        con.print(f"arrays: {layout}")
    choice = c.get("blocks_choice", {})
    if choice.get("how") in ("auto", "search"):
        con.print(f"blocks chosen for this CPU: {choice['why']}")
    run = r.get("run", {})
    if run.get("settling_steps"):  # steps the defaults spent choosing (races, checks) on the run's data
        con.print(
            f"the whole run: {run['mpoints_per_s']:.0f} MPoints/s over its {run['steps']} steps, "
            f"{run['settling_steps']} of them ({run['settling_seconds']:.3f} s) spent choosing; "
            f"the table's MPoints/s are the {r['steps']} timed after"
        )
    tb = c.get("time_block", {})
    if tb:
        team = r.get("traffic_model", {}).get("time_block", {}).get("team")
        who = {"shared": ", the team on one wavefront", "slabs": ", a slab a thread"}.get(team, "")
        who = who if tb["depth"] > 1 and int(c.get("threads", 1)) > 1 else ""
        con.print(f"time steps per sweep: {tb['depth']}{who} ({tb['how']}: {tb['why']})")
        probe = tb.get("llc_probe", {})
        if probe.get("ran") and not probe.get("shared", True):  # the model then left slabs only
            con.print(f"the team's last-level caches: {probe['why']}, whatever hwloc reports: slabs only")
        check = tb.get("check", {})
        if check.get("ran"):  # the table's depth, one round of a race a run until the rounds settle
            mine = ", ".join(
                f"{'step by step' if d == '1' else f'sweeps of {d}'} {v:.0f}"
                for d, v in sorted(check["this_run"].items(), key=lambda kv: int(kv[0]))
            )
            con.print(f"the table's depth checked: this run's round {mine} MPoints/s; {check['why']}")
        swept = r.get("traffic_model", {}).get("time_block", {})
        caches = tb.get("caches", {})
        if tb["depth"] > 1 and swept.get("why") and caches:
            l3 = (
                f"; it plans with {caches['l3_bytes'] / 2**20:.0f} MiB of L3, the share measured as the team's, "
                f"not the {caches['l3_reported_bytes'] / 2**20:.0f} MiB reported"
                if "l3_reported_bytes" in caches
                else ""
            )
            con.print(
                f"the sweep: {swept['why']} (the model weighs L3's bytes at {caches['llc_over_memory']:.2f}x "
                f"memory's bandwidth{l3}: {caches['from']})"
            )
        race = tb.get("race", {}).get("rates", {})
        if len(race) > 1:  # the step-by-step rate and the swept one, from the run's own race
            medians = ", ".join(
                f"{'step by step' if d == '1' else f'sweeps of {d}'} {statistics.median(v):.0f}"
                for d, v in sorted(race.items(), key=lambda kv: int(kv[0]))
                if v
            )
            con.print(f"the race on this run's data, MPoints/s (medians of its rounds): {medians}")
        cal = tb.get("calibrated", {})
        if cal:
            rates = ", ".join(f"{p['depth']}: {p['mpoints_per_s']:.0f}" for p in cal["predicted"])
            con.print(
                f"model calibrated by the race ({cal['memory_share_step_by_step']:.0%} of a step's time moving "
                f"data from memory): MPoints/s by depth {rates}"
            )
    con.print(table("Runs", COLUMNS, [row(rec) for rec in recs]))
    con.print(
        f"norm of the latest wavefield: {r['norm']:.9g}; {r['flops_per_point']} flops and at least "
        f"{r['bytes_per_point']:.3g} bytes per point and step from memory"
    )
    roof = r.get("roofline", {})
    if "memory_bound_mpoints_per_s" in roof:
        kernel = f"stream {roof['stream_kernel']}, " if "stream_kernel" in roof else ""
        con.print(
            f"memory bound: {roof['memory_bound_mpoints_per_s']:.0f} MPoints/s from "
            f"{roof['stream_best_GBps']:.1f} GB/s ({kernel}the best of stream copy and triad on the same cores)"
        )
    wall = roof.get("memory_wall", {})
    if "note" in wall:
        con.print(f"memory wall: {wall['note']}")
    binds = roof.get("binds", {})
    if "note" in binds:
        con.print(f"binding roof: {binds['note']}")
    if "incore_bound_mpoints_per_s" in roof:
        con.print(
            f"compute roof: {roof['incore_bound_mpoints_per_s']:.0f} MPoints/s (the FMA peak's "
            f"{roof['peak_gflops_sp']:.0f} GFlops over {r['flops_per_point']} flops a point)"
        )
    if "port_bound_mpoints_per_s" in roof:
        con.print(
            f"in-core bound of the {c['isa']} row kernel: {roof['port_bound_mpoints_per_s']:.0f} MPoints/s "
            f"({roof['port_bound_by']}, at {roof['core_ghz_from_peak']:.2f} GHz from the FMA peak)"
        )
        if "clock_note" in roof:
            con.print(f"  {roof['clock_note']}")
    if "mix_bound_mpoints_per_s" in roof:
        over = roof.get("mix_over_port_model")
        model = f", {over:.2f}x the cycles the port model counts" if isinstance(over, (int, float)) else ""
        con.print(
            f"its operation mix as this core ran it (independent, from registers and L1): "
            f"{roof['mix_bound_mpoints_per_s']:.0f} MPoints/s{model}"
        )
    if "kernel_bound_mpoints_per_s" in roof:
        over = roof.get("kernel_over_mix")
        mix = f", {over:.2f}x the time of its operation mix" if isinstance(over, (int, float)) else ""
        block = roof.get("kernel_block") or []
        on = f" ({'x'.join(str(n) for n in block)} points)" if block else ""
        con.print(
            f"the row kernel itself with its data in L2{on}: {roof['kernel_bound_mpoints_per_s']:.0f} MPoints/s"
            f"{mix}"
        )
    if "l1_fill_bound_mpoints_per_s" in roof:
        window = "stay" if roof["y_window_in_l1"] else "do not stay"
        con.print(
            f"L1 misses: {roof['l1_fill_bytes_per_point']:.0f} bytes a point come from L2 (the y neighbours' rows "
            f"{window} in L1); at {roof['l2_GBps']:.1f} GB/s from L2 ({roof['l2_probe']}): "
            f"{roof['l1_fill_bound_mpoints_per_s']:.0f} MPoints/s"
        )
    if "arrays_in_cache" in roof:
        con.print(roof["arrays_in_cache"]["note"])
    if "llc_bound_mpoints_per_s" in roof:
        source = roof.get("llc_from", "a sweep's tiles in L3")
        con.print(
            f"from {source}: {roof['llc_bytes_per_point']:.1f} "
            f"bytes a point and step come from L3 into L2; at {roof['llc_GBps']:.1f} GB/s from L3 "
            f"({roof['llc_probe']}): {roof['llc_bound_mpoints_per_s']:.0f} MPoints/s"
        )
    if "ecm_mpoints_per_s" in roof:
        con.print(
            f"ECM estimate ({roof.get('ecm_levels', 'ports + L2-to-L1 fills')}, not overlapped): "
            f"{roof['ecm_mpoints_per_s']:.0f} MPoints/s"
        )
    proj = roof.get("node_projection")
    if proj:
        con.print(f"temporal blocking on this node: {proj['why']}")
    split = first.get("placement", {}).get("page_split", {})
    if split.get("mode", "").startswith("base pages throughout"):
        con.print(
            f"huge pages ({split['huge_page_bytes'] >> 20} MiB) are coarser than a thread's part "
            f"({split['smallest_part_bytes'] >> 10} KiB): first-touch used base pages"
        )
    for which, name in (
        ("memory", "memory"),
        ("incore", "incore"),
        ("ports", "ports"),
        ("mix", "operation mix"),
        ("l1_fills", "L1 misses"),
    ):
        if which in roof:
            con.print(f"{name} bound: {roof[which]}")
    v = first["validation"]
    if "max_abs_error" in v:  # --verify: the whole field against the plain reference
        con.print(
            f"verified against the plain reference: max abs error {v['max_abs_error']:.3e}, "
            f"max rel error {v['max_rel_error']:.3e}"
        )
    elif v.get("checked"):
        con.print(f"checked: {v['method']}")
    if len(recs) > 1:
        con.print(table("Page maps after initialisation", ["init", "schedule", *ARRAYS], page_map_rows(recs)))
    for note in [*moved_notes(recs), *steal_notes(recs)]:
        con.print(note)


def csv_rows(recs: list[dict]):
    return COLUMNS + ["norm"], [row(x) + [x["result"]["norm"]] for x in recs]
