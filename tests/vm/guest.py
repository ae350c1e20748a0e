"""Running batches of commands in a simulated NUMA guest (tests/vm/numa-vm, QEMU software emulation).

A batch is a list of Case: each runs one command inside the guest (with transparent huge pages set
as asked) and yields one JSON line: its exit code, the last line of its stderr and the JSON record it
printed. One boot runs the whole batch. Executables come from the set-up's own build (build/py, whose
executables are the installed ones): its baseline is portable (x86-64-v2) and its wider kernels are
chosen at run time, so the emulated CPU, which lacks the host's newest vector extensions, runs them
as any older node would. Only a build made with BANDWALL_ARCH=native gets a second, portable one
(build/vm) for the guest.
Timings inside the guest mean nothing; placements and CPU numbers do.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NUMA_VM = HERE / "numa-vm"
SETUP_BUILD = REPO / "build" / "py"


def _portable(build_dir: Path) -> bool:
    """Whether a configured build's baseline is the portable one (its CMake cache says x86-64-v2)."""
    cache = build_dir / "CMakeCache.txt"
    return cache.exists() and "BANDWALL_ARCH:STRING=x86-64-v2" in cache.read_text()


BUILD = Path(
    os.environ.get("BANDWALL_VM_BUILD") or (SETUP_BUILD if _portable(SETUP_BUILD) else REPO / "build" / "vm")
)
BIN = BUILD / "bin"
# Executables the guest batches use; the optional ones only when their sources are in the tree.
TARGETS = ["bandwall-topo", "bandwall-place", "bandwall-launch"]
OPTIONAL_TARGETS = {
    "bandwall-stream": "native/stream",
    "bandwall-iso3dfd": "native/iso3dfd",
    "bandwall-pin": "native/pin",
    "bandwall-pin-preload": "native/pin",
    "bandwall-pin-probe": "native/pin",
    "pin-probes": "native/pin",
    "pin-probe-cxx": "native/pin",
}
BOOT_TIMEOUT_S = 480  # a loaded 2-core host runs the whole batch in 3-5 minutes
MARK = "@@case "


@dataclass
class Case:
    name: str
    argv: list[str]
    thp: str | None = None  # "always", "madvise" or "never" before the command
    numa_balancing: int | None = None  # kernel.numa_balancing before the command (None: as it is)
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    exit: int
    stderr: str
    record: dict | None


def unavailable() -> str | None:
    """Why guests cannot run here, or None. As root, installs qemu-system-x86 and cpio first."""
    missing = [t for t in ("qemu-system-x86_64", "cpio") if shutil.which(t) is None]
    if missing and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        cmd = ["apt-get", "install", "-y", "-q", "qemu-system-x86", "cpio"]
        if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
            subprocess.run(cmd, env=env, capture_output=True)
        missing = [t for t in ("qemu-system-x86_64", "cpio") if shutil.which(t) is None]
    if missing:
        return (
            f"simulated NUMA guest needs {', '.join(missing)} (apt-get install qemu-system-x86 cpio, as root)"
        )
    return None


def targets() -> list[str]:
    return TARGETS + [t for t, src in OPTIONAL_TARGETS.items() if (REPO / src / "CMakeLists.txt").exists()]


def build() -> Path:
    """Configures (once) and builds the guest executables; returns their folder."""
    if not (BUILD / "build.ninja").exists():
        _run(
            [
                "cmake",
                "-S",
                str(REPO),
                "-B",
                str(BUILD),
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DBANDWALL_ARCH=x86-64-v2",
                "-DBANDWALL_TESTS=OFF",
            ],
            "configuring the guest build",
        )
    _run(["cmake", "--build", str(BUILD), "--target", *targets()], "building the guest executables")
    return BIN


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{what} failed:\n{tail}")


def script(cases: list[Case]) -> str:
    """The guest's shell script: every case in turn, one JSON line each, marked for the host."""
    lines = [
        "#!/bin/sh",
        "export OMP_WAIT_POLICY=passive",
        # LLVM's OpenMP runtime registers itself in /dev/shm (and aborts without it), as on any real system.
        "/bin/busybox mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm",
        'thp() { [ -w /sys/kernel/mm/transparent_hugepage/enabled ] && echo "$1" > /sys/kernel/mm/transparent_hugepage/enabled; }',
        "run_case() {",
        "  name=$1; shift",
        '  "$@" > /tmp/case.out 2> /tmp/case.err',
        "  rc=$?",
        "  rec=$(grep '^{' /tmp/case.out | tail -1)",
        "  err=$(grep -v '^$' /tmp/case.err | tail -1 | tr -d '\\t\\r' | sed 's/\\\\/\\\\\\\\/g; s/\"/\\\\\"/g')",
        f'  printf \'{MARK}{{"case":"%s","exit":%s,"stderr":"%s","record":%s}}\\n\' "$name" "$rc" "$err" "${{rec:-null}}"',
        "}",
    ]
    for c in cases:
        if c.thp:
            lines.append(f"thp {shlex.quote(c.thp)}")
        if c.numa_balancing is not None:
            lines.append(f"echo {int(c.numa_balancing)} > /proc/sys/kernel/numa_balancing")
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in c.env.items())
        lines.append(
            f"run_case {shlex.quote(c.name)} {'env ' + env + ' ' if env else ''}{shlex.join(c.argv)}"
        )
    return "\n".join(lines) + "\n"


def boot(
    nodes: int, cpus_per_node: int, mem_mib: int, cases: list[Case], attempts: int = 2, cpu: str = "max"
) -> dict[str, Outcome]:
    """Boots one guest of the emulated CPU model cpu (QEMU's: max has AVX2 and no AVX-512,
    Nehalem-v2 no AVX at all), runs the batch, returns each case's outcome by name.

    A guest that hangs (software emulation on a loaded host occasionally stalls a virtual CPU) is
    booted once more; a guest that never finishes raises RuntimeError with its last lines.
    """
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError("case names must be unique")
    bin_dir = build()
    with tempfile.TemporaryDirectory(prefix="bandwall-vm-") as tmp:
        path = Path(tmp) / "guest.sh"
        path.write_text(script(cases))
        path.chmod(0o755)
        cmd = [
            str(NUMA_VM),
            "--nodes",
            str(nodes),
            "--cpus-per-node",
            str(cpus_per_node),
            "--mem-per-node",
            str(mem_mib),
            "--cpu",
            cpu,
            "--add",
            str(bin_dir),
            "--",
            str(path),
        ]
        env = dict(os.environ, NUMA_VM_TIMEOUT=str(BOOT_TIMEOUT_S))
        for _attempt in range(attempts):
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if proc.returncode != 3:  # 3: the guest did not finish
                break
        if proc.returncode != 0:
            raise RuntimeError(f"guest run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    out: dict[str, Outcome] = {}
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            d = json.loads(line[len(MARK) :])
            out[d["case"]] = Outcome(d["exit"], d["stderr"], d["record"])
    lost = [n for n in names if n not in out]
    if lost:
        raise RuntimeError(f"guest printed nothing for {lost}; its output ends:\n{proc.stdout[-2000:]}")
    return out


SHARED = "BANDWALL_VM_SHARED"  # the folder pytest-xdist's workers share (tests/conftest.py makes it)


def _shared_dir() -> Path | None:
    """Under pytest-xdist, the folder the workers of one run share: a guest booted by one worker
    serves the others, and one guest runs at a time (each takes both CPUs)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not os.environ.get(SHARED):
        return None
    return Path(os.environ[SHARED])


def _across_workers(key: str, run: Callable[[], dict[str, Outcome]]) -> dict[str, Outcome]:
    """run() once per key for the whole run, whichever worker asks first; its outcomes (or its
    error) kept in the shared folder for the others."""
    shared = _shared_dir()
    if shared is None:
        return run()
    done = shared / f"{key}.json"
    with open(shared / "boot.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one guest at a time; the others wait for it
        if not done.exists():
            try:
                doc = {"outcomes": {k: dataclasses.asdict(v) for k, v in run().items()}}
            except Exception as e:  # noqa: BLE001 - kept for the other workers, raised below
                doc = {"error": str(e)}
            done.write_text(json.dumps(doc))
    doc = json.loads(done.read_text())
    if "error" in doc:
        raise RuntimeError(doc["error"])
    return {k: Outcome(**v) for k, v in doc["outcomes"].items()}


def once(cache: dict, key: str, run: Callable[[], dict[str, Outcome]]) -> dict[str, Outcome]:
    """A guest's outcomes, built and booted by run() once per key and session (across pytest-xdist's
    workers too); a failed build or boot is remembered too, so the tests that need that guest fail
    at once instead of booting again."""
    if key not in cache:
        try:

            def built_and_run() -> dict[str, Outcome]:
                build()
                return run()

            cache[key] = _across_workers(key, built_and_run)
        except Exception as e:  # noqa: BLE001 - remembered and re-raised for every test of this guest
            cache[key] = e
    got = cache[key]
    if isinstance(got, Exception):
        raise RuntimeError(f"the {key} guest could not run: {got}")
    return got
