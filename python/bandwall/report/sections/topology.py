"""Report section `topology`: packages, NUMA nodes and their distances, cores, caches, hardware
counters and DSA work queues of the machine (bandwall topo), drawn as a diagram in lstopo's manner."""

from __future__ import annotations

from bandwall.core import topo
from bandwall.report import Context, last_of, plots, sections
from bandwall.report.render import facts, html_table, note
from bandwall.views import topo as topo_view

ROW_COLOURS = {"package": "#e8eef5", "numa": "#d9ead3", "cache": "#fff2cc", "core": "#cfe2f3"}
LABELLED_CORES = 32  # above this many cores the diagram draws cores and private caches unlabelled


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """[0, 1, 2, 5] -> [(0, 3), (5, 6)]: contiguous spans as half-open intervals."""
    spans: list[tuple[int, int]] = []
    for i in sorted(indices):
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def _core_order(r: dict) -> list[dict]:
    """Cores sorted by package, NUMA node and first CPU, so each node's cores sit side by side."""
    node_of = {c: n for n in r["numa_nodes"] for c in n["cpus"]}

    def key(core):
        node = node_of.get(core["cpus"][0], {"package": 0, "os_index": 0})
        return (node["package"], node["os_index"], core["cpus"][0])

    return sorted([c for c in r["core_list"] if c["cpus"]], key=key)


def diagram_rows(r: dict) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """The diagram as rows of (kind, [(first core, end core, label)]): packages, NUMA nodes, each
    cache level from the largest down, cores. Core positions follow _core_order."""
    cores = _core_order(r)
    labelled = len(cores) <= LABELLED_CORES

    def spans(cpus, label):
        cpuset = set(cpus)
        hit = [i for i, c in enumerate(cores) if cpuset & set(c["cpus"])]
        return [(a, b, label) for a, b in _runs(hit)]

    rows: list[tuple[str, list]] = []
    packages: dict[int, list[int]] = {}
    for n in r["numa_nodes"]:
        packages.setdefault(n["package"], []).extend(n["cpus"])
    rows.append(("package", [s for p, cpus in sorted(packages.items()) for s in spans(cpus, f"Package {p}")]))
    rows.append(
        (
            "numa",
            [
                s
                for n in r["numa_nodes"]
                for s in spans(n["cpus"], f"NUMA node {n['os_index']}  ({_size(n['memory_bytes'])})")
            ],
        )
    )
    for level in sorted({c["level"] for c in r["caches"]}, reverse=True):
        row = [
            s
            for c in r["caches"]
            if c["level"] == level
            for s in spans(c["cpus"], f"L{level} {_size(c['size_bytes'])}")
        ]
        if not labelled:
            row = [(a, b, lab if b - a > 1 else "") for a, b, lab in row]
        rows.append(("cache", row))
    core_row = []
    for i, c in enumerate(cores):
        pus = ",".join(map(str, c["cpus"]))
        core_row.append((i, i + 1, f"Core {c['logical_index']}\nPU {pus}" if labelled else ""))
    rows.append(("core", core_row))
    return [(kind, row) for kind, row in rows if row]


def diagram(r: dict) -> str:
    rows = diagram_rows(r)
    ncores = max(1, len(r["core_list"]))
    width = min(14.0, max(5.0, 1.6 * ncores))
    fig, ax = plots.figure(width, 0.55 * len(rows) + 0.5)
    ax.set_axis_off()
    for depth, (kind, row) in enumerate(rows):
        y = -depth
        for a, b, label in row:
            ax.add_patch(_box(a + 0.04, y, b - a - 0.08, 0.82, ROW_COLOURS[kind]))
            if label:
                ax.text(
                    (a + b) / 2,
                    y + 0.41,
                    label,
                    ha="center",
                    va="center",
                    fontsize=8 if kind == "core" else 9,
                )
    ax.set_xlim(0, ncores)
    ax.set_ylim(-len(rows) + 0.9, 0.9)
    return plots.img_tag(fig, alt="machine topology: packages, NUMA nodes, caches and cores")


def _box(x, y, w, h, colour):
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch(
        (x, y),
        w,
        h,
        boxstyle="round,pad=0,rounding_size=0.06",
        facecolor=colour,
        edgecolor="#5b6773",
        linewidth=0.8,
    )


def distance_plot(r: dict) -> str:
    ids = [n["os_index"] for n in r["numa_nodes"]]
    fig, ax = plots.figure(1.2 + 0.55 * len(ids), 1.0 + 0.5 * len(ids))
    plots.heatmap(ax, r["distances"], ids, ids, fmt="{:.0f}", cmap="Blues")
    ax.set_xlabel("to node")
    ax.set_ylabel("from node")
    ax.set_title("NUMA distances (10 = local)", fontsize=10)
    return plots.img_tag(fig, alt="NUMA distance matrix")


def cache_rows(r: dict) -> list[list]:
    groups: dict[tuple, list[str]] = {}
    for c in r["caches"]:
        groups.setdefault((c["level"], c["size_bytes"], c["line_bytes"]), []).append(topo.cpu_list(c["cpus"]))
    return [[f"L{lv}", _size(sz), ln, len(v), " | ".join(v)] for (lv, sz, ln), v in sorted(groups.items())]


class TopologySection:
    title = "Topology"
    order = 10

    def collect(self, ctx: Context) -> None:
        ctx.step("reading the machine with hwloc")
        ctx.save(topo.topology())

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        return last_of(recs, "topo")["result"]

    def terminal(self, ctx: Context, data: dict) -> None:
        topo_view.render(ctx.console, {"result": data})

    def html(self, ctx: Context, r: dict) -> str:
        parts = [
            facts(
                [
                    ("CPU", r["cpu_model"]),
                    (
                        "machine",
                        f"{r['packages']} package(s), {len(r['numa_nodes'])} NUMA node(s), {r['cores']} cores, "
                        f"{r['pus']} hardware threads",
                    ),
                    ("last-level cache", _size(r["llc_bytes"])),
                    ("hardware counters", r["pmu"]),
                    ("DSA work queues", ", ".join(r["dsa_work_queues"]) or "none"),
                    ("described by", r["source"]),
                ]
            )
        ]
        parts.append(diagram(r))
        parts.append(
            html_table(
                ["node", "package", "memory", "CPUs"],
                [
                    [n["os_index"], n["package"], _size(n["memory_bytes"]), topo.cpu_list(n["cpus"])]
                    for n in r["numa_nodes"]
                ],
                caption="NUMA nodes",
            )
        )
        if r.get("distances") and len(r["distances"]) > 1:
            parts.append(distance_plot(r))
        elif len(r["numa_nodes"]) == 1:
            parts.append(
                note(
                    "One NUMA node: all memory is local to every core, so placement cannot matter "
                    "here; the placement experiments need a multi-node machine."
                )
            )
        else:
            parts.append(note("The NUMA distances of this machine are not known."))
        if r["caches"]:
            parts.append(
                html_table(
                    ["level", "size", "line (B)", "instances", "CPUs of each"],
                    cache_rows(r),
                    caption="Caches",
                )
            )
        else:
            parts.append(note("The topology source describes no caches."))
        return "\n".join(parts)


sections.register("topology")(TopologySection())
