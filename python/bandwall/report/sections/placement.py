"""Report section `placement`: where memory is and what NUMA costs. numa-check's verdict for the
ISO3DFD stencil (the experiment of Intel's NUMA 3DFD article), the bandwidth matrix of threads on node i and memory on node
j, and the "memory objects" view: which node holds each array of iso3dfd under first-touch and
serial initialisation and of stream."""

from __future__ import annotations

from bandwall.core import manifest, native
from bandwall.core.topo import topology
from bandwall.display import table
from bandwall.kernels import iso3dfd, stream
from bandwall.numa import numa_check, numa_matrix
from bandwall.report import Context, last_of, of_tool, plots, sections
from bandwall.report.render import facts, html_table, note
from bandwall.views import numa_check as numacheck_view
from bandwall.views import numa_matrix as numamatrix_view
from bandwall.views.place import page_map_rows

QUICK = {"grid": (144, 144, 144), "iters": 3, "rounds": 3, "size": "64M", "reps": 4}
FULL = {"grid": (272, 272, 272), "iters": 5, "rounds": 3, "size": "256M", "reps": 5}


class PlacementSection:
    title = "NUMA placement: numa-check, node matrix, memory objects"
    order = 40

    def collect(self, ctx: Context) -> None:
        p = QUICK if ctx.quick else FULL
        topo = topology()
        ctx.step("numa-check of iso3dfd: all nodes, one node, a process per node, interleaved")
        b = numa_check.builtin("iso3dfd", grid=p["grid"], iters=p["iters"])
        check = numa_check.run(
            [native.executable(b.executable)] + b.args, b.fom, p["rounds"], topo, "iso3dfd", None
        )
        ctx.save(check)
        ctx.step("bandwidth matrix: threads on node i, memory on node j")
        matrix = numa_matrix.measure(topo, "triad", p["size"], p["reps"], p["rounds"])
        ctx.save(matrix)
        for init in manifest.iso3dfd_word_names("init"):
            ctx.step(f"page map of iso3dfd with {init} initialisation")
            ctx.save(iso3dfd.run(p["grid"], p["iters"], threads=ctx.threads, init=init))
        ctx.step("page map of stream triad (first-touch)")
        ctx.save(stream.run("triad", placement="first-touch", size=p["size"], reps=2))

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        objects = {
            f"iso3dfd, {r['config']['init']}": r["placement"]["page_map"] for r in of_tool(recs, "iso3dfd")
        }
        for r in of_tool(recs, "stream"):
            objects[f"stream {r['config']['kernel']}, first-touch"] = r["placement"]["page_map"]
        p = QUICK if ctx.quick else FULL
        return {
            "check": last_of(recs, "numa-check")["result"],
            "matrix": last_of(recs, "numa-matrix")["result"],
            "objects": objects,
            "quick": ctx.quick,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in p.items()},
        }

    def terminal(self, ctx: Context, data: dict) -> None:
        numacheck_view.render(ctx.console, {"result": data["check"]})
        numamatrix_view.render(ctx.console, {"result": data["matrix"]})
        for name, page_map in data["objects"].items():
            cols, rows = page_map_rows(page_map)
            ctx.console.print(table(f"memory objects: {name} (% of pages per node)", ["array"] + cols, rows))

    def html(self, ctx: Context, data: dict) -> str:
        c, m = data["check"], data["matrix"]
        parts = [
            facts(
                [("numa-check of iso3dfd", c["verdict"])] + [("what to do", a) for a in c.get("advice", [])]
            )
        ]
        if data["quick"]:
            parts.append(
                note(
                    f"quick: grid {data['params']['grid']}, {data['params']['iters']} steps, "
                    f"{data['params']['rounds']} round(s) instead of 272³, 5 steps, 3 rounds"
                )
            )
        parts.append(
            html_table(
                ["mode", "what", "processes (CPUs@memory)", f"median {c['fom_unit']}"],
                [[n, x["title"], " ".join(x["procs"]), f"{x['value']:.1f}"] for n, x in c["modes"].items()],
                caption="numa-check modes",
            )
        )
        fig, ax = plots.figure(max(4.5, 1.6 + 1.1 * len(m["memory_nodes"])), 1.6 + 0.6 * len(m["cpu_nodes"]))
        plots.heatmap(
            ax,
            m["matrix"],
            [f"CPUs {i}" for i in m["cpu_nodes"]],
            [f"mem {j}" for j in m["memory_nodes"]],
            fmt="{:.1f}",
            label=m["unit"],
        )
        ax.set_title(
            f"{m['kernel']} bandwidth\nthreads on node i (rows), memory on node j (columns)", fontsize=10
        )
        parts.append(plots.img_tag(fig, "NUMA bandwidth matrix"))
        if len(m["cpu_nodes"]) == 1:
            parts.append(note("One NUMA node: the matrix has one cell and every page below is on node 0."))
        parts.append(self._objects_plot(data["objects"]))
        for name, page_map in data["objects"].items():
            cols, rows = page_map_rows(page_map)
            parts.append(
                html_table(
                    ["array"] + cols,
                    [[r[0]] + [f"{v:.1f}" for v in r[1:]] for r in rows],
                    caption=f"memory objects: {name} (% of pages per node)",
                )
            )
        return "\n".join(parts)

    @staticmethod
    def _objects_plot(objects: dict) -> str:
        labels, maps = [], []
        for name, page_map in objects.items():
            for array, shares in page_map.items():
                labels.append(f"{name}: {array}")
                maps.append(shares)
        keys = sorted(
            {k for s in maps for k in s}, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0)
        )
        fig, ax = plots.figure(7.0, 0.9 + 0.28 * len(labels))
        left = [0.0] * len(labels)
        for i, k in enumerate(keys):
            vals = [100.0 * s.get(k, 0.0) for s in maps]
            ax.barh(
                labels,
                vals,
                left=left,
                color=plots.PALETTE[i % len(plots.PALETTE)],
                label=f"node {k}" if k.isdigit() else k,
            )
            left = [a + b for a, b in zip(left, vals)]
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of the array's pages")
        ax.legend(loc="lower right", fontsize=8)
        ax.set_title("Memory objects: which NUMA node holds each array")
        return plots.img_tag(fig, "memory objects by NUMA node")


sections.register("placement")(PlacementSection())
