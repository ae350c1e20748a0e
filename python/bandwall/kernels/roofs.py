"""The roofs an ISO3DFD run meets, from its record and the ceilings measured on the same cores: the
memory wall, the row kernel's port bound, its operation mix as run and the kernel itself with its
data in L2, the L1 fills from L2 and the ECM estimate, where temporal blocking would pay on the node, and which roof binds the run."""

from __future__ import annotations

from bandwall.core import decide

# The roofs a run can meet, lowest first when they tie: what each is named in the record's words.
ROOFS = (
    ("memory_bound_mpoints_per_s", "memory bandwidth (STREAM over the run's bytes a point from memory)"),
    ("llc_bound_mpoints_per_s", "L3 bandwidth (the bytes a point the run moves from L3 into L2)"),
    ("l1_fill_bound_mpoints_per_s", "L2 bandwidth (the bytes a point the L1 misses bring from L2)"),
    ("kernel_bound_mpoints_per_s", "the row kernel itself with its data in L2, as this core ran it"),
    ("port_bound_mpoints_per_s", "in-core: the row kernel's load ports and FP pipes"),
    ("mix_bound_mpoints_per_s", "in-core: the row kernel's operation mix as this core ran it"),
    ("incore_bound_mpoints_per_s", "in-core: the FMA peak over the flops a point"),
)


# A roof the run passes by more than this factor is not the one that holds it: 10% is above the
# spread of the probes on a quiet host (their rounds' best), and below what a disturbed probe lost on
# the Emerald Rapids guest (the L2 probe once gave a roof the run passed by 1.67x).
PASSED = 1.1


def binding_roof(roof: dict, mp: float, cache: str = "") -> dict:
    """Which of the run's roofs binds (the lowest of those measured: memory at the run's own bytes a
    point, so a sweep's fewer bytes raise it; L3, L2, the row kernel's ports, the FMA peak), and how
    far from it the run is (per cent of it, and the roof over the run's rate). cache: the cache the
    run's arrays fit in (L2, the last-level cache), so memory does not bind it (a 256^3 run on a
    300 MiB L3 reached 1.36x the memory roof) and the lowest of the others does; a roof the run passes
    by more than PASSED neither (listed under passed), unless every roof is passed."""
    roofs = {
        key: float(roof[key]) for key, _ in ROOFS if isinstance(roof.get(key), (int, float)) and roof[key] > 0
    }
    candidates = {k: v for k, v in roofs.items() if not (cache and k == "memory_bound_mpoints_per_s")}
    if not candidates:
        return {"unavailable": "no roof measured for this run"}
    # a roof the run passes beyond PASSED does not hold it (its probe ran on a disturbed host, or its
    # model misses how the run reuses data): named apart, and the lowest of the others binds
    passed = {k: v for k, v in candidates.items() if mp > PASSED * v}
    held = {k: v for k, v in candidates.items() if k not in passed} or candidates
    key = min(held, key=held.__getitem__)
    bound = held[key]
    name = dict(ROOFS)[key]
    aside = f"; the arrays fit in {cache}, so memory does not bind" if cache else ""
    if passed and len(held) < len(candidates):
        aside += "; passed by the run, so not what holds it: " + ", ".join(
            f"{dict(ROOFS)[k].split(' (')[0]} ({v:.0f})"
            for k, v in sorted(passed.items(), key=lambda kv: kv[1])
        )
    return {
        "by": key.removesuffix("_bound_mpoints_per_s"),
        "what": name,
        "mpoints_per_s": bound,
        "percent": 100.0 * mp / bound,
        "headroom": bound / mp if mp > 0 else None,
        "roofs": {k.removesuffix("_bound_mpoints_per_s"): v for k, v in roofs.items()},
        "passed": sorted(
            k.removesuffix("_bound_mpoints_per_s") for k in passed if len(held) < len(candidates)
        ),
        "note": f"{100.0 * mp / bound:.0f}% of the lowest roof, {name}: {bound:.0f} MPoints/s{aside}",
    }


def memory_wall(ceilings: dict, traffic: dict, mp: float) -> dict:
    """The memory wall of the same cores: STREAM triad's bandwidth over the compulsory bytes a point of
    a step by step (16: prev, vel and next read, next written), the rate no step-by-step run exceeds
    with its grid in memory; and how many times it the run reached (beyond 1 only by reusing data
    in cache across time steps, or with the grid in cache)."""
    triad = ceilings.get("stream_kernels_GBps", {}).get("triad")
    if not isinstance(triad, (int, float)) or triad <= 0:
        return {"memory_wall": {"unavailable": "no STREAM triad measured on these cores"}}
    step_bytes = float(traffic.get("bytes_per_point_compulsory", 16))
    wall = triad * 1e3 / step_bytes
    times = mp / wall
    out = {
        "triad_GBps": triad,
        "bytes_per_point": step_bytes,
        "mpoints_per_s": wall,
        "times": times,
        "beats": times > 1.0,
    }
    out["note"] = (
        f"{times:.2f}x the memory wall ({wall:.0f} MPoints/s: triad's {triad:.1f} GB/s over {step_bytes:.0f} "
        "bytes a point step by step)"
        if times > 1.0
        else f"{times:.2f} of the memory wall ({wall:.0f} MPoints/s: triad's {triad:.1f} GB/s over "
        f"{step_bytes:.0f} bytes a point step by step)"
    )
    return {"memory_wall": out}


def port_bound(model: dict, ceilings: dict, threads: int, mp: float) -> dict:
    """The row kernel's own in-core bound: its points per cycle per core (load ports and FP pipes,
    from the native record's incore_model) times the clock the FMA peak implies (total single
    precision GFlop/s / (2 flops x lanes x FMA pipes x threads))."""
    if "points_per_cycle_per_core" not in model:
        why = model.get("unavailable", "the run has no in-core model")
        return {"ports": why if why.startswith("unavailable") else f"unavailable: {why}"}
    if "peak_gflops_sp" not in ceilings or "peak_lanes_sp" not in ceilings:
        return {"ports": "unavailable: no FMA peak to derive the clock from"}
    fma = ceilings.get("peak_fma_per_cycle")
    if not isinstance(fma, (int, float)) or fma <= 0:
        return {"ports": f"unavailable: FMAs per cycle of the peak's vectors: {fma}"}
    # The clock: the peak's own vectors and this CPU's FMAs per cycle at their width (its machine
    # model's row), so a 512-bit peak on a core that splits 512-bit operations is not read as half
    # the clock.
    ghz = ceilings["peak_gflops_sp"] / (2 * ceilings["peak_lanes_sp"] * fma * threads)
    bound = model["points_per_cycle_per_core"] * threads * ghz * 1e3
    out = {
        "port_bound_mpoints_per_s": bound,
        "percent_of_port_bound": 100.0 * mp / bound if bound > 0 else None,
        "port_bound_by": model["bound_by"],
        "microarch": model.get("microarch", {}).get("name", "unknown"),
        "core_ghz_from_peak": ghz,
    }
    out.update(clock_check(ghz, model.get("mix", {}).get("clock_ghz")))
    return out


# How far the clock the FMA peak implies may stand from the one the operation mix's FMAs alone ran
# at (one core, at once before the run) before the record says so: one core's turbo over all cores'.
CLOCK_SPREAD = 1.15


def clock_check(peak_ghz: float, mix_ghz: object) -> dict:
    """{"clock_note": why} when the clock the FMA peak implies (all the run's cores) and the one the
    operation mix's FMAs alone ran at (one core) differ by more than CLOCK_SPREAD either way: the
    port bound then stands on a clock the kernel did not run at (a peak run slowed by other load or
    by threads sharing a core, or a chain that does not reach the FMA pipes)."""
    if not isinstance(mix_ghz, (int, float)) or mix_ghz <= 0 or peak_ghz <= 0:
        return {}
    if 1 / CLOCK_SPREAD <= peak_ghz / mix_ghz <= CLOCK_SPREAD:
        return {}
    return {
        "clock_note": f"the FMA peak implies {peak_ghz:.2f} GHz and the operation mix's FMAs alone ran at "
        f"{mix_ghz:.2f} GHz on one core: the port bound stands on the peak's clock"
    }


def per_core_roof(
    model: dict, section: str, name: str, missing: str, copied: dict[str, str], threads: int, mp: float
) -> dict:
    """The roof a timing on one core gives (the native record's incore_model[section]: its
    mpoints_per_s_per_core, or why it is unavailable): that rate times the run's threads as
    {name}_bound_mpoints_per_s and the run's per cent of it, with the section's keys `copied` names
    (ours: the record's) where present; else {section: "unavailable: why"} (missing: why, when the
    record says nothing)."""
    part = model.get(section, {})
    per_core = part.get("mpoints_per_s_per_core")
    if not isinstance(per_core, (int, float)) or per_core <= 0:
        why = part.get("unavailable", missing)
        return {section: why if why.startswith("unavailable") else f"unavailable: {why}"}
    bound = per_core * threads
    out = {f"{name}_bound_mpoints_per_s": bound, f"percent_of_{name}_bound": 100.0 * mp / bound}
    out.update({ours: part[theirs] for ours, theirs in copied.items() if part.get(theirs) is not None})
    return out


def mix_bound(model: dict, threads: int, mp: float) -> dict:
    """The row kernel's operation mix as a core of this CPU ran it (the native record's
    incore_model.mix: the loads, FMAs, adds and shuffles of its shape per vector, independent, from
    registers and L1) times the threads: the in-core roof the cores reach with that mix, where the
    port model may count on pipes the mix does not get (mix_over_port_model: its cycles over the
    model's)."""
    copied = {"mix_over_port_model": "over_port_model"}
    return per_core_roof(model, "mix", "mix", "the run has no operation mix", copied, threads, mp)


def kernel_bound(model: dict, threads: int, mp: float) -> dict:
    """The row kernel itself with its data in L2 (the native record's incore_model.kernel_in_l2: the
    run's shape on a block of its rows that half of L2 holds, timed on one core) times the threads:
    the roof of a run that nothing beyond L2 slows, its loads, L1 misses, address arithmetic and
    dependences included. How far below it the run is, is what the feed from L3 or memory costs; how
    far it is below the mix, what the kernel's memory accesses and dependences cost
    (kernel_over_mix: the mix's rate over the kernel's)."""
    copied = {"kernel_block": "block", "kernel_over_mix": "over_mix"}
    missing = "the run has no timing of its kernel in L2"
    return per_core_roof(model, "kernel_in_l2", "kernel", missing, copied, threads, mp)


def incore_roof(roof: dict) -> tuple[float, str] | None:
    """The lower of the row kernel's in-core roofs (the port model's and the mix as run) and its name."""
    found = [
        (float(roof[key]), name)
        for key, name in (
            ("port_bound_mpoints_per_s", "ports"),
            ("mix_bound_mpoints_per_s", "the operation mix"),
        )
        if isinstance(roof.get(key), (int, float)) and roof[key] > 0
    ]
    return min(found) if found else None


def node_projection(
    rec: dict,
    roof: dict,
    cores: int,
    stream_gbps: float,
    llc_per_core_gbps: float | None = None,
    cached: bool = False,
) -> dict:
    """Where temporal blocking would pay: this node's cores at the run's per-core speed with its data
    in cache (the row kernel timed with its data in L2; else ports + L2-to-L1 fills, the ECM estimate
    without memory; else the run's own rate per thread), against what the node's STREAM feeds step by step (16 bytes a point) and with the sweeps
    the model proposes (its bytes a point and step). Each projected rate is the lowest of these, as a
    roofline; with llc_per_core_gbps (L3's bandwidth to the run's cores, per core) a sweep whose tiles
    L3 holds is also bound by the bytes it moves from L3 into L2 at that bandwidth times the node's
    cores (a sweep spares memory, not L3). cached: the arrays fit in the last-level cache, so L3 feeds
    the steps (its bytes into L2 a point at that bandwidth), not memory (a 256^3 run on a 300 MiB L3
    ran at 1.3x STREAM's wall step by step, and sweeps in L2 gained 1.05x, not the 1.57x a memory
    feed projected). It pays when the cores outrun that feed step by step by the decision rule's
    sweeps_outrun threshold (decision.json)."""
    r = rec["result"]
    threads = int(rec["provenance"]["threads"])
    core, fill = incore_roof(roof), roof.get("l1_fill_bound_mpoints_per_s")
    kernel = roof.get("kernel_bound_mpoints_per_s")
    if isinstance(kernel, (int, float)) and kernel > 0:
        per_core, source = kernel / threads, "the row kernel with its data in L2, as this core ran it"
    elif core and isinstance(fill, (int, float)) and fill > 0:
        per_core, source = 1.0 / (1.0 / core[0] + 1.0 / fill) / threads, f"{core[1]} + L2-to-L1 fills"
    else:
        per_core, source = float(r["mpoints_per_s"]) / threads, "the run's rate per thread"
    compute = per_core * cores
    step_bytes = float(r.get("traffic_model", {}).get("bytes_per_point_compulsory", 16))
    proposal = rec["config"].get("time_block", {}).get("proposal", {})
    rows = [
        {
            "depth": 1,
            "bytes_per_point": step_bytes,
            "memory_bound_mpoints_per_s": stream_gbps * 1e3 / step_bytes,
            "projected_mpoints_per_s": min(compute, stream_gbps * 1e3 / step_bytes),
        }
    ]
    llc_node = llc_per_core_gbps * cores if llc_per_core_gbps else None
    from_llc = bool(cached and llc_node)
    if from_llc:
        into_l2 = float(r.get("traffic_model", {}).get("bytes_per_point_into_l2_estimate", step_bytes))
        rows[0]["llc_GBps"] = llc_node
        rows[0]["llc_bound_mpoints_per_s"] = llc_node * 1e3 / into_l2
        rows[0]["projected_mpoints_per_s"] = min(compute, rows[0]["llc_bound_mpoints_per_s"])
    if int(proposal.get("depth", 1)) > 1:
        b = float(proposal["memory_bytes_per_point"])
        row = {
            "depth": int(proposal["depth"]),
            "bytes_per_point": b,
            "memory_bound_mpoints_per_s": stream_gbps * 1e3 / b,
            "projected_mpoints_per_s": min(compute, stream_gbps * 1e3 / b),
        }
        llc_bytes = float(proposal.get("llc_bytes_per_point", 0))
        if llc_node and llc_bytes > 0 and (proposal.get("level") == "L3" or from_llc):
            row["llc_GBps"] = llc_node
            row["llc_bound_mpoints_per_s"] = row["llc_GBps"] * 1e3 / llc_bytes
            # with the arrays in L3 memory feeds nothing: L3 alone bounds the sweep
            below = compute if from_llc else row["projected_mpoints_per_s"]
            row["projected_mpoints_per_s"] = min(below, row["llc_bound_mpoints_per_s"])
        rows.append(row)
    memory = rows[0]["memory_bound_mpoints_per_s"]
    feed, feeder = (
        (rows[0]["llc_bound_mpoints_per_s"], f"L3's {llc_node:.1f} GB/s (the arrays fit in it)")
        if from_llc
        else (memory, f"STREAM's {stream_gbps:.1f} GB/s")
    )
    outrun = decide.threshold("sweeps_outrun")
    pays = compute >= outrun * feed
    gain = rows[-1]["projected_mpoints_per_s"] / rows[0]["projected_mpoints_per_s"]
    why = (
        f"{cores} cores at {per_core:.0f} MPoints/s each ({source}) outrun the {feed:.0f} MPoints/s that "
        f"{feeder} feeds step by step"
        if pays
        else f"{cores} cores at {per_core:.0f} MPoints/s each ({source}) do not outrun the {feed:.0f} "
        f"MPoints/s that {feeder} feeds step by step by {outrun}x: temporal blocking has "
        "little to spare here"
    )
    if pays and len(rows) > 1:
        why += f": sweeps of {rows[-1]['depth']} steps would give {gain:.2f}x"
    return {
        "cores": cores,
        "per_core_mpoints_per_s": per_core,
        "per_core_source": source,
        "compute_mpoints_per_s": compute,
        "stream_GBps": stream_gbps,
        "depths": rows,
        "pays": pays,
        "gain": gain if pays else 1.0,
        "why": why,
    }


def fill_bound(
    fills: dict,
    ceilings: dict,
    roof: dict,
    mp: float,
    llc_per_point: float | None = None,
    cached: bool = False,
    in_l2: bool = False,
) -> dict:
    """What the L1 misses allow: the bytes per point the record's model says come from L2 into L1
    (traffic_model.l1_fills) at the L2-to-L1 bandwidth measured on the same cores; and, with the port
    bound (the lower of the port model's and the operation mix's), the Execution-Cache-Memory
    estimate: the time of the core's work, of the L2-to-L1
    transfers and (with a memory bound) of the memory transfers, added, not overlapped. With
    llc_per_point (the bytes a point and step that come into L2 from the last-level cache) and that
    cache's bandwidth measured, the L3 bound, and the last term: for a sweep whose tiles that cache
    holds, the larger of the memory transfers and those from that cache (a sweep spares memory, not
    the cache, and the two streams overlap); for a run whose arrays fit in that cache (cached), the
    transfers from it alone (memory sees none of them); for one whose arrays the L2s of its cores
    hold (in_l2), none. ecm_levels names the terms it added."""
    if "bytes_per_point" not in fills:
        return {"l1_fills": "unavailable: the run's record has no L1 fill model"}
    if "l2_GBps" not in ceilings:
        return {"l1_fills": ceilings.get("l2", "unavailable: no L2 bandwidth measured")}
    per_point = float(fills["bytes_per_point"])
    bound = ceilings["l2_GBps"] * 1e3 / per_point
    out = {
        "l1_fill_bytes_per_point": per_point,
        "y_window_in_l1": bool(fills.get("y_window_in_l1", False)),
        "l2_GBps": ceilings["l2_GBps"],
        "l2_probe": ceilings["l2_probe"],
        "l1_fill_bound_mpoints_per_s": bound,
    }
    llc = ceilings.get("llc_GBps") if llc_per_point else None
    llc_bound = None
    if isinstance(llc, (int, float)) and llc > 0:
        llc_bound = llc * 1e3 / float(llc_per_point)
        out.update(
            llc_GBps=llc,
            llc_probe=ceilings["llc_probe"],
            llc_bytes_per_point=float(llc_per_point),
            llc_bound_mpoints_per_s=llc_bound,
            llc_from="the arrays, which the last-level cache holds" if cached else "a sweep's tiles in L3",
        )
    core = incore_roof(roof)
    if core and bound > 0:
        levels, seconds = [core[1], "L2-to-L1 fills"], 1.0 / core[0] + 1.0 / bound
        memory = roof.get("memory_bound_mpoints_per_s")
        if in_l2:
            pass  # nothing beyond L2 feeds the run
        elif llc_bound and cached:
            levels.append("L3-to-L2")
            seconds += 1.0 / llc_bound
        elif llc_bound and isinstance(memory, (int, float)) and memory > 0:
            levels.append("the larger of memory and L3-to-L2")
            seconds += max(1.0 / memory, 1.0 / llc_bound)
        elif isinstance(memory, (int, float)) and memory > 0:
            levels.append("memory")
            seconds += 1.0 / memory
        ecm = 1.0 / seconds
        out.update(ecm_mpoints_per_s=ecm, percent_of_ecm=100.0 * mp / ecm, ecm_levels=" + ".join(levels))
    return out
