"""The ISO3DFD engine from Python: runs bandwall-iso3dfd (one JSON record per run) at any radius of
the stencil, places each run on the roofline of the same cores (the best of bandwall-stream copy and
triad, and bandwall-peak) and against the memory wall (STREAM triad over the 16 bytes a point of a
step by step), and the NUMA 3DFD article's ablation (serial / first-touch initialisation x static /
dynamic schedule)."""

from __future__ import annotations

from bandwall.core import decide, native, records
from bandwall.core.errors import BandwallError, UsageError
from bandwall.counters import events as counters_mod
from bandwall.kernels import threads_auto

TOOL = "bandwall-iso3dfd"
# --blocks auto: the native tool chooses the blocks from a model of the CPU's caches; search: and
# refines the model's y block by a short measured search.
AUTO = "auto"
BLOCK_WORDS = (AUTO, "search")
# The memory bound is the best bandwidth of these stream kernels on the same cores.
ROOFLINE_STREAM_KERNELS = ("copy", "triad")
# Repetitions of each of them in quick mode (the first is dropped); the executable's default otherwise.
QUICK_STREAM_REPS = 3
# The L2-to-L1 bandwidth of the same cores: stream's dot (two arrays read, nothing written) on arrays
# that fill half of each thread's L2, so every load is an L1 miss served by L2; each repetition
# takes microseconds, hence many.
L2_PROBE_KERNEL = "dot"
L2_PROBE_REPS = 400
# The last-level cache's bandwidth to the cores, for sweeps whose tiles it holds: dot on arrays of an
# eighth of it each (a quarter in all), at most 8 MiB each a thread: in that cache, out of L2.
LLC_PROBE_SHARE = 8
LLC_PROBE_MAX_PER_THREAD = 8 << 20
LLC_PROBE_REPS = 100


def stencil() -> dict:
    """The stencil as the native tools describe it (the manifest's kernels.iso3dfd.stencil): the
    default, least and largest radius, the radii the vector kernels are compiled for, and per radius
    its space order, halo, flops and bytes a point and step, and smallest grid dimension."""
    from bandwall.core import manifest

    return manifest.manifest()["kernels"]["iso3dfd"]["stencil"]


def default_radius() -> int:
    """The article's radius (16th order): what every tool runs without --radius."""
    return int(stencil()["radius_default"])


def radius_facts(radius: int | None = None) -> dict:
    """space_order, halo, flops_per_point, bytes_per_point, min_dimension, templated of one radius."""
    r = default_radius() if radius is None else radius
    return stencil()["radii"][str(r)]


def order_name(radius: int) -> str:
    """'2nd order', '4th order', ... '16th order': the space order of a radius, in words."""
    n = 2 * radius
    return f"{n}{'nd' if n == 2 else 'th'} order"


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """'272x272x272' -> (272, 272, 272); range checks are the native tool's."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise UsageError(f"{what} {text!r} is not three whole numbers like 272x272x272")
    return tuple(int(p) for p in parts)  # type: ignore[return-value]


def parse_blocks(text: str):
    """'auto' (chosen by bandwall-iso3dfd from the caches of the CPU it runs on), 'search' (the same,
    refined by a short measured search) or three whole numbers."""
    word = text.strip().lower()
    return word if word in BLOCK_WORDS else parse_dims(text, "blocks")


def default_blocks(grid: tuple[int, int, int]) -> tuple[int, int, int]:
    """Whole rows along x, 24 rows in y (the floor of the native cache model, which the y halo's
    re-reads set) and long streams in z (the halo of a block is re-read once per block)."""
    n1, n2, n3 = grid
    return n1, min(24, n2), min(128, n3)


DEFAULT_SHAPE = "default"  # each variant's first register shape (--row-shape default)


def ablation_variants() -> list[tuple[str, str]]:
    """The NUMA 3DFD article's figure 8: each initialisation (the master thread's first, as the article
    shows the mistake first, then first touch) with each schedule, the native tool's words."""
    from bandwall.core import manifest

    inits = manifest.iso3dfd_word_names("init")
    return [(i, s) for i in reversed(inits) for s in manifest.iso3dfd_word_names("schedule")]


def native_args(
    grid,
    iters: int,
    blocks=None,
    threads: int | str | None = None,
    bind: str = "compact",
    cpus: str | None = None,
    init: str | None = None,
    schedule: str | None = None,
    placement: str = "first-touch",
    verify: bool = False,
    kernel: str | None = None,
    pages: str | None = None,
    isa: str | None = None,
    time_block: int | str | None = None,
    row_shape: str | None = None,
    prefetch: str | None = None,
    sweep_team: str | None = None,
    radius: int | None = None,
    swept_shape: str | None = None,
    row_pitch: str | None = None,
) -> list[str]:
    """The one command line of bandwall-iso3dfd (JSON record): `bandwall iso3dfd`, numa-check's
    built-in and the report all build it here, so they run the same blocks (AUTO unless given: the
    tool chooses them for the CPU it runs on). threads may be a placeholder such as
    bandwall-launch's "{ncpus}". A word left None is the tool's default (its manifest's first)."""
    blocks = (blocks or AUTO,) * 3 if blocks in (None, *BLOCK_WORDS) else blocks
    args = [*grid, iters, *blocks, "--bind", bind]
    if cpus is not None:
        args += ["--cpus", cpus]
    if threads is not None:
        args += ["--threads", threads]
    args += ["--placement", placement, "--json"]
    for flag, word in (("--init", init), ("--schedule", schedule), ("--kernel", kernel)):
        if word is not None:
            args += [flag, word]
    if verify:
        args.append("--verify")
    if pages is not None:
        args += ["--pages", pages]
    if isa is not None:
        args += ["--isa", isa]
    if time_block is not None:
        args += ["--time-block", time_block]
    if row_shape is not None:
        args += ["--row-shape", row_shape]
    if swept_shape is not None:
        args += ["--swept-shape", swept_shape]
    if prefetch is not None:
        args += ["--prefetch", prefetch]
    if sweep_team is not None:
        args += ["--sweep-team", sweep_team]
    if row_pitch is not None:
        args += ["--row-pitch", row_pitch]
    if radius is not None:
        args += ["--radius", radius]
    return [str(a) for a in args]


def parse_time_block(text: str) -> int | str:
    """--time-block: auto, measure (auto, racing whatever the cache says), or the time steps per sweep
    (a whole number up to the native tools' most): the grammar of the manifest, written once in
    native/iso3dfd/timemodel.cpp."""
    from bandwall.core import manifest

    grammar = manifest.manifest()["kernels"]["iso3dfd"]["time_block"]
    if text in grammar["words"]:
        return text
    if not text.isdigit() or not 1 <= int(text) <= int(grammar["max"]):
        raise UsageError(f"--time-block '{text}' must be {grammar['syntax']}")
    return int(text)


def run(grid, iters: int, env: dict | None = None, counters: str | None = None, db=None, **options) -> dict:
    """One run of the native engine (options as in native_args); returns its record (validated,
    not yet stored). counters names a counter group to count around it (the record's `counters`
    part). threads="auto" takes the choice of a stored tune of this grid on this topology in db
    (kernels/threads_auto.py), else lets the executable choose in its first steps;
    config.threads_choice says which and why."""
    choice = None
    if options.get("threads") == "auto":
        # a tune at another radius says nothing of this one (a tune's fixed options give its radius)
        fixed = {"grid": [int(n) for n in grid], "radius": options.get("radius") or default_radius()}
        # the tune's trials of the variant, register shape and depth this run asks for (a variant
        # or a depth left to auto does not narrow: the run may choose any)
        isa = options.get("isa")
        depth = options.get("time_block")
        settings = {
            "isa": isa if isa not in (None, "auto", "measure") else None,
            "shape": options.get("row_shape") or DEFAULT_SHAPE,
            "depth": depth if isinstance(depth, int) else None,
        }
        choice = threads_auto.stored_tune_choice(
            "iso3dfd",
            fixed,
            options.get("cpus"),
            options.get("bind"),
            db,
            settings,
            absent={"radius": default_radius()},  # tunes stored before the radius was recorded
        )
        if choice is not None:
            options["threads"] = choice["chosen"]
    args = native_args(grid, iters, **options)
    if counters is None:
        rec = records.finish(native.run_record(TOOL, args, env=env))
    else:
        plan = counters_mod.plan(counters)
        rec = records.finish(
            counters_mod.around_kernel(
                plan, lambda prefix: native.run_record(TOOL, args, env=env, prefix=prefix)
            )
        )
    if choice is not None:
        rec["config"]["threads_choice"] = choice
    return rec


def _cache_probe(key: str, level: str, where: list[str], size: int, reps: int) -> dict:
    """dot on arrays of size bytes each on the cores of where, the bandwidth of a cache level:
    {key}_GBps and {key}_probe (the command), or {key} saying why it is unavailable."""
    args = ["--kernel", L2_PROBE_KERNEL, *where, "--size", str(size), "--reps", str(reps)]
    try:
        rec = native.run_record("bandwall-stream", args)
        return {
            f"{key}_GBps": float(rec["result"]["best_GBps"]),
            f"{key}_probe": " ".join(["bandwall-stream", *args]),
        }
    except (BandwallError, KeyError, TypeError, ValueError) as e:
        return {key: f"unavailable: bandwall-stream {L2_PROBE_KERNEL} in {level}: {e}"}


class Roofline:
    """The two ceilings of a set of cores, measured once per set and reused."""

    def __init__(self, quick: bool = False):
        self.quick = quick
        self._cache: dict[tuple, dict] = {}

    def ceilings(self, threads: int, cpus: str, binding: str, l2_bytes: int = 0, llc_bytes: int = 0) -> dict:
        key = (threads, cpus if binding != "none" else "")
        where = ["--threads", str(threads)] + (["--cpus", cpus] if binding != "none" and cpus else [])
        if l2_bytes > 0 and (key, l2_bytes) not in self._cache:
            self._cache[(key, l2_bytes)] = self.l2_probe(threads, where, l2_bytes)
        if llc_bytes > 0 and (key, "llc", llc_bytes) not in self._cache:
            self._cache[(key, "llc", llc_bytes)] = self.llc_probe(threads, where, llc_bytes)
        if key not in self._cache:
            reps = ["--reps", str(QUICK_STREAM_REPS)] if self.quick else []
            out: dict = {}
            measured: dict[str, float] = {}
            failures: list[str] = []
            for kernel in ROOFLINE_STREAM_KERNELS:
                try:
                    stream = native.run_record("bandwall-stream", ["--kernel", kernel, *where, *reps])
                    measured[kernel] = float(stream["result"]["best_GBps"])
                except (BandwallError, KeyError, TypeError, ValueError) as e:
                    failures.append(f"{kernel}: {e}")
            if measured:
                best = max(measured, key=measured.__getitem__)
                out.update(stream_best_GBps=measured[best], stream_kernel=best, stream_kernels_GBps=measured)
            else:
                out["memory"] = f"unavailable: bandwall-stream {failures[0]}"
            try:
                peak = native.run_record("bandwall-peak", where)
                out["peak_gflops_sp"] = float(peak["result"]["total_gflops_sp"])
                out["peak_lanes_sp"] = int(peak["result"]["lanes_sp"])
                out["peak_fma_per_cycle"] = peak["config"].get("fma_per_cycle", "unavailable: not recorded")
            except (BandwallError, KeyError, TypeError, ValueError) as e:
                out["incore"] = f"unavailable: bandwall-peak: {e}"
            self._cache[key] = out
        return {
            **self._cache[key],
            **(self._cache[(key, l2_bytes)] if l2_bytes > 0 else {}),
            **(self._cache[(key, "llc", llc_bytes)] if llc_bytes > 0 else {}),
        }

    @staticmethod
    def l2_probe(threads: int, where: list[str], l2_bytes: int) -> dict:
        size = threads * l2_bytes // 4  # bytes per array, shared by the threads: 2 x l2 / 4 per thread
        return _cache_probe("l2", "L2", where, size, L2_PROBE_REPS)

    @staticmethod
    def llc_probe(threads: int, where: list[str], llc_bytes: int) -> dict:
        size = min(llc_bytes // LLC_PROBE_SHARE, threads * LLC_PROBE_MAX_PER_THREAD)  # bytes per array
        return _cache_probe("llc", "the last-level cache", where, size, LLC_PROBE_REPS)

    def place(self, rec: dict) -> dict:
        """Adds result.roofline to rec: per cent of the memory bound (the best stream GB/s of copy and
        triad / bytes per point; stream_kernel names the kernel that gave it) and of the in-core bound
        (FMA peak / flops per point), with the inputs."""
        r = rec["result"]
        prov = rec["provenance"]
        traffic = r.get("traffic_model", {})
        fills = traffic.get("l1_fills", {})
        l2_bytes = int(traffic.get("l2_bytes", 0)) if "bytes_per_point" in fills else 0
        sweep = traffic.get("time_block", {})
        proposal = rec["config"].get("time_block", {}).get("proposal", {})

        def in_llc(t: dict) -> bool:
            return int(t.get("depth", 1)) > 1 and t.get("level") == "L3"

        # L3's bandwidth for a run that swept with its tiles there, or whose model proposes such sweeps
        # (the node projection's L3 bound)
        swept = in_llc(sweep) and l2_bytes > 0
        llc_bytes = int(traffic.get("l3_bytes", 0)) if swept or in_llc(proposal) else 0
        c = self.ceilings(int(prov["threads"]), prov["cpus"], prov["binding"], l2_bytes, llc_bytes)
        roof: dict = {
            "bytes_per_point": r["bytes_per_point"],
            "flops_per_point": r["flops_per_point"],
            "cpus": prov["cpus"],
        }
        mp = float(r["mpoints_per_s"])
        if "stream_best_GBps" in c:
            bound = c["stream_best_GBps"] * 1e3 / r["bytes_per_point"]
            roof.update(
                stream_best_GBps=c["stream_best_GBps"],
                memory_bound_mpoints_per_s=bound,
                percent_of_memory_bound=100.0 * mp / bound if bound > 0 else None,
            )
            for key in ("stream_kernel", "stream_kernels_GBps"):
                if key in c:
                    roof[key] = c[key]
        else:
            roof["memory"] = c["memory"]
        roof.update(memory_wall(c, traffic, mp))
        if "peak_gflops_sp" in c:
            bound = c["peak_gflops_sp"] * 1e3 / r["flops_per_point"]
            roof.update(
                peak_gflops_sp=c["peak_gflops_sp"],
                incore_bound_mpoints_per_s=bound,
                percent_of_incore_bound=100.0 * mp / bound if bound > 0 else None,
            )
        else:
            roof["incore"] = c["incore"]
        roof.update(port_bound(r.get("incore_model", {}), c, int(prov["threads"]), mp))
        roof.update(mix_bound(r.get("incore_model", {}), int(prov["threads"]), mp))
        roof.update(fill_bound(fills, c, roof, mp, sweep if swept else None))
        threads, cores = int(prov["threads"]), int(r.get("node_cores", 0))
        node = c if threads >= cores else self.ceilings(cores, "", "none")
        llc_per_core = c["llc_GBps"] / threads if "llc_GBps" in c and threads > 0 else None
        if cores > 0 and "stream_best_GBps" in node:
            roof["node_projection"] = node_projection(
                rec, roof, cores, node["stream_best_GBps"], llc_per_core
            )
        roof["binds"] = binding_roof(roof, mp)
        r["roofline"] = roof
        return records.validate(rec)


# The roofs a run can meet, lowest first when they tie: what each is named in the record's words.
ROOFS = (
    ("memory_bound_mpoints_per_s", "memory bandwidth (STREAM over the run's bytes a point from memory)"),
    ("llc_bound_mpoints_per_s", "L3 bandwidth (the bytes a point a sweep moves from L3 into L2)"),
    ("l1_fill_bound_mpoints_per_s", "L2 bandwidth (the bytes a point the L1 misses bring from L2)"),
    ("port_bound_mpoints_per_s", "in-core: the row kernel's load ports and FP pipes"),
    ("mix_bound_mpoints_per_s", "in-core: the row kernel's operation mix as this core ran it"),
    ("incore_bound_mpoints_per_s", "in-core: the FMA peak over the flops a point"),
)


def binding_roof(roof: dict, mp: float) -> dict:
    """Which of the run's roofs binds (the lowest of those measured: memory at the run's own bytes a
    point, so a sweep's fewer bytes raise it; L3, L2, the row kernel's ports, the FMA peak), and how
    far from it the run is (per cent of it, and the roof over the run's rate)."""
    roofs = {
        key: float(roof[key]) for key, _ in ROOFS if isinstance(roof.get(key), (int, float)) and roof[key] > 0
    }
    if not roofs:
        return {"unavailable": "no roof measured for this run"}
    key = min(roofs, key=roofs.__getitem__)
    bound = roofs[key]
    name = dict(ROOFS)[key]
    return {
        "by": key.removesuffix("_bound_mpoints_per_s"),
        "what": name,
        "mpoints_per_s": bound,
        "percent": 100.0 * mp / bound,
        "headroom": bound / mp if mp > 0 else None,
        "roofs": {k.removesuffix("_bound_mpoints_per_s"): v for k, v in roofs.items()},
        "note": f"{100.0 * mp / bound:.0f}% of the lowest roof, {name}: {bound:.0f} MPoints/s",
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
    return {
        "port_bound_mpoints_per_s": bound,
        "percent_of_port_bound": 100.0 * mp / bound if bound > 0 else None,
        "port_bound_by": model["bound_by"],
        "microarch": model.get("microarch", {}).get("name", "unknown"),
        "core_ghz_from_peak": ghz,
    }


def mix_bound(model: dict, threads: int, mp: float) -> dict:
    """The row kernel's operation mix as a core of this CPU ran it (the native record's
    incore_model.mix: the loads, FMAs, adds and shuffles of its shape per vector, independent, from
    registers and L1) times the threads: the in-core roof the cores reach with that mix, where the
    port model may count on pipes the mix does not get (mix_over_port_model: its cycles over the
    model's)."""
    mix = model.get("mix", {})
    per_core = mix.get("mpoints_per_s_per_core")
    if not isinstance(per_core, (int, float)) or per_core <= 0:
        why = mix.get("unavailable", "the run has no operation mix")
        return {"mix": why if why.startswith("unavailable") else f"unavailable: {why}"}
    bound = per_core * threads
    out = {"mix_bound_mpoints_per_s": bound, "percent_of_mix_bound": 100.0 * mp / bound}
    if isinstance(mix.get("over_port_model"), (int, float)):
        out["mix_over_port_model"] = mix["over_port_model"]
    return out


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
    rec: dict, roof: dict, cores: int, stream_gbps: float, llc_per_core_gbps: float | None = None
) -> dict:
    """Where temporal blocking would pay: this node's cores at the run's per-core speed with its data
    in cache (ports + L2-to-L1 fills, the ECM estimate without memory; else the run's own rate per
    thread), against what the node's STREAM feeds step by step (16 bytes a point) and with the sweeps
    the model proposes (its bytes a point and step). Each projected rate is the lowest of these, as a
    roofline; with llc_per_core_gbps (L3's bandwidth to the run's cores, per core) a sweep whose tiles
    L3 holds is also bound by the bytes it moves from L3 into L2 at that bandwidth times the node's
    cores (a sweep spares memory, not L3). It pays when the cores outrun DRAM step by step by the
    decision rule's sweeps_outrun threshold (decision.json)."""
    r = rec["result"]
    threads = int(rec["provenance"]["threads"])
    core, fill = incore_roof(roof), roof.get("l1_fill_bound_mpoints_per_s")
    if core and isinstance(fill, (int, float)) and fill > 0:
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
    if int(proposal.get("depth", 1)) > 1:
        b = float(proposal["memory_bytes_per_point"])
        row = {
            "depth": int(proposal["depth"]),
            "bytes_per_point": b,
            "memory_bound_mpoints_per_s": stream_gbps * 1e3 / b,
            "projected_mpoints_per_s": min(compute, stream_gbps * 1e3 / b),
        }
        llc_bytes = float(proposal.get("llc_bytes_per_point", 0))
        if llc_per_core_gbps and llc_bytes > 0 and proposal.get("level") == "L3":
            row["llc_GBps"] = llc_per_core_gbps * cores
            row["llc_bound_mpoints_per_s"] = row["llc_GBps"] * 1e3 / llc_bytes
            row["projected_mpoints_per_s"] = min(
                row["projected_mpoints_per_s"], row["llc_bound_mpoints_per_s"]
            )
        rows.append(row)
    memory = rows[0]["memory_bound_mpoints_per_s"]
    outrun = decide.threshold("sweeps_outrun")
    pays = compute >= outrun * memory
    gain = rows[-1]["projected_mpoints_per_s"] / rows[0]["projected_mpoints_per_s"]
    why = (
        f"{cores} cores at {per_core:.0f} MPoints/s each ({source}) outrun the {memory:.0f} MPoints/s that "
        f"STREAM's {stream_gbps:.1f} GB/s feeds step by step"
        if pays
        else f"{cores} cores at {per_core:.0f} MPoints/s each ({source}) do not outrun the {memory:.0f} "
        f"MPoints/s that STREAM's {stream_gbps:.1f} GB/s feeds step by step by {outrun}x: temporal blocking has "
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


def fill_bound(fills: dict, ceilings: dict, roof: dict, mp: float, sweep: dict | None = None) -> dict:
    """What the L1 misses allow: the bytes per point the record's model says come from L2 into L1
    (traffic_model.l1_fills) at the L2-to-L1 bandwidth measured on the same cores; and, with the port
    bound (the lower of the port model's and the operation mix's), the Execution-Cache-Memory
    estimate: the time of the core's work, of the L2-to-L1
    transfers and (with a memory bound) of the memory transfers, added, not overlapped. With sweep
    (a time block whose tiles the last-level cache holds) and that cache's bandwidth measured, the
    last term is the larger of the memory transfers and the transfers from that cache into L2 (its
    llc_bytes_per_point): a sweep spares memory, not the cache, and the two streams overlap (step by
    step the 16.5 bytes a point from that cache are not counted beside memory's either). ecm_levels
    names the terms it added."""
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
    core = incore_roof(roof)
    if core and bound > 0:
        levels, seconds = [core[1], "L2-to-L1 fills"], 1.0 / core[0] + 1.0 / bound
        memory = roof.get("memory_bound_mpoints_per_s")
        llc = ceilings.get("llc_GBps") if sweep else None
        if isinstance(memory, (int, float)) and memory > 0 and isinstance(llc, (int, float)) and llc > 0:
            per_point = float(sweep["llc_bytes_per_point"])
            llc_bound = llc * 1e3 / per_point
            out.update(
                llc_GBps=llc,
                llc_probe=ceilings["llc_probe"],
                llc_bytes_per_point=per_point,
                llc_bound_mpoints_per_s=llc_bound,
            )
            levels.append("the larger of memory and L3-to-L2")
            seconds += max(1.0 / memory, 1.0 / llc_bound)
        elif isinstance(memory, (int, float)) and memory > 0:
            levels.append("memory")
            seconds += 1.0 / memory
        ecm = 1.0 / seconds
        out.update(ecm_mpoints_per_s=ecm, percent_of_ecm=100.0 * mp / ecm, ecm_levels=" + ".join(levels))
    return out


def ablation(grid, iters: int, **options) -> list[dict]:
    """The article's four runs (options as in native_args, without init and schedule); placement must
    leave initialisation to the run (first-touch)."""
    return [
        run(grid, iters, init=init, schedule=schedule, **options) for init, schedule in ablation_variants()
    ]
