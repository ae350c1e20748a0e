"""Pinning cases for the 2-node and 4-node guests, booted with the placement batch (one boot per
topology): seed 004's MP_BLIST=1,0 preloaded by hand and under bandwall-pin, compact / scatter / spread /
node:N from the topology, each for OpenMP programs built with gcc (libgomp), g++ (C++, libgomp),
clang (LLVM libomp) and gfortran. The probes print the CPU each OpenMP thread ended on; bandwall-pin's record says where each
thread was seen while it ran.
"""

from __future__ import annotations

from vm import guest

PROBES = {
    "gcc": "bandwall-pin-probe",
    "cxx": "pin-probe-cxx",
    "clang": "pin-probe-clang",
    "fortran": "pin-probe-fortran",
}


def bin_path(name: str) -> str:
    return str(guest.BIN / name)


def probes() -> dict[str, str]:
    """The probe programs present in the guest build (clang's and gfortran's need their compilers)."""
    return {k: v for k, v in PROBES.items() if (guest.BIN / v).exists()}


def probe_argv(kind: str) -> list[str]:
    argv = [bin_path(PROBES[kind])]
    return argv + (["3", "2000"] if kind != "fortran" else [])


def policy_order(policy: str, nodes: int, cpn: int, threads: int) -> list[int]:
    """Where the topology says each thread goes (CPUs are numbered node by node in the guests)."""
    every = list(range(nodes * cpn))
    if policy == "compact":
        return every[:threads]
    if policy == "scatter":
        return [n * cpn + c for c in range(cpn) for n in range(nodes)][:threads]
    if policy == "spread":
        return [every[i * len(every) // threads] for i in range(threads)]
    if policy.startswith("node:"):
        node = int(policy[5:])
        return every[node * cpn : (node + 1) * cpn][:threads]
    raise ValueError(policy)


def policies(nodes: int, cpn: int) -> dict[str, int]:
    """Policy -> thread count for the cases."""
    out = {"compact": nodes * cpn, "scatter": nodes * cpn, "spread": 2}
    if cpn > 1:
        out[f"node:{nodes - 1}"] = cpn
    return out


def cases(nodes: int, cpn: int) -> list[guest.Case]:
    """MP_BLIST=1,0 by hand and under bandwall-pin for every probe; the policies with the gcc probe
    (which runtime runs the threads does not change where the list puts them). Few cases: each one
    starts programs in an emulated machine."""
    lib = bin_path("libbandwall-pin.so")
    pin = bin_path("bandwall-pin")
    out: list[guest.Case] = []
    for kind in probes():
        out.append(
            guest.Case(
                f"pin-hand-{kind}",
                probe_argv(kind),
                env={"LD_PRELOAD": lib, "MP_BIND": "yes", "MP_BLIST": "1,0"},
            )
        )
        out.append(
            guest.Case(
                f"pin-blist-{kind}",
                [pin, "--report", "--interval", "5", "--", *probe_argv(kind)],
                env={"MP_BLIST": "1,0", "OMP_PROC_BIND": "true", "OMP_PLACES": "cores"},
            )
        )
        for policy, threads in (policies(nodes, cpn) if kind == "gcc" else {}).items():
            out.append(
                guest.Case(
                    f"pin-{policy}-{kind}",
                    [pin, "--policy", policy, "--threads", str(threads), "--report", "--interval", "5", "--"]
                    + probe_argv(kind),
                )
            )
    return out
