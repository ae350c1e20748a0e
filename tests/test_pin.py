"""bandwall pin and libbandwall-pin.so on this machine: seed 004's variables under the launcher and
preloaded by hand, programs of every runtime (GNU and LLVM OpenMP, gfortran, plain pthreads), a hostile
OpenMP environment, the skip mask, the spin mapping, the thread report, --compare's runs, and bad
input (--compare's verdict from constructed rounds: test_pin_verdict.py). Multi-node placement is proven in the guests (test_vm_pin.py)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bandwall.core import native
from bandwall.core.errors import UsageError
from bandwall.core.fom import Fom
from bandwall.pinning import pin as pinmod
from conftest import run_in_process

REPO = Path(__file__).resolve().parents[1]
PROBE_DIR = REPO / "build" / "py" / "bin"
CPUS = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 CPUs this process may use")
HOSTILE = {
    "OMP_PROC_BIND": "true",
    "OMP_PLACES": "cores",
    "GOMP_CPU_AFFINITY": "0",
    "KMP_AFFINITY": "compact",
}
PIN_VARS = (
    "MP_BIND",
    "MP_BLIST",
    "MP_SPIN",
    "BANDWALL_PIN_CPUS",
    "BANDWALL_PIN_SKIP",
    "BANDWALL_PIN_SPIN",
    "OMP_NUM_THREADS",
    *HOSTILE,
)


def probe(kind: str) -> str:
    """Path of a probe program: gcc (installed), clang, fortran or pthreads (from the build tree)."""
    if kind == "gcc":
        return native.executable("bandwall-pin-probe")
    path = PROBE_DIR / f"pin-probe-{kind}"
    if not path.exists():
        pytest.skip(f"{path.name} was not built (its compiler is absent)")
    return str(path)


OPENMP_PROBES = ["gcc", "cxx", "clang", "fortran"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PIN_VARS}
    env.update(extra)
    return env


def probe_args(kind: str) -> list[str]:
    return [probe(kind)] + (["5", "20000"] if kind in ("gcc", "cxx", "clang") else [])


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    """No pinning or OpenMP variable of the calling environment leaks into a case."""
    for k in PIN_VARS:
        monkeypatch.delenv(k, raising=False)


def pin_record(args: list[str], **env: str) -> dict:
    """The record of `bandwall pin ARGS` through the domain layer (CPU list options as keywords)."""
    split = args.index("--")
    opts: dict = {}
    it = iter(args[:split])
    for a in it:
        key = a[2:].replace("-", "_")
        opts[key] = True if key == "report" else next(it)
    if "threads" in opts:
        opts["threads"] = int(opts["threads"])
    return pinmod.pin(args[split + 1 :], env=env, **opts)


def program_json(rec_or_stdout) -> dict:
    text = rec_or_stdout["result"]["stdout"] if isinstance(rec_or_stdout, dict) else rec_or_stdout
    return json.loads([ln for ln in text.splitlines() if ln.startswith("{")][-1])


def library() -> str:
    return str(Path(native.executable("bandwall-pin")).parent / "libbandwall-pin.so")


def by_hand(argv: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, capture_output=True, text=True, env=clean_env(LD_PRELOAD=library(), **env), timeout=60
    )


def threads_by_index(rec: dict) -> dict[int, dict]:
    return {t["index"]: t for t in rec["result"]["threads"] if t["index"] is not None}


@two_cpus
@pytest.mark.parametrize("hostile", [False, True], ids=["plain-env", "hostile-env"])
@pytest.mark.parametrize("kind", OPENMP_PROBES)
def test_mp_blist_preloaded_by_hand(kind, hostile):
    env = dict(HOSTILE) if hostile else {}
    proc = by_hand(probe_args(kind), MP_BIND="yes", MP_BLIST="1,0", **env)
    assert proc.returncode == 0, proc.stderr
    assert program_json(proc.stdout)["thread_cpus"] == [1, 0]
    assert proc.stderr == ""  # no runtime warnings about conflicting variables


@two_cpus
@pytest.mark.parametrize("blist", ["1,0", "0,1"])
def test_a_program_behind_a_shell_wrapper_is_pinned_too(blist):
    # The shell's main thread is pinned to the list's first CPU and the program it starts inherits
    # that one CPU; the program still takes the whole list (the CPUs the wrapper started with).
    proc = by_hand(["/bin/sh", "-c", '"$0" "$@"; exit $?', *probe_args("gcc")], MP_BIND="yes", MP_BLIST=blist)
    assert proc.returncode == 0, proc.stderr
    assert program_json(proc.stdout)["thread_cpus"] == [int(c) for c in blist.split(",")]


@two_cpus
@pytest.mark.parametrize("blist", ["0,0", "1,1"])
def test_repeated_cpus_put_every_thread_on_one(blist):
    proc = by_hand(probe_args("gcc"), MP_BIND="y", MP_BLIST=blist)
    assert proc.returncode == 0, proc.stderr
    cpu = int(blist[0])
    assert program_json(proc.stdout)["thread_cpus"] == [cpu, cpu]


@two_cpus
def test_mp_bind_without_list_takes_the_allowed_cpus_in_order():
    proc = by_hand(probe_args("gcc"), MP_BIND="yes")
    assert program_json(proc.stdout)["thread_cpus"] == CPUS[:2]


@two_cpus
@pytest.mark.parametrize("hostile", [False, True], ids=["plain-env", "hostile-env"])
@pytest.mark.parametrize("kind", OPENMP_PROBES)
def test_report_shows_each_thread_on_its_cpu(kind, hostile):
    env = dict(HOSTILE) if hostile else {}
    rec = pin_record(["--report", "--", *probe_args(kind)], MP_BLIST="1,0", **env)
    assert rec["config"]["source"] == "MP_BLIST"
    assert program_json(rec)["thread_cpus"] == [1, 0]
    by_index = threads_by_index(rec)
    for index, cpu in ((0, 1), (1, 0)):
        t = by_index[index]
        assert t["cpu_intended"] == cpu
        assert t["cpus_seen"] == {str(cpu): 1.0}
        assert t["samples"] >= 1
        assert t["voluntary_switches"] is not None and t["involuntary_switches"] is not None
    assert rec["validation"]["checked"] is True and rec["validation"]["passed"] is True
    # What the runtimes were told, and what of the user's environment was replaced.
    told = rec["config"]["openmp_env"]
    assert told["KMP_AFFINITY"] == "disabled" and told["OMP_PROC_BIND"] is None
    if hostile:
        assert rec["config"]["user_openmp_env"]["OMP_PROC_BIND"] == "true"
        # provenance says what the program got of each of the user's variables
        prov = rec["provenance"]["openmp_env"]
        assert set(prov) == set(HOSTILE)
        assert prov["OMP_PROC_BIND"]["action"].startswith("unset for the program")
        assert prov["KMP_AFFINITY"]["action"].startswith("set to 'disabled' for the program")
    else:
        assert rec["provenance"]["openmp_env"] == {}


@two_cpus
def test_users_openmp_variables_reach_the_program_under_every_policy():
    # a nested OMP_NUM_THREADS is the user's business, not a usage error of compact
    rec = pin_record(
        ["--bind", "compact", "--", "sh", "-c", 'echo "$OMP_NUM_THREADS/$OMP_SCHEDULE"'],
        OMP_NUM_THREADS="2,1",
        OMP_SCHEDULE="static",
    )
    assert rec["result"]["stdout"].strip() == "2,1/static"
    assert rec["provenance"]["openmp_env"]["OMP_SCHEDULE"]["action"].startswith(
        "passed to the launched command"
    )


@two_cpus
def test_cpu_list_option_and_policies():
    rec = pin_record(["--cpus", "1,0", "--report", "--", *probe_args("gcc")])
    assert rec["config"]["policy"] == "list" and rec["config"]["cpus"] == [1, 0]
    assert program_json(rec)["thread_cpus"] == [1, 0]
    for policy in ("compact", "scatter", "spread"):
        rec = pin_record(["--bind", policy, "--", *probe_args("gcc")])
        assert rec["config"]["cpus"] == CPUS
        assert program_json(rec)["thread_cpus"] == CPUS[:2]


@two_cpus
def test_unbound_threads_have_no_intended_cpu():
    rec = pin_record(["--bind", "none", "--report", "--", *probe_args("gcc")])
    assert rec["config"]["mode"] == "free" and rec["config"]["cpus"] == []
    assert rec["result"]["threads"]
    for t in rec["result"]["threads"]:
        assert t["cpu_intended"] is None
        assert math.isclose(sum(t["cpus_seen"].values()), 1.0)


@two_cpus
def test_skip_mask_leaves_the_first_created_thread_unpinned():
    rec = pin_record(["--cpus", "1,0", "--skip", "0x1", "--report", "--", probe("pthreads"), "3"])
    cpus = program_json(rec)["thread_cpus"]  # main, created 0, 1, 2
    assert cpus[0] == 1 and cpus[2] == 0 and cpus[3] == 1  # created 1 is index 1, created 2 wraps
    skipped = [t for t in rec["result"]["threads"] if t["skipped"]]
    assert len(skipped) == 1 and skipped[0]["cpu_intended"] is None
    assert sorted(threads_by_index(rec)) == [0, 1, 2]


@two_cpus
def test_plain_pthreads_follow_the_list():
    proc = by_hand([probe("pthreads"), "3"], MP_BIND="yes", MP_BLIST="1,0")
    assert program_json(proc.stdout)["thread_cpus"] == [1, 0, 1, 0]


@pytest.mark.parametrize(
    "spin, expect",
    [
        ("-1", {"OMP_WAIT_POLICY": "active", "GOMP_SPINCOUNT": "infinity", "KMP_BLOCKTIME": "infinite"}),
        ("passive", {"OMP_WAIT_POLICY": "passive", "GOMP_SPINCOUNT": "0", "KMP_BLOCKTIME": "0"}),
        ("0", {"OMP_WAIT_POLICY": "passive", "GOMP_SPINCOUNT": "0", "KMP_BLOCKTIME": "0"}),
        ("5000000", {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "5000000"}),
        (None, {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "1000000"}),
    ],
)
def test_spin_maps_onto_the_runtime_variables(spin, expect):
    args = (["--spin", spin] if spin else []) + ["--", "true"]
    rec = pin_record(args)
    told = rec["config"]["openmp_env"]
    for k, v in expect.items():
        assert told[k] == v
    if told["GOMP_SPINCOUNT"] not in ("0", "infinity"):
        cycles = int(told["GOMP_SPINCOUNT"])
        assert int(told["KMP_BLOCKTIME"]) == max(1, math.ceil(cycles / (rec["config"]["cpu_mhz"] * 1000)))


def test_mp_spin_by_hand_reaches_gnu_openmp():
    """GNU OpenMP reads GOMP_SPINCOUNT before the library's constructor: the re-execution makes it see it."""
    proc = by_hand(["sh", "-c", "echo $GOMP_SPINCOUNT $OMP_WAIT_POLICY $KMP_BLOCKTIME"], MP_SPIN="-1")
    assert proc.stdout.split() == ["infinity", "active", "infinite"]


@two_cpus
def test_compare_runs_three_modes_scored_by_the_regex():
    fom = Fom.from_regex(r"time ([0-9.]+) s", lower_is_better=True)
    rec = pinmod.compare([probe("gcc"), "20", "20000"], fom, rounds=1)
    modes = rec["result"]["modes"]
    assert set(modes) == {"bound", "one-cpu", "unbound"}
    assert modes["bound"]["cpus"] == CPUS and modes["one-cpu"]["cpus"] == [CPUS[0]]
    assert modes["unbound"]["cpus"] == []
    assert all(m["value"] > 0 for m in modes.values())
    assert rec["result"]["threads"] == len(CPUS)


@two_cpus
def test_compare_scores_a_bandwall_record_and_passes_the_skip_mask(run_bandwall):
    stream = native.executable("bandwall-stream")
    p = run_bandwall(
        "pin", "--compare", "--rounds", "1", "--skip", "0x0", "--fom", "record:result.best_GBps",
        "--format", "json", "--no-store", "--", stream, "--kernel", "triad", "--size", "4M", "--reps", "2",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["result"]["fom"] == "result.best_GBps of the record"
    assert rec["config"]["skip_mask"] == "0x0"
    assert all(m["value"] > 0 for m in rec["result"]["modes"].values())


@pytest.mark.parametrize(
    "fom, lower, fragment",
    [("record:", False, "name a field"), ("record:result..x", False, "name a field"),
     ("record:result.best_GBps", True, "--lower-is-better goes with")],
)  # fmt: skip
def test_record_fom_bad_values(fom, lower, fragment):
    with pytest.raises(UsageError, match=fragment):
        Fom.parse(fom, lower)


@pytest.fixture(scope="module")
def static_program(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("static")
    src = d / "hello.c"
    src.write_text('#include <stdio.h>\nint main(void) { puts("static hello"); return 0; }\n')
    exe = d / "hello-static"
    cc = shutil.which("gcc")
    if not cc or subprocess.run([cc, "-static", str(src), "-o", str(exe)], capture_output=True).returncode:
        pytest.skip("gcc -static is not available")
    return str(exe)


def test_static_program_falls_back_to_binding_the_process(static_program, capsys):
    cpu = str(CPUS[0])
    code, out, err = run_in_process(
        ["pin", "--no-store", "--format", "json", "--cpus", cpu, "--", static_program], capsys
    )
    assert code == 0, err
    assert "statically linked" in err and f"binding the whole process to CPUs {cpu}" in err
    rec = json.loads(out)
    assert rec["config"]["mode"] == "process" and rec["config"]["static"] is True


BAD = [
    # (arguments, environment, exit code, message fragment)
    (["--bind", "wobble", "--", "true"], {}, 2, "unknown binding 'wobble'"),
    (["--bind", "node:x", "--", "true"], {}, 2, "binding 'node:x' needs a NUMA node number"),
    (["--cpus", f"{CPUS[0]},4096", "--", "true"], {}, 2, "4096"),
    (["--compare", "--bind", "compact", "--", "true"], {}, 2, "leave out --cpus, --bind and --report"),
    (["--", "/nonexistent/program"], {}, 2, "does not exist"),
    (["--", "/etc/hostname"], {}, 2, "is not an executable"),
    (["--", "no-such-command-anywhere"], {}, 2, "not found in PATH"),
    ([], {}, 2, "no command given"),
    (["--spin", "abc", "--", "true"], {}, 2, "BANDWALL_PIN_SPIN='abc'"),
    (["--skip", "zz", "--", "true"], {}, 2, "BANDWALL_PIN_SKIP='zz'"),
    (["--", "true"], {"MP_BLIST": "0,,1"}, 2, "MP_BLIST='0,,1': empty item at position 2"),
    (
        ["--", "true"],
        {"MP_BLIST": f"{CPUS[0]},99"},
        2,
        f"MP_BLIST='{CPUS[0]},99': CPU 99 is not one this process may run on",
    ),
    (["--", "true"], {"MP_SPIN": "abc"}, 2, "MP_SPIN='abc'"),
    (["--", "true"], {"MP_BIND": "maybe"}, 2, "MP_BIND='maybe': expected yes, y, no or n"),
    (["--", "false"], {}, 1, "'false' exited with code 1"),
    (["--fom", "x", "--", "true"], {}, 2, "go with --compare"),
    (["--compare", "--cpus", "0", "--", "true"], {}, 2, "chooses the CPUs itself"),
]


@pytest.mark.parametrize("args, env, code, fragment", BAD)
def test_bad_input(args, env, code, fragment, capsys):
    got, _out, err = run_in_process(["pin", "--no-store", *args], capsys, **env)
    assert got == code, err
    lines = [ln for ln in err.splitlines() if ln.startswith("bandwall: error:")]
    assert len(lines) == 1 and fragment in lines[0], err
    assert "Traceback" not in err


BAD_BY_HAND = [
    ({"MP_BIND": "yes", "MP_BLIST": "0,,1"}, "MP_BLIST='0,,1': empty item at position 2"),
    ({"MP_BIND": "yes", "MP_BLIST": f"{CPUS[0]},99"}, f"MP_BLIST='{CPUS[0]},99': CPU 99"),
    ({"MP_SPIN": "abc"}, "MP_SPIN='abc'"),
    ({"MP_BIND": "maybe"}, "MP_BIND='maybe'"),
    ({"MP_BLIST": ""}, "MP_BLIST is empty"),
]


@pytest.mark.parametrize("env, fragment", BAD_BY_HAND)
def test_bad_variables_stop_the_program_before_it_starts(env, fragment):
    proc = by_hand(["sh", "-c", "echo started"], **env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("libbandwall-pin: error: ")
    assert fragment in proc.stderr


def test_pinning_report_section_renders_both_spin_policies():
    from bandwall.report.sections import pinning

    def result(bound: float, one: float, unbound: float) -> dict:
        modes = {
            name: {"title": name, "cpus": [], "value": v, "rounds": [v], "wall_s": [1.0]}
            for name, v in (("bound", bound), ("one-cpu", one), ("unbound", unbound))
        }
        return {
            "modes": modes,
            "threads": 2,
            "fom": "time",
            "fom_unit": "1/s",
            "bound_over_one_cpu": bound / one,
            "bound_over_unbound": bound / unbound if unbound else None,
        }

    data = {"passive": result(2.0, 1.0, 1.5), "spin": result(2.0, 0.1, 0.0)}
    page = pinning.PinningSection().html(None, data)
    assert "2.00x" in page and "20.00x" in page and "one-cpu" in page
    assert "n/a" not in pinning.summary(data)  # the spin run's unbound ratio is not quoted
    assert [r[0] for r in pinning.rows(data["passive"])] == ["bound", "one-cpu", "unbound"]


@two_cpus
def test_thread_report_fits_the_schema_and_a_broken_one_does_not():
    from bandwall.core import records

    rec = pin_record(["--report", "--", *probe_args("gcc")], MP_BLIST="1,0")
    assert records.problems(rec) == []
    broken = json.loads(json.dumps(rec))
    broken["result"]["threads"][0]["cpus_seen"] = {"1": 1.5}  # a share above 1
    assert records.problems(broken)
    broken = json.loads(json.dumps(rec))
    del broken["result"]["threads"][1]["involuntary_switches"]
    assert records.problems(broken)


@two_cpus
def test_likwid_domain_list_places_the_threads():
    topo = native.run_record("bandwall-topo", [])
    cores = [core["cpus"][0] for core in topo["result"]["core_list"]]
    if len(cores) < 2:
        pytest.skip("needs 2 cores")
    rec = pin_record(["--cpus", "N:1@N:0", "--report", "--", *probe_args("gcc")])
    assert rec["config"]["cpus"] == [cores[1], cores[0]]
    assert program_json(rec)["thread_cpus"] == [cores[1], cores[0]]


def test_a_library_that_never_enters_the_program_fails_the_run(run_bandwall):
    # BANDWALL_PIN_LIB names the library bandwall-pin preloads; a harmless system library stands in
    # for one the program never runs (setuid programs, programs that clear LD_PRELOAD).
    libm = next(
        (p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6") if os.path.exists(p)), None
    )
    if libm is None:
        pytest.skip("no libm.so.6 at the usual paths")
    p = run_bandwall(
        "pin",
        "--cpus",
        str(CPUS[0]),
        "--no-store",
        "--",
        probe("gcc"),
        "2",
        "1000",
        env={"BANDWALL_PIN_LIB": libm},
    )
    assert p.returncode == 1, p.stderr
    lines = p.stderr.strip().splitlines()
    assert "libbandwall-pin.so did not enter" in lines[-1] and "Traceback" not in p.stderr


def test_blocktime_uses_one_clock_for_launcher_and_library():
    # bandwall-pin hands the clock it used to the library, so both compute the same KMP_BLOCKTIME
    rec = pin_record(["--spin", "5000000", "--", "sh", "-c", 'echo "$KMP_BLOCKTIME $BANDWALL_PIN_MHZ"'])
    blocktime, mhz = rec["result"]["stdout"].split()
    assert blocktime == rec["config"]["openmp_env"]["KMP_BLOCKTIME"]
    assert float(mhz) == pytest.approx(rec["config"]["cpu_mhz"])
    # preloaded by hand with a given clock: 5000000 cycles at 2000 MHz are 2.5 ms, rounded up to 3
    proc = by_hand(
        ["sh", "-c", 'echo "$KMP_BLOCKTIME"'], MP_BIND="yes", MP_SPIN="5000000", BANDWALL_PIN_MHZ="2000"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "3"


def test_thread_summary_counts_bound_stayers_and_unbound_wanderers():
    def t(intended, seen, migrations):
        return {"cpu_intended": intended, "cpus_seen": seen, "migrations": migrations}

    threads = [
        t(1, {"1": 1.0}, 1),
        t(0, {"0": 1.0}, 1),
        t(None, {"0": 0.5, "1": 0.5}, 4),
        t(None, {"1": 1.0}, None),
    ]
    assert pinmod.thread_summary(threads) == {
        "bound": 2, "bound_stayed": 2, "unbound": 2, "unbound_wandered": 1, "migrations": 6,
    }  # fmt: skip


@two_cpus
def test_report_record_carries_the_summary():
    rec = pin_record(["--report", "--", *probe_args("gcc")], MP_BLIST="1,0")
    s = rec["result"]["thread_summary"]
    assert s["bound"] == 2 and s["bound_stayed"] == 2 and s["unbound"] == 0
    rec = pin_record(["--bind", "none", "--report", "--", *probe_args("gcc")])
    s = rec["result"]["thread_summary"]
    assert s["bound"] == 0 and s["unbound"] == len(rec["result"]["threads"]) >= 2
