"""The ISO3DFD engine from Python: runs bandwall-iso3dfd (one JSON record per run) at any radius of
the stencil, places each run on the roofline of the same cores (the best of bandwall-stream copy and
triad, and bandwall-peak) and against the memory wall (STREAM triad over the 16 bytes a point of a
step by step), and the NUMA 3DFD article's ablation (serial / first-touch initialisation x static /
dynamic schedule)."""

from __future__ import annotations

from bandwall.core import native, records
from bandwall.core.errors import BandwallError, UsageError
from bandwall.counters import events as counters_mod
from bandwall.kernels import threads_auto
from bandwall.kernels.roofs import (
    binding_roof,
    fill_bound,
    kernel_bound,
    memory_wall,
    mix_bound,
    node_projection,
    port_bound,
)

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
    tile_cache: str | None = None,
    radius: int | None = None,
    swept_shape: str | None = None,
    row_pitch: str | None = None,
    plane_pitch: str | None = None,
    array_offset: str | None = None,
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
    if tile_cache is not None:
        args += ["--tile-cache", tile_cache]
    for flag, word in (
        ("--row-pitch", row_pitch),
        ("--plane-pitch", plane_pitch),
        ("--array-offset", array_offset),
    ):
        if word is not None:
            args += [flag, word]
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
        # (the node projection's L3 bound), or whose arrays L3 holds (they then come from there, not
        # from memory: 256^3 at radius 3 on a 300 MiB L3 ran at 1.36x the memory roof)
        swept = in_llc(sweep) and l2_bytes > 0
        l3, allocated = int(traffic.get("l3_bytes", 0)), int(r.get("allocated_bytes", 0))
        # arrays the L2s of the run's cores hold come from no farther (neither memory nor L3 feeds
        # them); arrays beyond those L2s that L3 holds come from L3
        in_l2 = l2_bytes > 0 and 0 < allocated <= int(prov["threads"]) * l2_bytes
        cached = l2_bytes > 0 and not in_l2 and 0 < allocated <= l3
        llc_bytes = l3 if swept or in_llc(proposal) or cached else 0
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
        roof.update(kernel_bound(r.get("incore_model", {}), int(prov["threads"]), mp))
        # the bytes a point and step that come into L2 from L3: a sweep's model's, else step by step's
        if cached and int(sweep.get("depth", 1)) > 1:
            llc_per_point = sweep.get("llc_bytes_per_point")
        elif cached:
            llc_per_point = traffic.get("bytes_per_point_into_l2_estimate", r["bytes_per_point"])
        else:
            llc_per_point = sweep.get("llc_bytes_per_point") if swept else None
        roof.update(fill_bound(fills, c, roof, mp, llc_per_point, cached, in_l2))
        cache = "L2" if in_l2 else "the last-level cache" if cached else ""
        if cache:
            size = int(prov["threads"]) * l2_bytes if in_l2 else l3
            roof["arrays_in_cache"] = {
                "level": "L2" if in_l2 else "L3",
                "allocated_bytes": allocated,
                "cache_bytes": size,
                "note": f"the arrays ({allocated / 2**20:.1f} MiB) fit in {cache} ({size / 2**20:.0f} MiB"
                + (" on the run's cores" if in_l2 else "")
                + "): the run reads them from there, not from memory",
            }
        threads, cores = int(prov["threads"]), int(r.get("node_cores", 0))
        node = c if threads >= cores else self.ceilings(cores, "", "none")
        llc_per_core = c["llc_GBps"] / threads if "llc_GBps" in c and threads > 0 else None
        if cores > 0 and "stream_best_GBps" in node and not in_l2:  # in L2 nothing feeds: no sweeps to spare
            roof["node_projection"] = node_projection(
                rec, roof, cores, node["stream_best_GBps"], llc_per_core, cached
            )
        roof["binds"] = binding_roof(roof, mp, cache)
        r["roofline"] = roof
        return records.validate(rec)


def ablation(grid, iters: int, **options) -> list[dict]:
    """The article's four runs (options as in native_args, without init and schedule); placement must
    leave initialisation to the run (first-touch)."""
    return [
        run(grid, iters, init=init, schedule=schedule, **options) for init, schedule in ablation_variants()
    ]
