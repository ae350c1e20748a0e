"""The space bandwall tune searches: knobs (a name and its values, cheapest first), the model's guess,
and configurations (one value per knob) that mean the same run folded into one (two binding words
that put the threads on the same CPUs, a strategy an engine ignores).

The values come from the tables the rest of bandwall uses: binding and placement policies
(bandwall-topo --list-policies, python/bandwall/core/policies.py, read here), the instruction sets
the CPU offers and NUMA nodes (the topology record), page sizes, STREAM stores, engines and
strategies (the manifest, python/bandwall/core/manifest.py, read by python/bandwall/tune/targets.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from bandwall.core import policies, topo
from bandwall.core.errors import UsageError


@dataclass(frozen=True)
class Knob:
    name: str
    values: tuple  # cheapest first: fewer threads, simpler binding, the default first
    guess: object  # the model's guess, where coordinate descent starts
    why: str = ""  # where the values came from, and what was pruned
    costs: bool = False  # an earlier value costs more than a later one does (threads: cores)


@dataclass
class Space:
    """knobs: the searched knobs; fixed: what every run shares (kernel, sizes, the knobs left out);
    canon: folds a configuration into the one that runs the same (identity by default)."""

    target: str
    knobs: list[Knob]
    fixed: dict = field(default_factory=dict)
    canon: Callable[[dict], dict] | None = None
    left_out: dict = field(default_factory=dict)  # knob -> why it is not searched

    def names(self) -> list[str]:
        return [k.name for k in self.knobs]

    def size(self) -> int:
        """Configurations in the full grid of the searched knobs."""
        return math.prod(len(k.values) for k in self.knobs)

    def grid(self) -> list[dict]:
        """Every configuration, each folded: what an exhaustive search measures (bench only)."""
        configs: list[dict] = [{}]
        for k in self.knobs:
            configs = [{**c, k.name: v} for c in configs for v in k.values]
        seen: dict[str, dict] = {}
        for c in configs:
            c = self.canonical(c)
            seen.setdefault(self.key(c), c)
        return list(seen.values())

    def canonical(self, config: dict) -> dict:
        return self.canon(dict(config)) if self.canon else dict(config)

    def key(self, config: dict) -> str:
        return json.dumps(config, sort_keys=True)

    def guess(self) -> dict:
        return self.canonical({k.name: k.guess for k in self.knobs})

    def line(self, current: dict, i: int) -> list[dict]:
        """The current configuration with knob i set to each of its values."""
        k = self.knobs[i]
        return [self.canonical({**current, k.name: v}) for v in k.values]

    def cost(self, config: dict) -> tuple:
        """Cheaper first: the index of the value of each knob that costs (fewer threads: cores left
        free); the other knobs (a binding word, a page size) cost the same whatever their value."""
        return tuple(
            k.values.index(config[k.name]) if config.get(k.name) in k.values else 0
            for k in self.knobs
            if k.costs
        )

    def digest(self) -> str:
        """Names the space: target, fixed options and the knobs' values."""
        text = json.dumps(
            {
                "target": self.target,
                "fixed": self.fixed,
                "knobs": {k.name: list(k.values) for k in self.knobs},
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def narrow(self, names: list[str]) -> Space:
        """Only the knobs named are searched; the others stay at the model's guess (fixed)."""
        unknown = [n for n in names if n not in self.names() and n not in self.left_out]
        if unknown:
            raise UsageError(
                f"--space: {unknown[0]!r} is not a knob of {self.target} "
                f"(knobs: {', '.join(self.names() + list(self.left_out))})"
            )
        off = [n for n in names if n in self.left_out]
        if off:
            raise UsageError(f"--space: {off[0]!r} cannot be searched here: {self.left_out[off[0]]}")
        kept = [k for k in self.knobs if k.name in names]
        fixed = dict(self.fixed)
        fixed.update({k.name: k.guess for k in self.knobs if k.name not in names})
        return Space(self.target, kept, fixed, self._narrowed_canon(fixed), dict(self.left_out))

    def _narrowed_canon(self, fixed: dict) -> Callable[[dict], dict]:
        names = [n for n in fixed if n in {k.name for k in self.knobs}]

        def canon(config: dict) -> dict:
            full = self.canonical({**{n: fixed[n] for n in names}, **config})
            return {k: v for k, v in full.items() if k not in names}

        return canon


def parse_space(text: str | None) -> list[str] | None:
    """--space threads,bind,isa -> the knob names (None: every knob)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(f"--space {text!r}: name knobs separated by commas, such as threads,bind")
    return list(dict.fromkeys(names))


# -- the machine and the tables ----------------------------------------------------------------


@dataclass(frozen=True)
class Machine:
    """What the space is built from: this process's CPUs and the topology record."""

    cpus: tuple[int, ...]
    record: dict

    @property
    def nodes(self) -> list[int]:
        return [n["os_index"] for n in self.record["result"]["numa_nodes"]]

    @property
    def isas(self) -> list[str]:
        """The instruction-set variants this CPU runs, best first (the topology's isa.offered)."""
        return list(self.record["result"].get("isa", {}).get("offered", []))

    @property
    def isa_ceiling(self) -> str | None:
        """BANDWALL_MAX_ISA as the executables read it (None: no ceiling)."""
        return self.record["result"].get("isa", {}).get("ceiling")

    @property
    def digest(self) -> str:
        return self.record["provenance"]["topology_digest"]

    @property
    def build(self) -> str:
        """The build of the executables: git revision, compiler and flags."""
        p = self.record["provenance"]
        return f"{p['git_revision']} {p['compiler']} {p['flags'].strip()}"

    def l2_bytes(self) -> int:
        sizes = [c["size_bytes"] for c in self.record["result"]["caches"] if c["level"] == 2]
        return min(sizes) if sizes else 0

    def order(self, bind: str, threads: int) -> tuple[int, ...] | None:
        """The CPUs a binding word puts threads on (None: left to the scheduler)."""
        if bind == "none":
            return None
        return _order(bind, threads)


@lru_cache(maxsize=256)
def _order(bind: str, threads: int) -> tuple[int, ...]:
    return tuple(topo.topology(order=bind, threads=threads)["result"]["order"])


def machine() -> Machine:
    return Machine(tuple(sorted(os.sched_getaffinity(0))), topo.topology())


def thread_counts(n: int) -> tuple[int, ...]:
    """1..n on small machines; powers of two and n beyond 8 CPUs."""
    if n <= 8:
        return tuple(range(1, n + 1))
    return tuple(sorted({2**i for i in range(int(math.log2(n)) + 1)} | {n}))


def bindings(m: Machine) -> tuple[str, ...]:
    """The binding policies of the native table, node:N expanded over the NUMA nodes when there is
    more than one (on one node, node:0 is compact), in the table's order."""
    out: list[str] = []
    for row in policies.table()["binding"]:
        if row["syntax"] == row["name"]:
            out.append(row["name"])
        elif row["syntax"] == f"{row['name']}:N" and len(m.nodes) > 1:
            out += [f"{row['name']}:{n}" for n in m.nodes]
    return tuple(out)


def placements(m: Machine, without: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The placement policies of the native table over this machine's nodes; empty on one NUMA node,
    where every policy puts every page on node 0."""
    if len(m.nodes) < 2:
        return ()
    out: list[str] = []
    for row in policies.table()["placement"]:
        name, syntax = row["name"], row["syntax"]
        if name in without:
            continue
        if syntax == name or syntax.startswith(f"{name}["):
            out.append(name)
        elif syntax == f"{name}:N":
            out += [f"{name}:{n}" for n in m.nodes]
    return tuple(out)


def fold_bindings(m: Machine, config: dict) -> dict:
    """Binding words that put the same threads on the same CPUs are one configuration: the first
    word of the table's order names it."""
    bind, threads = config.get("bind"), config.get("threads")
    if bind is None or threads is None or bind == "none":
        return config
    cpus = m.order(bind, threads)
    for word in bindings(m):
        if word != "none" and m.order(word, threads) == cpus:
            return {**config, "bind": word}
    return config
