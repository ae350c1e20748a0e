"""The batches of placement and launching cases for the 2-node and 4-node guests, booted once each
per test session (results() is cached), and the expectations the tests hold them to.

Cases run bandwall-place (arrays under each policy, touched from bound threads), numa-check's modes
as planned by bandwall.numa.numa_check for a synthetic copy of the guest's topology and launched by
bandwall-launch, and bandwall-stream / bandwall-iso3dfd when they are in the tree.
"""

from __future__ import annotations

from pathlib import Path

from bandwall.numa import numa_check, numa_matrix
from vm import guest, pin_cases

MIB = 1 << 20
# name: (nodes, CPUs per node, MiB per node, hwloc synthetic description of the same machine)
TOPOLOGIES = {
    "2node": (2, 2, 512, "numa:2 core:2 pu:1"),
    "4node": (4, 1, 512, "numa:4 core:1 pu:1"),
}
# Arrays of 24 MiB: a static split over 2, 3 or 4 threads keeps every part a multiple of 2 MiB, so
# huge pages do not straddle two threads' parts (buffers are 2 MiB aligned).
ARRAY = 24 * MIB
SMALL = 16 * MIB
THP_MODES = ("always", "never")
SEQUENCE = 4096  # pages whose nodes are listed in order: 8 huge pages of 2 MiB
HOSTILE_OPENMP_ENV = {
    "OMP_PROC_BIND": "true",
    "OMP_PLACES": "cores",
    "GOMP_CPU_AFFINITY": "0",
    "OMP_NUM_THREADS": "1",
}


def bin_path(name: str) -> str:
    return str(guest.BIN / name)


def place(*args: str, size: int = ARRAY) -> list[str]:
    return [bin_path("bandwall-place"), "--size", str(size), *args]


def synthetic_topology(name: str) -> dict:
    """The bandwall-topo record of a synthetic machine shaped like the guest (run on the host)."""
    import json
    import subprocess

    proc = subprocess.run(
        [bin_path("bandwall-topo"), "--topology", TOPOLOGIES[name][3]],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def synthetic_order(name: str, policy: str) -> list[int]:
    """The CPU order a binding policy gives on a synthetic machine shaped like the guest."""
    import json
    import subprocess

    proc = subprocess.run(
        [bin_path("bandwall-topo"), "--topology", TOPOLOGIES[name][3], "--order", policy],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)["result"]["order"]


def launch_cases(name: str) -> list[guest.Case]:
    """numa-check's modes for a command that reports its own placement (bandwall-place)."""
    cases = []
    for mode in numa_check.plan(synthetic_topology(name)):
        argv = [
            bin_path("bandwall-launch"),
            *mode.launcher_args(),
            "--",
            *place("--threads", "{ncpus}", "--bind", "compact", "--arrays", "a", size=SMALL),
        ]
        cases.append(guest.Case(f"launch-{mode.name}", argv, thp="never"))
    return cases


def builtin_cases(name: str) -> list[guest.Case]:
    """numa-check's per-node mode and direct placements for the built-in kernels in the tree."""
    nodes, cpn = TOPOLOGIES[name][:2]
    every = ",".join(str(c) for c in range(nodes * cpn))
    per_node = next(m for m in numa_check.plan(synthetic_topology(name)) if m.name == "per-node")
    cases: list[guest.Case] = []
    if "bandwall-stream" in guest.targets():
        st = numa_check.builtin("stream", size="16M", reps=2)
        cases += [
            guest.Case(
                "stream-first-touch",
                [
                    bin_path("bandwall-stream"),
                    "--kernel",
                    "triad",
                    "--cpus",
                    every,
                    "--placement",
                    "first-touch",
                    "--size",
                    "24M",
                    "--reps",
                    "2",
                ],
                thp="never",
            ),
            # Module-file OpenMP settings that would put every thread on CPU 0: bandwall removes
            # them before the runtime starts, so scatter still spreads the threads over the nodes.
            guest.Case(
                "stream-hostile-openmp-env",
                [
                    bin_path("bandwall-stream"),
                    "--kernel",
                    "triad",
                    "--bind",
                    "scatter",
                    "--size",
                    "16M",
                    "--reps",
                    "2",
                ],
                thp="never",
                env=HOSTILE_OPENMP_ENV,
            ),
            guest.Case(
                "stream-serial",
                [
                    bin_path("bandwall-stream"),
                    "--kernel",
                    "triad",
                    "--cpus",
                    f"{nodes * cpn - 1},0",
                    "--placement",
                    "serial",
                    "--size",
                    "16M",
                    "--reps",
                    "2",
                ],
                thp="never",
            ),
            guest.Case(
                "stream-bind1",
                [
                    bin_path("bandwall-stream"),
                    "--kernel",
                    "triad",
                    "--cpus",
                    "0",
                    "--placement",
                    "bind:1",
                    "--size",
                    "16M",
                    "--reps",
                    "2",
                ],
                thp="never",
            ),
            *[
                guest.Case(f"matrix-{i}-{j}", [bin_path("bandwall-stream"), *args], thp="never")
                for (i, j), args in numa_matrix.cell_args(synthetic_topology(name), size="8M", reps=2)
            ],
            guest.Case(
                "stream-per-node",
                [
                    bin_path("bandwall-launch"),
                    *per_node.launcher_args(),
                    "--",
                    bin_path(st.executable),
                    *st.args,
                ],
                thp="never",
            ),
        ]
    if "bandwall-iso3dfd" in guest.targets():
        grid = ["96", "96", "160", "1", "96", "16", "16", "compact", str(nodes * cpn)]
        iso = numa_check.builtin("iso3dfd", grid=(64, 64, 96), iters=1)
        cases += [
            guest.Case(
                "iso3dfd-first-touch",
                [bin_path("bandwall-iso3dfd"), *grid, "--init", "first-touch", "--json"],
                thp="never",
            ),
            guest.Case(
                # Sweeps of 3 steps (9 steps; slabs of 36 planes each at 4 threads): the trapezoids
                # are each thread's own slab, so the pages stay where the first touch put them.
                "iso3dfd-time-block",
                [bin_path("bandwall-iso3dfd"), *grid[:3], "9", *grid[4:], "--time-block", "3", "--json"],
                thp="never",
            ),
            guest.Case(
                "iso3dfd-serial",
                [bin_path("bandwall-iso3dfd"), *grid, "--init", "serial", "--json"],
                thp="never",
            ),
            guest.Case(
                "iso3dfd-per-node",
                [
                    bin_path("bandwall-launch"),
                    *per_node.launcher_args(),
                    "--",
                    bin_path(iso.executable),
                    *iso.args,
                ],
                thp="never",
            ),
        ]
    if "bandwall-iso3dfd" in guest.targets() and name == "2node":
        # First-touch with huge pages on, 2 threads one per node, the front end's default blocks
        # (whole rows x 24 x 128), no steps: the page maps after initialisation. 128³ cuts the
        # arrays on a huge-page boundary (4 MiB); 160³ cuts them inside a huge page (at 7.8 MiB),
        # with arrays of 16 MiB; 272³ (256³ interior, the benchmark's grid) cuts its 77 MiB arrays
        # inside one too (at 38.4 MiB).
        for n in (128, 160, 272):
            cases.append(
                guest.Case(
                    f"iso3dfd-huge-{n}",
                    [
                        bin_path("bandwall-iso3dfd"),
                        *[str(n)] * 3,
                        "0",
                        str(n),
                        "24",
                        "128",
                        "scatter",
                        "2",
                        "--json",
                        # rows and planes packed and the arrays at their pages' start: the
                        # planes and cuts the sizes above say, alike in the three arrays
                        "--row-pitch",
                        "packed",
                        "--plane-pitch",
                        "packed",
                        "--array-offset",
                        "0",
                    ],
                    thp="always",
                )
            )
    # Their compute loops read remote memory, which automatic NUMA balancing would migrate.
    for c in cases:
        c.numa_balancing = 0
    # Serial initialisation with the kernel's balancing on, as it is by default: the page map is the
    # placement as initialised, whatever the timed steps (long enough for balancing to act) do to the
    # pages later, with the variant forced or raced and the sweeps raced.
    master = str(nodes * cpn - 1)
    if "bandwall-stream" in guest.targets():
        triad = [bin_path("bandwall-stream"), "--kernel", "triad", "--cpus", f"{master},0"]
        triad += ["--placement", "serial", "--size", "16M", "--reps", "60"]
        cases += [
            guest.Case("stream-serial-balancing", triad, thp="never", numa_balancing=1),
            guest.Case("stream-serial-measure", [*triad, "--isa", "measure"], thp="never", numa_balancing=1),
        ]
    if "bandwall-iso3dfd" in guest.targets():
        iso = [bin_path("bandwall-iso3dfd"), "96", "96", "160", "12", "96", "16", "16", "scatter"]
        iso += [str(nodes * cpn), "--init", "serial", "--json"]
        cases += [
            guest.Case("iso3dfd-serial-balancing", [*iso, "--isa", "avx2"], thp="never", numa_balancing=1),
            guest.Case(  # on a CPU no machine model knows, so the variant is timed, not read from a table
                "iso3dfd-serial-measure",
                [*iso, "--isa", "measure", "--time-block", "measure"],
                thp="never",
                numa_balancing=1,
                env={"BANDWALL_MICROARCH": "none"},
            ),
        ]
    return cases


def placement_cases(name: str) -> list[guest.Case]:
    nodes, cpn = TOPOLOGIES[name][:2]
    last = nodes * cpn - 1
    cases = [guest.Case("topo", [bin_path("bandwall-topo")])]
    for thp in THP_MODES:
        if name == "2node":
            cases.append(guest.Case(f"first-touch-{thp}", place("--cpus", "0,1,2"), thp=thp))
        else:
            cases.append(guest.Case(f"first-touch-{thp}", place("--cpus", "0,1,2,3"), thp=thp))
            cases.append(guest.Case(f"first-touch-skip1-{thp}", place("--cpus", "0,2,3"), thp=thp))
        cases += [
            # The master thread is on the last node's CPU, so "all on node 0" cannot pass by chance.
            guest.Case(f"serial-{thp}", place("--placement", "serial", "--cpus", f"{last},0"), thp=thp),
            guest.Case(
                f"interleave-{thp}",
                place("--placement", "interleave", "--cpus", "0", "--sequence", str(SEQUENCE)),
                thp=thp,
            ),
            guest.Case(f"bind1-{thp}", place("--placement", "bind:1", "--cpus", "0"), thp=thp),
            guest.Case(
                f"preferred-last-{thp}",
                place("--placement", f"preferred:{nodes - 1}", "--cpus", "0"),
                thp=thp,
            ),
            guest.Case(
                f"preferred0-{thp}", place("--placement", "preferred:0", "--cpus", str(last)), thp=thp
            ),
        ]
    if name == "4node":
        cases.append(
            guest.Case(
                "interleave-1-3",
                place("--placement", "interleave:1,3", "--cpus", "0", "--sequence", str(SEQUENCE)),
                thp="never",
            )
        )
    # Automatic NUMA balancing (on by default in the guest) hides huge pages from smaps once it marks
    # them; with it off the huge pages of every array must show.
    cases.append(
        guest.Case(
            "thp-evidence",
            place("--cpus", "0,1" if name == "2node" else "0,1,2,3"),
            thp="always",
            numa_balancing=0,
        )
    )
    cases.append(guest.Case("balancing-on", [bin_path("bandwall-topo")], numa_balancing=1))
    cpus = "3,1" if name == "2node" else "3,0,2"
    cases.append(guest.Case("thread-cpus", place("--cpus", cpus, size=SMALL), thp="never"))
    cases.append(guest.Case("bad-node", place("--placement", f"bind:{nodes}", size=SMALL)))
    return cases


_results: dict[str, dict[str, guest.Outcome] | Exception] = {}


def results(name: str) -> dict[str, guest.Outcome]:
    """The outcomes of every case of the named guest, booted once per session."""

    def boot() -> dict[str, guest.Outcome]:
        nodes, cpn, mem, _ = TOPOLOGIES[name]
        cases = placement_cases(name) + launch_cases(name) + builtin_cases(name)
        return guest.boot(nodes, cpn, mem, cases + pin_cases.cases(nodes, cpn))

    return guest.once(_results, name, boot)


def skip_reason() -> str | None:
    return guest.unavailable()


def repo_path(*parts: str) -> Path:
    return guest.REPO.joinpath(*parts)


def guest_cpu_list(node: int, cpus_per_node: int) -> str:
    """The CPU list of a guest node as records print it (0-1, 2)."""
    lo, hi = node * cpus_per_node, (node + 1) * cpus_per_node - 1
    return str(lo) if lo == hi else f"{lo}-{hi}"
