"""A Slurm cluster on localhost for the tests: munged, slurmctld and one slurmd per node started in
the foreground as child processes, with their configuration, key, sockets, state, spool and logs in
one temporary folder, and stopped (by their process ids) when the session ends, even after a failure.

Ports are picked free at start-up, so several test sessions on one machine do not collide, and the
munge socket is private, so a system munged (if any) is neither needed nor disturbed. A node's line
is `slurmd -C`'s own (real CPU count, sockets, cores and memory). With several nodes, each is a
`slurmd -N nodeK` with its own port, spool, pid file and log (Slurm's %n), all on this one host and
all given its CPUs; a task prolog may give each node's tasks their own environment. Jobs reach the
cluster through the environment `Cluster.env` gives (SLURM_CONF).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import procs as proctree  # the module; `procs` below is a cluster's daemons

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd")
CLIENTS = ("sinfo", "srun", "scontrol")
START_TIMEOUT_S = 60


class SlurmError(RuntimeError):
    pass


def unavailable() -> str | None:
    """Why a one-node Slurm cannot run here, or None."""
    missing = [t for t in DAEMONS + CLIENTS if shutil.which(t) is None]
    if missing:
        return f"one-node Slurm needs {', '.join(missing)} (apt-get install slurm-wlm munge, as root)"
    if os.geteuid() != 0:
        return "one-node Slurm runs its daemons as root (SlurmUser=root); run the tests as root"
    return None


@dataclass
class Cluster:
    root: Path
    conf: Path
    nodes: list[str]
    cpus: int
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def node(self) -> str:
        """The first node (the only one of a one-node cluster)."""
        return self.nodes[0]

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        """A Slurm client command (srun, sinfo, ...) against this cluster."""
        full = dict(os.environ, **self.env, **(env or {}))
        return proctree.run(list(argv), text=True, env=full, timeout=timeout)

    def mpi_plugins(self) -> list[str]:
        """The MPI plugin types `srun --mpi=list` offers (e.g. none, pmi2, pmix): its indented lines."""
        out = self.run("srun", "--mpi=list")
        if out.returncode != 0:
            raise SlurmError(f"srun --mpi=list failed: {out.stderr.strip()}")
        return [ln.strip() for ln in out.stdout.splitlines() if ln[:1].isspace() and ln.strip()]

    def log(self, daemon: str) -> str:
        path = self.root / "log" / f"{daemon}.log"
        return path.read_text(errors="replace") if path.exists() else ""


def free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def node_line() -> tuple[str, int, str]:
    """`slurmd -C`'s description of this machine: (node name, CPUs, the NodeName=... line)."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("NodeName="))
    fields = dict(kv.split("=", 1) for kv in line.split())
    return fields["NodeName"], int(fields["CPUs"]), line


def node_lines(desc: str, names: list[str], ports: list[int]) -> list[str]:
    """slurm.conf's node lines: slurmd -C's description under each name; with several nodes on this
    one host, each with its own slurmd port."""
    if len(names) == 1:
        return [f"{desc} NodeAddr=127.0.0.1 State=UNKNOWN"]
    rest = desc.split(None, 1)[1]
    return [
        f"NodeName={n} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 Port={p} {rest} State=UNKNOWN"
        for n, p in zip(names, ports)
    ]


def write_config(
    root: Path,
    names: list[str],
    node_desc: str,
    ports: list[int],
    task_prolog: Path | None = None,
    own_cpus: bool = False,
) -> Path:
    for sub in ("state", "log", "run", "tmp", *(f"spool/{n}" for n in names)):
        (root / sub).mkdir(parents=True, exist_ok=True)
    conf = root / "slurm.conf"
    conf.write_text(
        "\n".join(
            [
                "ClusterName=bandwalltest",
                f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"SlurmctldPort={ports[0]}",
                f"SlurmdPort={ports[1]}",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={root / 'run' / 'munge.sock'}",
                f"StateSaveLocation={root / 'state'}",
                # The PMIx plugin's client folders go under TmpFS: this cluster's own, not /tmp.
                f"TmpFS={root / 'tmp'}",
                f"SlurmdSpoolDir={root / 'spool' / '%n'}",
                f"SlurmctldPidFile={root / 'run' / 'slurmctld.pid'}",
                f"SlurmdPidFile={root / 'run' / 'slurmd-%n.pid'}",
                f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={root / 'log' / 'slurmd-%n.log'}",
                "SlurmctldDebug=info",
                "SlurmdDebug=info",
                "ProctrackType=proctrack/linuxproc",
                # Nodes given their own CPUs are slurmd processes bound to them: their tasks inherit
                # that binding, which task/affinity would replace with the host's CPU numbers.
                f"TaskPlugin={'task/none' if own_cpus else 'task/affinity'}",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerType=sched/builtin",
                "MpiDefault=none",
                "ReturnToService=2",
                "AccountingStorageType=accounting_storage/none",
                "JobAcctGatherType=jobacct_gather/none",
                "JobCompType=jobcomp/none",
                "SlurmdTimeout=30",
                "InactiveLimit=0",
                "KillWait=5",
                "MinJobAge=10",
                *([f"TaskProlog={task_prolog}"] if task_prolog else []),
                *node_lines(node_desc, names, ports[2:]),
                "PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO",
                "",
            ]
        )
    )
    # Read by slurmd where a cgroup plugin is configured; none is here, but keep it explicit.
    (root / "cgroup.conf").write_text("CgroupAutomount=no\nConstrainCores=no\nConstrainRAMSpace=no\n")
    return conf


def _spawn(cluster: Cluster, name: str, argv: list[str], cpus: set[int] | None = None) -> None:
    log = open(cluster.root / "log" / f"{name}.out", "wb")
    cluster.procs[name] = subprocess.Popen(
        argv,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, SLURM_CONF=str(cluster.conf)),
        start_new_session=True,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )


def wait_idle(cluster: Cluster) -> None:
    """Wait until every node is idle (a job just ended leaves its node `comp` for a moment)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    state = ""
    while time.monotonic() < deadline:
        for name, proc in cluster.procs.items():
            if proc.poll() is not None:
                raise SlurmError(f"{name} exited with {proc.returncode}: {_tail(cluster, name)}")
        out = cluster.run("sinfo", "-h", "-N", "-o", "%N %t", timeout=10)
        state = out.stdout.strip()
        states = state.split()[1::2]
        if out.returncode == 0 and len(states) == len(cluster.nodes) and set(states) == {"idle"}:
            return
        time.sleep(0.5)
    raise SlurmError(
        f"nodes not idle after {START_TIMEOUT_S} s (sinfo: {state!r}): {_tail(cluster, 'slurmd-' + cluster.nodes[-1])}"
    )


def _tail(cluster: Cluster, name: str) -> str:
    text = cluster.log(name) or (cluster.root / "log" / f"{name}.out").read_text(errors="replace")
    return " | ".join(text.strip().splitlines()[-5:])


def stop(cluster: Cluster) -> None:
    """Stops the daemons this cluster started, last started first (TERM, then KILL after 10 s)."""
    for name in reversed(list(cluster.procs)):
        proc = cluster.procs[name]
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@contextmanager
def cluster(
    root: Path, nodes: int = 1, task_prolog: Path | None = None, node_cpus: dict[str, set[int]] | None = None
):
    """Starts munged, slurmctld and a slurmd per node under root (one node: this machine's name;
    several: node1..nodeN, each bound to its node_cpus when given); yields the Cluster; stops them
    on exit."""
    reason = unavailable()
    if reason:
        raise SlurmError(reason)
    node, cpus, desc = node_line()
    names = [node] if nodes == 1 else [f"node{k}" for k in range(1, nodes + 1)]
    conf = write_config(root, names, desc, free_ports(2 + len(names)), task_prolog, bool(node_cpus))
    c = Cluster(root=root, conf=conf, nodes=names, cpus=cpus)
    run = root / "run"
    key = root / "munge.key"
    try:
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
        key.chmod(0o600)
        munge = [
            "munged",
            "--foreground",
            "--force",
            f"--socket={run / 'munge.sock'}",
            f"--key-file={key}",
            f"--pid-file={run / 'munged.pid'}",
            f"--seed-file={run / 'munged.seed'}",
            f"--log-file={root / 'log' / 'munged.log'}",
        ]
        _spawn(c, "munged", munge)
        deadline = time.monotonic() + 10
        while not (run / "munge.sock").exists():
            if c.procs["munged"].poll() is not None or time.monotonic() > deadline:
                raise SlurmError(f"munged did not start: {_tail(c, 'munged')}")
            time.sleep(0.1)
        _spawn(c, "slurmctld", ["slurmctld", "-D", "-i", "-f", str(conf)])
        for n in names:
            _spawn(c, f"slurmd-{n}", ["slurmd", "-D", "-f", str(conf), "-N", n], (node_cpus or {}).get(n))
        wait_idle(c)
        yield c
    finally:
        stop(c)
