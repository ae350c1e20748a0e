"""Shared fixtures: running the `bandwall` command, making schema-valid records, and keeping every
test away from the user's own database."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys

import pytest

import procs

# A shell without job control starts background jobs (`cmd &`, nohup, some CI runners) with SIGINT
# ignored, and an ignored signal stays ignored in every child: the tests that press Ctrl-C on a
# bandwall command would then see it run on to its end. The tests send SIGINT as a terminal does,
# so they start from the terminal's disposition.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run(
    *args,
    env: dict | None = None,
    prefix: list[str] | None = None,
    timeout: float = 180,
    input: str | None = None,
) -> subprocess.CompletedProcess:
    """`bandwall ARGS...` in a subprocess of this Python (with env added to os.environ)."""
    full = dict(os.environ)
    full.update(env or {})
    return procs.run(
        [*(prefix or []), sys.executable, "-m", "bandwall", *map(str, args)],
        text=True,
        env=full,
        timeout=timeout,
        input=input,
    )


def run_in_process(args: list, capture, **env: str) -> tuple[int, str, str]:
    """`bandwall ARGS...` in this process, with env added to os.environ for the call (a subprocess
    per case would cost a Python start-up each); capture is pytest's capfd or capsys. Returns the
    exit code, stdout and stderr."""
    from bandwall import cli

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with pytest.raises(SystemExit) as e:
            cli.main([str(a) for a in args])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out, err = capture.readouterr()
    return e.value.code, out, err


@pytest.fixture
def run_bandwall():
    return run


# The CPUs this process may use: all of the machine's, or fewer under taskset, `srun -c 1` or a cgroup.
# A test that needs more CPUs, or particular ones, says so with the `cpus` marker and is skipped
# with the reason where they are missing; the others take their CPUs from here.
CPUS = sorted(os.sched_getaffinity(0))


# Where a user's state lives: no test reads or writes the user's own folders.
XDG = ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
_SESSION_STATE: list[str] = []


def _point_state_at(home: str) -> dict[str, str]:
    env = {var: os.path.join(home, var.lower()) for var in XDG}
    env.update(BANDWALL_DB=os.path.join(home, "bandwall.db"), BANDWALL_CACHE_DIR=os.path.join(home, "cache"))
    return env


def pytest_configure(config):
    # Before anything runs (module- and session-scoped fixtures too, which the per-test fixture below
    # does not reach): the session's own folders for what bandwall keeps between runs.
    import tempfile

    home = tempfile.mkdtemp(prefix="bandwall-tests-state-")
    _SESSION_STATE.append(home)
    if "BANDWALL_VM_SHARED" not in os.environ:  # pytest-xdist's workers inherit the controller's
        # the guests' outcomes shared by the workers of this run (tests/vm/guest.py)
        os.environ["BANDWALL_VM_SHARED"] = os.path.join(home, "guests")
        os.makedirs(os.environ["BANDWALL_VM_SHARED"])
    os.environ.update(_point_state_at(home))
    os.environ.pop("BANDWALL_MICROARCH", None)  # the `microarch` fixture forces rows where a test means to
    os.environ.pop("BANDWALL_CACHES", None)  # cache sizes too: the tests that hold them fixed say so
    os.environ.pop("BANDWALL_MAX_ISA", None)  # and a ceiling: the `isa_ceiling` fixture sets each in turn
    # The OpenMP runtimes' variables a module file or the user's shell set (and IBM's MP_BLIST, a
    # binding bandwall pin reads): the tests that mean a hostile environment set their own
    # (test_ompenv.py, test_pin.py); the others expect bandwall's own thread counts, and stderr
    # without the line that says which variables it ignored.
    for var in [v for v in os.environ if v.startswith(("OMP_", "GOMP_", "KMP_")) or v == "MP_BLIST"]:
        del os.environ[var]
    from bandwall.core import manifest

    manifest.manifest.cache_clear()
    config.addinivalue_line(
        "markers",
        "cpus(n=2, ids=()): needs n CPUs this process may use (and, with ids, those CPU numbers); skipped with the "
        "reason otherwise",
    )


def pytest_runtest_setup(item):
    for mark in item.iter_markers("cpus"):
        n = mark.args[0] if mark.args else mark.kwargs.get("n", 2)
        ids = tuple(mark.kwargs.get("ids", ()))
        missing = [c for c in ids if c not in CPUS]
        if len(CPUS) < n or missing:
            want = f"CPUs {', '.join(map(str, ids))}" if ids else f"{n} CPUs"
            pytest.skip(
                f"needs {want}; this process may use {', '.join(map(str, CPUS))} (taskset, srun -c or a cgroup)"
            )


def pytest_unconfigure(config):
    import shutil

    for home in _SESSION_STATE:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def _private_state(tmp_path_factory, monkeypatch):
    """Every test gets folders of its own for what bandwall keeps between runs: the database of
    records (without --db), the cache of measured variant choices, and the XDG folders; so no test
    reads the user's state, leaves any behind, or depends on what an earlier test cached."""
    for var, value in _point_state_at(str(tmp_path_factory.mktemp("state"))).items():
        monkeypatch.setenv(var, value)
    # A row forced by the caller's shell would make every test run one micro-architecture's branch:
    # the tests that mean to force one say so (the `microarch` fixture).
    monkeypatch.delenv("BANDWALL_MICROARCH", raising=False)
    monkeypatch.delenv("BANDWALL_CACHES", raising=False)
    monkeypatch.delenv("BANDWALL_MAX_ISA", raising=False)


def microarchs() -> list[str]:
    """Every micro-architecture of the native machine models (BANDWALL_MICROARCH's names); none when
    the native executables are not built (the tests that need them then fail on their own)."""
    from bandwall.core import manifest
    from bandwall.core.errors import BandwallError

    try:
        return list(manifest.manifest()["isa"]["microarchs"])
    except BandwallError:
        return []


@pytest.fixture(params=["this CPU", *microarchs(), "none"])
def microarch(request, monkeypatch) -> str | None:
    """Each micro-architecture's branch on whatever CPU runs the tests: BANDWALL_MICROARCH forces the
    machine-model row (and with it the table of measured choices and the in-core models) of every
    row, "none" a CPU no row knows; "this CPU" leaves the real one. The forced name, or None."""
    if request.param == "this CPU":
        return None
    monkeypatch.setenv("BANDWALL_MICROARCH", request.param)
    return request.param


def ceilings() -> list[str]:
    """Every dispatch ceiling this CPU allows (the variants it executes, widest first, whatever
    BANDWALL_MAX_ISA says); none when the native executables are not built."""
    from bandwall.core import manifest
    from bandwall.core.errors import BandwallError

    try:
        return list(manifest.manifest()["isa"]["cpu_offered"])
    except BandwallError:
        return []


@pytest.fixture(params=ceilings() or ["generic"])
def isa_ceiling(request, monkeypatch):
    """Each variant's branch on whatever CPU runs the tests: BANDWALL_MAX_ISA caps every dispatching
    kernel at each variant this CPU executes in turn (the widest is the same as no ceiling). The
    ceiling's name."""
    from bandwall.core import manifest

    monkeypatch.setenv("BANDWALL_MAX_ISA", request.param)
    manifest.manifest.cache_clear()
    yield request.param
    manifest.manifest.cache_clear()


SAMPLE_PROVENANCE = {
    "host": "testhost",
    "cpu_model": "Test CPU",
    "topology_digest": "0123456789abcdef",
    "compiler": "g++ 12",
    "flags": "-O3",
    "git_revision": "abcdef123456",
    "date": "2026-01-02T03:04:05Z",
    "threads": 2,
    "cpus": "0-1",
    "binding": "compact",
    "placement": "first-touch",
    "sizes": {"a": 1 << 20, "b": 1 << 20, "c": 1 << 20},
    "repetitions": 3,
}


@pytest.fixture
def make_record():
    """make_record(tool="stream", result={...}, passed=True, **provenance) -> a schema-valid record."""

    def make(
        tool: str = "stream",
        result: dict | None = None,
        passed: bool = True,
        config: dict | None = None,
        **provenance,
    ) -> dict:
        prov = copy.deepcopy(SAMPLE_PROVENANCE)
        prov.update(provenance)
        return {
            "schema_version": 1,
            "tool": tool,
            "config": config or {"kernel": "triad"},
            "result": result if result is not None else {"best_GBps": 30.0, "median_GBps": 28.0},
            "validation": {"checked": True, "passed": passed, "method": "test record"},
            "provenance": prov,
        }

    return make


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    """A one-node Slurm (munged, slurmctld, slurmd on localhost) for the whole session; its `env`
    (SLURM_CONF) points srun/sinfo at it. Skips where slurm-wlm or munge is absent, except in CI
    (CI=true), where it fails: a CI run that skipped it would prove nothing about srun."""
    import slurm

    reason = slurm.unavailable()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    with slurm.cluster(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def real_node(tmp_path_factory):
    """This machine's node record from `bandwall survey --local --short`, measured once a session."""
    import json

    from bandwall.core import records

    proc = run("survey", "--local", "--short", "--no-store", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return records.validate(json.loads(proc.stdout))


@pytest.fixture
def fake(monkeypatch):
    """fake(section) registers it as report section 'fake' for this test (tests/report_fakes.py)."""
    from bandwall.report import load_sections, registry

    load_sections()

    def add(section):
        monkeypatch.setitem(registry._items, "fake", section)
        return section

    return add
