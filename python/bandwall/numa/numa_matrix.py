"""numa-matrix: memory bandwidth with the threads on node i and the memory on node j, like Intel MLC's
bandwidth matrix, measured with bandwall-stream (--cpus of node i, --placement bind:j). Rounds
alternate over the cells; each cell is the median. On a one-node machine it is a 1x1 matrix.
"""

from __future__ import annotations

import shutil

from bandwall.core import native, records
from bandwall.core.errors import UsageError
from bandwall.core.fom import median
from bandwall.core.topo import cpu_list
from bandwall.kernels import stream
from bandwall.numa import numa_check


def memory_nodes(topo: dict) -> list[int]:
    return [n["os_index"] for n in topo["result"]["numa_nodes"] if n.get("memory_bytes", 1) > 0]


def cell_args(
    topo: dict,
    kernel: str = "triad",
    size: str = "256M",
    reps: int = 5,
    chosen: list[int] | None = None,
    free: bool = False,
) -> list[tuple[tuple[int, int], list[str]]]:
    """((CPU node i, memory node j), bandwall-stream arguments) of every cell of the matrix: a
    thread on each CPU of node i (of chosen, in its order, when given), or with free (--bind none)
    as many threads left to the scheduler on them (the process is bound to them: cell_prefix)."""
    return [
        (
            (i, j),
            [
                "--kernel",
                kernel,
                "--threads",
                str(len(cpus)),
                *(["--bind", "none"] if free else ["--cpus", cpu_list(cpus)]),
                "--placement",
                f"bind:{j}",
                "--size",
                size,
                "--reps",
                str(reps),
            ],
        )
        for i, cpus in numa_check.nodes_with_cpus(topo, chosen)
        for j in memory_nodes(topo)
    ]


def cell_prefix(cpus: list[int], free: bool) -> list[str] | None:
    """With free threads, the process of a cell is bound to its node's CPUs (taskset), the threads not."""
    if not free:
        return None
    if not shutil.which("taskset"):
        raise UsageError("--bind none needs taskset (util-linux) to keep each row's process on its node")
    return ["taskset", "-c", cpu_list(cpus)]


def measure(
    topo: dict,
    kernel: str = "triad",
    size: str = "256M",
    reps: int = 5,
    rounds: int = 1,
    chosen: list[int] | None = None,
    free: bool = False,
) -> dict:
    """The numa-matrix record of a machine (real, or any whose CPUs exist here); chosen and free as
    in cell_args."""
    stream.check_kernel(kernel)
    cpu_nodes = numa_check.nodes_with_cpus(topo, chosen)
    node_cpus = dict(cpu_nodes)
    mem_nodes = memory_nodes(topo)
    cells: dict[tuple[int, int], list[float]] = {}
    prov = None
    for _ in range(rounds):
        for cell, args in cell_args(topo, kernel, size, reps, chosen, free):
            rec = native.run_record("bandwall-stream", args, prefix=cell_prefix(node_cpus[cell[0]], free))
            cells.setdefault(cell, []).append(float(rec["result"]["best_GBps"]))
            prov = prov or rec["provenance"]
    matrix = [[median(cells[(i, j)]) for j in mem_nodes] for i, _ in cpu_nodes]
    local = [matrix[r][mem_nodes.index(i)] for r, (i, _) in enumerate(cpu_nodes) if i in mem_nodes]
    remote = [v for r, (i, _) in enumerate(cpu_nodes) for c, v in enumerate(matrix[r]) if mem_nodes[c] != i]
    result = {
        "unit": "GB/s",
        "kernel": kernel,
        "cpu_nodes": [i for i, _ in cpu_nodes],
        "memory_nodes": mem_nodes,
        "matrix": matrix,
        "cell_rounds": [[cells[(i, j)] for j in mem_nodes] for i, _ in cpu_nodes],
        "row_cpus": [cpu_list(cpus) for _, cpus in cpu_nodes],
        "rounds": rounds,
    }
    if local and remote:
        result["remote_over_local"] = (sum(remote) / len(remote)) / (sum(local) / len(local))
    prov = dict(prov)
    all_cpus = sorted(c for _, cpus in cpu_nodes for c in cpus)
    prov.update(
        threads=max(len(c) for _, c in cpu_nodes),
        cpus=cpu_list(all_cpus),
        binding="node i, threads free" if free else "node i",
        placement="bind:j",
    )
    rec = {
        "schema_version": records.SCHEMA_VERSION,
        "tool": "numa-matrix",
        "config": {"kernel": kernel, "size": size, "reps": reps, "rounds": rounds},
        "result": result,
        "validation": records.not_applicable(
            "compares bandwidths; each point's stream run checked its own answer"
        ),
        "provenance": prov,
    }
    return records.finish(rec)
