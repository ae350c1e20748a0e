"""What bandwall tune runs: a STREAM kernel, the ISO3DFD engine, the copy-engine pipeline, or a
user's unmodified program under bandwall-pin, each with its space of knobs (built from the tables,
python/bandwall/tune/space.py), one trial (one run, its rate and the record's summary) and the
command lines of a configuration (python/bandwall/tune/command.py)."""

from __future__ import annotations

import datetime
import shutil
from dataclasses import dataclass, field

from bandwall.core import choices, manifest, native, records
from bandwall.core.errors import BandwallError, RunFailed, UsageError
from bandwall.core.fom import Fom
from bandwall.engine import pipeline
from bandwall.kernels import iso3dfd, stream
from bandwall.mpi import iso3dfd_mpi
from bandwall.pinning import pin
from bandwall.tune import command, guide
from bandwall.tune.space import (
    Knob,
    Machine,
    Space,
    bindings,
    fold_bindings,
    placements,
    thread_counts,
)

PIPELINE = "pipeline"
ISO3DFD = "iso3dfd"
DEFAULT_SHAPE = iso3dfd.DEFAULT_SHAPE
DEFAULT_PREFETCH = "default"  # the prefetch distance the run takes (--prefetch left out)
DEFAULT_TEAM = "auto"  # who sweeps: the model's choice (--sweep-team left out)
DEFAULT_SWEPT = (
    "auto"  # the sweeps' shape the run takes (--swept-shape left out: kept, table's or the step shape)
)
TEAM_WHY = "the model's team (auto), a slab a thread, or the team on one wavefront (shared)"
# the sweeps' tiles the run takes (--tile-cache left out: the table's, else the model's)
DEFAULT_TILES = "auto"
TILES_WHY = (
    "the tiles the run takes (auto: the table's, else the model's), the model's cheapest, L2's or L3's"
)
# the settings searched besides it: rows ahead, and the cache they fill (--prefetch N:L1 or N:L2)
PREFETCH_SETTINGS = ("0", "1:L1", "1:L2", "2:L1", "2:L2")
QUEUE_DEPTHS = (1, 2, 4, 8)
BLOCKS = ("256K", "512K", "1M", "2M", "4M")
ONE_NODE = "one NUMA node: every placement puts every page on node 0"


def names() -> list[str]:
    """The built-in targets: each STREAM kernel, iso3dfd and the pipeline."""
    return [*stream.kernel_names(), ISO3DFD, PIPELINE]


def first(guess, values) -> tuple:
    """values with the guess first: the default is the cheapest choice of a knob."""
    return (guess, *[v for v in values if v != guess])


def pages_knob(rec: dict | None) -> Knob:
    """The page sizes of the manifest, the guess first: the one the executable asks for when
    --pages is left out, as its record rec (of a run without --pages) says; the manifest's first
    when there is no such record."""
    pages = manifest.pages()
    default = rec and (rec.get("placement", {}).get("pages") or rec["config"].get("pages"))
    if default in pages:
        return Knob("pages", first(default, pages), default, "page sizes, the executable's own first")
    return Knob("pages", tuple(pages), pages[0], "page sizes (the executable's own unknown)")


@dataclass
class Target:
    name: str
    unit: str
    options: dict = field(default_factory=dict)  # what the user fixed: sizes, kernel, command
    notes: list[str] = field(default_factory=list)  # how the space was pruned
    guide_runs: int = 0

    def space(self, m: Machine, db, keep) -> Space:
        raise NotImplementedError

    def run(self, options: dict) -> tuple[float, dict]:
        raise NotImplementedError

    def commands(self, options: dict) -> dict:
        raise NotImplementedError

    def settled(self, best: dict, row: dict, decided: bool) -> str | None:
        """What the tune keeps for later runs of the target once it has chosen best (its trials' row;
        decided: its verdict's claims find it faster beyond noise than every configuration they
        compare it with, tune/verdict.py's set_apart); a sentence, or None."""
        return None

    def _common(
        self, m: Machine, threads: tuple[int, ...], guess_threads: int, why: str
    ) -> tuple[list, dict]:
        knobs = [
            Knob("threads", threads, guess_threads, why, costs=True),
            Knob("bind", bindings(m), "compact", "the binding policies of bandwall-topo --list-policies"),
        ]
        left: dict = {}
        places = placements(m)
        if places:
            knobs.append(
                Knob("placement", first("first-touch", places), "first-touch", "the placement table")
            )
        else:
            left["placement"] = ONE_NODE
        return knobs, left


def _summary(rec: dict, *fields: str) -> dict:
    """What a trial keeps of a kernel's record: a few result fields, what ran, its provenance."""
    out = {f: rec["result"][f] for f in fields if f in rec["result"]}
    out["isa"] = rec["config"].get("isa")
    out["cpus"] = rec["provenance"].get("cpus")
    out["provenance"] = rec["provenance"]
    out["validation"] = rec["validation"]
    return {k: v for k, v in out.items() if v is not None}


class StreamTarget(Target):
    """A STREAM kernel: rate best_GBps."""

    def space(self, m: Machine, db, keep) -> Space:
        counts = thread_counts(len(m.cpus))
        knee, why, self.guide_runs = guide.knee(
            self.name, counts, m.digest, db, self.options.get("size"), keep
        )
        kept = guide.prune_threads(counts, knee)
        self.notes.append(f"threads: {why}" + (f"; kept {list(kept)}" if kept != counts else ""))
        knobs, left = self._common(m, kept, kept[0] if knee else kept[-1], why)
        # a run of one thread on 64 KiB arrays says which page size the executable asks for itself
        try:
            probe = stream.run(self.name, threads=1, size="64K", reps=2, isa=m.isas[-1] if m.isas else None)
        except BandwallError:
            probe = None
        self.guide_runs += 1
        stores = tuple(manifest.stores())
        knobs += [
            pages_knob(probe),
            Knob("isa", tuple(m.isas), m.isas[0], "the variants this CPU runs"),
            Knob("stores", stores, stores[0], "the kernel's store kinds"),
        ]
        fixed = {"kernel": self.name, "size": self.options.get("size"), "reps": self.options.get("reps")}
        return Space(self.name, knobs, fixed, lambda c: fold_bindings(m, c), left)

    def run(self, o: dict) -> tuple[float, dict]:
        rec = stream.run(
            o["kernel"],
            threads=o["threads"],
            bind=o["bind"],
            placement=o.get("placement"),
            pages=o["pages"],
            isa=o["isa"],
            stores=o["stores"],
            size=o.get("size"),
            reps=o.get("reps"),
        )
        return rec["result"]["best_GBps"], _summary(rec, "best_GBps", "median_GBps")

    def commands(self, o: dict) -> dict:
        return command.builtin(["stream", "--kernel", o["kernel"]], o, ("size", "reps"))


def sweep_depths(model: dict, iters: int) -> tuple[tuple[int, ...], int, str]:
    """The time steps per sweep worth a trial (the depth knob): when the model proposes sweeps, step
    by step first, then 2, 4, 8 and the model's proposal, each at most the run's steps and what the
    slabs or the team allow (config.time_block of a record run with no steps); the guess, the
    proposal's depth or the deepest of them below it; why (also why there is no knob)."""
    tb = model["config"].get("time_block", {})
    proposal = int(tb.get("proposal", {}).get("depth", 1))
    deepest = min(int(tb.get("max_depth", 1)), iters)
    if proposal < 2:
        return (1,), 1, f"the model proposes no sweep: {tb.get('proposal', {}).get('why', 'no proposal')}"
    if deepest < 2:
        return (1,), 1, f"a sweep needs at least 2 steps, and {iters} steps or the slabs allow {deepest}"
    depths = tuple(sorted({1, *(d for d in (2, 4, 8, proposal) if d <= deepest)}))
    guess = max(d for d in depths if d <= proposal)  # the proposal, else the deepest below it
    return depths, guess, f"step by step, 2, 4, 8 and the model's proposal ({proposal}), up to {deepest}"


def _radius_words(o: dict) -> list[str]:
    """--radius R for a configuration at another radius than the default (none for the default)."""
    r = o.get("radius")
    return [] if r in (None, iso3dfd.default_radius()) else ["--radius", str(r)]


class Iso3dfdTarget(Target):
    """The ISO3DFD engine: rate mpoints_per_s; blocks x and z are the model's, y is searched."""

    def space(self, m: Machine, db, keep) -> Space:
        grid, iters, radius = self.options["grid"], self.options["iters"], self.options["radius"]
        model = records.finish(native.run_record(iso3dfd.TOOL, iso3dfd.native_args(grid, 0, radius=radius)))
        self.guide_runs = 1
        ys, y0, why = guide.y_blocks(model, grid[1])
        self.notes.append(f"y blocks: {why}")
        bx, _, bz = model["config"]["blocks"]
        counts = thread_counts(len(m.cpus))
        knobs, left = self._common(m, counts, counts[-1], "every count up to this process's CPUs")
        knobs += [
            pages_knob(model),
            Knob("isa", tuple(m.isas), m.isas[0], "the variants this CPU runs"),
            Knob("yblock", first(y0, ys), y0, why),
        ]
        # The register shapes: each variant's default (the one this machine's runs take at the radius)
        # and every other shape of it; a shape runs only with its variant, so with another it folds
        # into the default.
        # (a variant of one shape, the generic loops, has none to search)
        rings = {isa: {s["name"] for s in manifest.row_shapes(isa)} for isa in m.isas}
        rings = {isa: names if len(names) > 1 else set() for isa, names in rings.items()}
        shapes = sorted(set().union(*rings.values())) if rings else []
        if shapes:
            knobs.append(
                Knob(
                    "shape",
                    (DEFAULT_SHAPE, *shapes),
                    DEFAULT_SHAPE,
                    "each variant's default at the radius and its other register shapes",
                )
            )
        else:
            under = f" under BANDWALL_MAX_ISA={m.isa_ceiling}" if m.isa_ceiling else ""
            left["shape"] = f"no variant this CPU runs{under} has register shapes"
        if shapes:
            # the prefetch distance and cache of the row kernel: what the run takes (kept, table,
            # compiled) and the settings the table's bench races
            knobs.append(
                Knob(
                    "prefetch",
                    (DEFAULT_PREFETCH, *PREFETCH_SETTINGS),
                    DEFAULT_PREFETCH,
                    "the setting the run takes (kept, the table's or the compiled one), none, 1 or 2 rows ahead into L1 or L2",
                )
            )
        else:
            left["prefetch"] = left["shape"]
        depths, depth_guess, why = sweep_depths(model, iters)
        if len(depths) > 1:
            knobs.append(Knob("depth", depths, depth_guess, why))
            teams = manifest.iso3dfd_word_names("sweep_team")
            if shapes:
                knobs.append(
                    Knob(
                        "swept",
                        (DEFAULT_SWEPT, *shapes),
                        DEFAULT_SWEPT,
                        "the sweeps' shape the run takes (kept, the table's or the step shape) and each "
                        "register shape of the variant",
                    )
                )
            else:
                left["swept"] = left["shape"]
            tiles = manifest.iso3dfd_word_names("tile_cache")
            knobs.append(Knob("tiles", first(DEFAULT_TILES, tiles), DEFAULT_TILES, TILES_WHY))
            if len(m.cpus) > 1:
                knobs.append(Knob("team", first(DEFAULT_TEAM, teams), DEFAULT_TEAM, TEAM_WHY))
            else:
                left["team"] = "one CPU: one thread sweeps alone"
        else:
            left["depth"] = why
            left["team"] = f"no sweep to share: {why}"
            left["tiles"] = f"no sweep to tile: {why}"
            left["swept"] = f"no sweep: {why}"

        def canon(c: dict) -> dict:
            c = fold_bindings(m, c)
            if c.get("shape", DEFAULT_SHAPE) not in rings.get(c.get("isa"), set()):
                c = {**c, "shape": DEFAULT_SHAPE} if "shape" in c else c
            # the generic loops do not prefetch, and a ring prefetches along its column
            if "prefetch" in c and (not rings.get(c.get("isa")) or "-ring" in c.get("shape", "")):
                c = {**c, "prefetch": DEFAULT_PREFETCH}
            # step by step, or one thread, has no sweep to share
            if "team" in c and (c.get("depth", 1) == 1 or c.get("threads") == 1):
                c = {**c, "team": DEFAULT_TEAM}
            # step by step has no tiles to size
            if "tiles" in c and c.get("depth", 1) == 1:
                c = {**c, "tiles": DEFAULT_TILES}
            # step by step has no sweeps to shape; a shape runs only with its variant
            if "swept" in c and (c.get("depth", 1) == 1 or c["swept"] not in rings.get(c.get("isa"), set())):
                c = {**c, "swept": DEFAULT_SWEPT}
            return c

        fixed = {"grid": list(grid), "iters": iters, "radius": radius, "xblock": bx, "zblock": bz}
        return Space(ISO3DFD, knobs, fixed, canon, left)

    def run(self, o: dict) -> tuple[float, dict]:
        rec = iso3dfd.run(
            tuple(o["grid"]),
            o["iters"],
            blocks=(o["xblock"], o["yblock"], o["zblock"]),
            threads=o["threads"],
            bind=o["bind"],
            placement=o.get("placement", "first-touch"),
            pages=o["pages"],
            isa=o["isa"],
            row_shape=None if o.get("shape", DEFAULT_SHAPE) == DEFAULT_SHAPE else o["shape"],
            prefetch=None if o.get("prefetch", DEFAULT_PREFETCH) == DEFAULT_PREFETCH else o["prefetch"],
            # the depth as the configuration says, never auto: a trial races nothing of its own
            time_block=o.get("depth", 1),
            sweep_team=None if o.get("team", DEFAULT_TEAM) == DEFAULT_TEAM else o["team"],
            tile_cache=None if o.get("tiles", DEFAULT_TILES) == DEFAULT_TILES else o["tiles"],
            swept_shape=None if o.get("swept", DEFAULT_SWEPT) == DEFAULT_SWEPT else o["swept"],
            radius=o.get("radius"),
        )
        if not records.passed(rec):
            raise RunFailed("iso3dfd did not validate")
        summary = _summary(rec, "mpoints_per_s", "gflops")
        summary["variant_key"] = rec["config"].get("isa_choice", {}).get("kernel")
        summary["row_shape"] = rec["config"].get("row_shape", {}).get("name")
        summary["prefetch"] = rec["config"].get("prefetch", {}).get("setting")
        summary["swept_shape"] = rec["config"].get("row_shape", {}).get("swept", {}).get("name")
        return rec["result"]["mpoints_per_s"], {k: v for k, v in summary.items() if v is not None}

    def settled(self, best: dict, row: dict, decided: bool) -> str | None:
        """The best configuration's row kernel knobs (register shape, prefetch setting), kept for
        later runs at this radius with its variant when the verdict's claims set it apart beyond
        noise (decided) and they are not the defaults (which are already what later runs take: what
        was kept earlier, else the table's or the compiled one)."""
        summary = row.get("summary", {})
        kernel, isa = summary.get("variant_key"), summary.get("isa")
        if not kernel or not isa:
            return None
        knobs = {}
        if best.get("shape", DEFAULT_SHAPE) != DEFAULT_SHAPE:
            knobs["shape"] = best["shape"]
        if best.get("prefetch", DEFAULT_PREFETCH) != DEFAULT_PREFETCH:
            knobs["prefetch"] = best["prefetch"]
        if best.get("swept", DEFAULT_SWEPT) != DEFAULT_SWEPT:
            knobs["swept_shape"] = best["swept"]
        if not knobs:
            return None
        said = {
            "shape": "the register shape {}",
            "prefetch": "the prefetch setting {}",
            "swept_shape": "the sweeps' register shape {}",
        }
        words = " and ".join(said[k].format(v) for k, v in knobs.items())
        if not decided:
            return (
                f"{words} not kept: the decision rule did not find the best faster beyond noise than every "
                "configuration it was compared with"
            )
        today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        why = f"the best of {kernel}'s tune ({row['median']:.0f} MPoints/s, median of {row['rounds']} rounds)"
        choices.keep_row_kernel(kernel, isa, knobs, why, today)
        return f"kept {words} of {isa} for {kernel}: later runs on this machine take it"

    def commands(self, o: dict) -> dict:
        grid = "x".join(map(str, o["grid"]))
        blocks = f"{o['xblock']}x{o['yblock']}x{o['zblock']}"
        head = ["iso3dfd", "--grid", grid, *_radius_words(o), "--iters", str(o["iters"]), "--blocks", blocks]
        head += ["--time-block", str(o.get("depth", 1))]
        if o.get("shape", DEFAULT_SHAPE) != DEFAULT_SHAPE:
            head += ["--row-shape", o["shape"]]
        if o.get("prefetch", DEFAULT_PREFETCH) != DEFAULT_PREFETCH:
            head += ["--prefetch", o["prefetch"]]
        if o.get("team", DEFAULT_TEAM) != DEFAULT_TEAM:
            head += ["--sweep-team", o["team"]]
        if o.get("tiles", DEFAULT_TILES) != DEFAULT_TILES:
            head += ["--tile-cache", o["tiles"]]
        if o.get("swept", DEFAULT_SWEPT) != DEFAULT_SWEPT:
            head += ["--swept-shape", o["swept"]]
        return command.builtin(head, o, ())


class Iso3dfdRanksTarget(Target):
    """ISO3DFD over MPI ranks: rate mpoints_per_s; the shape of the grid of ranks is searched, the
    one of least halo bytes (--dims auto's) first."""

    def space(self, m: Machine, db, keep) -> Space:
        grid, ranks, radius = self.options["grid"], self.options["ranks"], self.options["radius"]
        found = iso3dfd_mpi.shapes(grid, ranks, radius=radius)
        if not found:
            iso3dfd_mpi.check_decomposition(grid, ranks, "strong", "auto", radius=radius)  # says why
        values = tuple("x".join(map(str, d)) for d in found)
        why = f"every shape of {ranks} ranks whose parts hold the halo, least halo bytes a rank first"
        knobs = [Knob("dims", values, values[0], why)]
        fixed = {"grid": list(grid), "iters": self.options["iters"], "radius": radius, "ranks": ranks}
        return Space(ISO3DFD, knobs, fixed, None, {})

    def run(self, o: dict) -> tuple[float, dict]:
        rec = iso3dfd_mpi.run(
            tuple(o["grid"]), o["iters"], o["ranks"], dims=o["dims"], radius=o.get("radius")
        )
        if records.failed(rec):
            raise RunFailed("iso3dfd over ranks did not validate")
        return rec["result"]["mpoints_per_s"], _summary(rec, "mpoints_per_s", "comm_share")

    def commands(self, o: dict) -> dict:
        grid = "x".join(map(str, o["grid"]))
        head = [
            "iso3dfd",
            "--grid",
            grid,
            *_radius_words(o),
            "--iters",
            str(o["iters"]),
            "--ranks",
            str(o["ranks"]),
        ]
        return command.builtin([*head, "--dims", o["dims"]], {}, ())


class PipelineTarget(Target):
    """A STREAM kernel pipelined with a copy engine (Intel's DSA article): rate best_GBps."""

    def space(self, m: Machine, db, keep) -> Space:
        kernel = self.options["kernel"]
        counts = thread_counts(len(m.cpus))
        spare = len(counts) > 1  # a CPU can be left to an engine that runs on CPUs of its own
        engines = tuple(
            e["name"] for e in pipeline.public_engines() if e["available"] and (spare or not e["takes_cpus"])
        )
        if not engines:
            raise UsageError("no copy engine can run here (bandwall engine list says why)")
        default = manifest.default_engine()
        guess = default if default in engines else engines[0]
        takers = [n for n in engines if pipeline.takes_cpus(n)]
        if takers:
            counts = counts[:-1]
            why = f"every count, leaving one CPU to the engine that takes CPUs ({', '.join(takers)})"
        else:
            why = "every count up to this process's CPUs"
        knobs, left = self._common(m, counts, counts[-1], why)
        strategies = tuple(manifest.strategy_names())
        if pipeline.inputs(kernel) < 2:
            strategies = strategies[:1]
            left["strategy"] = f"{kernel} reads one array: nothing to split"
        knobs += [Knob("engine", first(guess, engines), guess, "available engines, the default first")]
        if len(strategies) > 1:
            knobs.append(Knob("strategy", strategies, strategies[0], "the strategies of the manifest"))
        knobs += [
            Knob("queue_depth", first(2, QUEUE_DEPTHS), 2, "blocks in flight per thread"),
            Knob("block", first("1M", BLOCKS), "1M", "block sizes around the executable's 1M"),
        ]
        fixed = {"kernel": kernel, "size": self.options.get("size"), "reps": self.options.get("reps")}
        if len(strategies) == 1:
            fixed["strategy"] = strategies[0]

        def canon(c: dict) -> dict:
            c = fold_bindings(m, c)
            row = manifest.engine(c.get("engine", ""))
            if row is not None and not row["queues"]:  # no engine: nothing is queued or split
                c.update(queue_depth=2, **({"strategy": strategies[0]} if "strategy" in c else {}))
            return c

        return Space(PIPELINE, knobs, fixed, canon, left)

    def run(self, o: dict) -> tuple[float, dict]:
        rec = pipeline.run(
            o["kernel"],
            o["engine"],
            o["strategy"],
            threads=o["threads"],
            bind=o["bind"],
            placement=o.get("placement"),
            queue_depth=o["queue_depth"],
            block=o["block"],
            size=o.get("size"),
            reps=o.get("reps"),
        )
        return rec["result"]["best_GBps"], _summary(rec, "best_GBps", "median_GBps")

    def commands(self, o: dict) -> dict:
        head = ["stream", "--kernel", o["kernel"], "--engine", o["engine"], "--strategy", o["strategy"]]
        head += ["--queue-depth", str(o["queue_depth"]), "--block", o["block"]]
        return command.builtin(head, o, ("size", "reps"))


class CommandTarget(Target):
    """A user's unmodified program under bandwall-pin; rate: the figure of merit (pin --compare's)."""

    def space(self, m: Machine, db, keep) -> Space:
        counts = thread_counts(len(m.cpus))
        knobs = [
            Knob("threads", counts, counts[-1], "every count up to this process's CPUs", costs=True),
            Knob("bind", bindings(m), "compact", "the binding policies bandwall-pin applies"),
        ]
        left: dict = {}
        places = placements(m, without=("serial",))
        if not places:
            left["placement"] = ONE_NODE
        elif not shutil.which("numactl"):
            left["placement"] = "numactl is not installed"
        else:
            knobs.append(Knob("placement", first("first-touch", places), "first-touch", "numactl"))
        fixed = {"command": list(self.options["command"]), "fom": self.options["fom"].description}
        return Space("command", knobs, fixed, lambda c: fold_bindings(m, c), left)

    def run(self, o: dict) -> tuple[float, dict]:
        fom: Fom = self.options["fom"]
        args = pin.launcher_args(bind=o["bind"], threads=o["threads"]) + ["--", *o["command"]]
        prefix = command.numactl(o.get("placement"))
        rec = native.run_record(
            "bandwall-pin", args, prefix=prefix or None, timeout=self.options.get("timeout")
        )
        rec = records.finish(rec)
        res = rec["result"]
        rate = fom.value({"stdout": res["stdout"], "wall_s": res["wall_s"], "rank": 0, "proc": "trial"})
        out = {"wall_s": res["wall_s"], "cpus": rec["config"].get("cpus"), "provenance": rec["provenance"]}
        out["validation"] = records.not_applicable("a user's program: its figure of merit is not checked")
        return rate, out

    def commands(self, o: dict) -> dict:
        return command.for_program(o, self.options["machine"])


def make(words: list[str], m: Machine, **options) -> Target:
    """The target the arguments name: one built-in name, else a command."""
    if len(words) == 1 and words[0] in names():
        word = words[0]
        for k in ("fom", "lower"):
            if options.get(k):
                raise UsageError(
                    f"--{k.replace('lower', 'lower-is-better')} goes with a command (-- CMD ARGS)"
                )
        if word == ISO3DFD:
            grid = iso3dfd.parse_dims(options["grid"], "grid")
            # the radius a tune ran at is always in its fixed options (None there: the default)
            radius = options.get("radius") or iso3dfd.default_radius()
            if options.get("ranks"):
                opts = {"grid": grid, "iters": options["iters"], "ranks": options["ranks"], "radius": radius}
                return Iso3dfdRanksTarget(word, "MPoints/s", opts)
            return Iso3dfdTarget(
                word, "MPoints/s", {"grid": grid, "iters": options["iters"], "radius": radius}
            )
        if options.get("ranks"):
            raise UsageError("--ranks tunes iso3dfd over MPI ranks: it goes with iso3dfd")
        if options.get("radius"):
            raise UsageError("--radius is the ISO3DFD stencil's: it goes with iso3dfd")
        if word == PIPELINE:
            stream.check_kernel(options["kernel"])
            return PipelineTarget(word, "GB/s", {k: options[k] for k in ("kernel", "size", "reps")})
        return StreamTarget(word, "GB/s", {k: options[k] for k in ("size", "reps")})
    if not words:
        raise UsageError(f"name a kernel ({', '.join(names())}) or a command after -- ")
    fom = Fom.parse(options["fom"], options.get("lower", False)) if options.get("fom") else Fom.wall()
    if options.get("lower") and not options.get("fom"):
        raise UsageError("--lower-is-better goes with --fom")
    opts = {"command": list(words), "fom": fom, "timeout": options.get("timeout"), "machine": m}
    return CommandTarget("command", fom.unit, opts)
