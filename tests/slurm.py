"""A one-node Slurm cluster on localhost for the tests: munged, slurmctld and slurmd started in the
foreground as child processes, with their configuration, key, sockets, state, spool and logs in one
temporary folder, and stopped (by their process ids) when the session ends, even after a failure.

Ports are picked free at start-up, so several test sessions on one machine do not collide, and the
munge socket is private, so a system munged (if any) is neither needed nor disturbed. The node's
line is `slurmd -C`'s own (real CPU count, sockets, cores and memory). Jobs reach the cluster through
the environment `Cluster.env` gives (SLURM_CONF).
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
    node: str
    cpus: int
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def run(self, *argv: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        """A Slurm client command (srun, sinfo, ...) against this cluster."""
        full = dict(os.environ, **self.env, **(env or {}))
        return subprocess.run(list(argv), capture_output=True, text=True, env=full, timeout=timeout)

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


def write_config(root: Path, node: str, node_desc: str, ports: list[int]) -> Path:
    for sub in ("state", "spool", "log", "run"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    conf = root / "slurm.conf"
    conf.write_text(
        "\n".join(
            [
                "ClusterName=bandwalltest",
                f"SlurmctldHost={node}(127.0.0.1)",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"SlurmctldPort={ports[0]}",
                f"SlurmdPort={ports[1]}",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={root / 'run' / 'munge.sock'}",
                f"StateSaveLocation={root / 'state'}",
                f"SlurmdSpoolDir={root / 'spool'}",
                f"SlurmctldPidFile={root / 'run' / 'slurmctld.pid'}",
                f"SlurmdPidFile={root / 'run' / 'slurmd.pid'}",
                f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
                "SlurmctldDebug=info",
                "SlurmdDebug=info",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/affinity",
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
                f"{node_desc} NodeAddr=127.0.0.1 State=UNKNOWN",
                "PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO",
                "",
            ]
        )
    )
    # Read by slurmd where a cgroup plugin is configured; none is here, but keep it explicit.
    (root / "cgroup.conf").write_text("CgroupAutomount=no\nConstrainCores=no\nConstrainRAMSpace=no\n")
    return conf


def _spawn(cluster: Cluster, name: str, argv: list[str]) -> None:
    log = open(cluster.root / "log" / f"{name}.out", "wb")
    cluster.procs[name] = subprocess.Popen(
        argv,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, SLURM_CONF=str(cluster.conf)),
        start_new_session=True,
    )


def _wait_idle(cluster: Cluster) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    state = ""
    while time.monotonic() < deadline:
        for name, proc in cluster.procs.items():
            if proc.poll() is not None:
                raise SlurmError(f"{name} exited with {proc.returncode}: {_tail(cluster, name)}")
        out = cluster.run("sinfo", "-h", "-N", "-o", "%N %t", timeout=10)
        state = out.stdout.strip()
        if out.returncode == 0 and state.split()[-1:] == ["idle"]:
            return
        time.sleep(0.5)
    raise SlurmError(
        f"node not idle after {START_TIMEOUT_S} s (sinfo: {state!r}): {_tail(cluster, 'slurmd')}"
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
def cluster(root: Path):
    """Starts munged, slurmctld and slurmd under root; yields the Cluster; stops them on exit."""
    reason = unavailable()
    if reason:
        raise SlurmError(reason)
    node, cpus, desc = node_line()
    conf = write_config(root, node, desc, free_ports(2))
    c = Cluster(root=root, conf=conf, node=node, cpus=cpus)
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
        _spawn(c, "slurmd", ["slurmd", "-D", "-f", str(conf), "-N", node])
        _wait_idle(c)
        yield c
    finally:
        stop(c)
