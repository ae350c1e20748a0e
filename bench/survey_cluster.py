#!/usr/bin/env python3
"""`bandwall survey` on the test suite's four-node Slurm cluster on this one host, with the same
arrangement as tests/test_survey_cluster.py: node2 bound to a CPU of its own beside a spinning
process, node3 reading other settings through a task prolog, node1 and node4 left alone. Prints the
survey's tables (the node table of the docs' "Many nodes" page). Runs as root with slurm-wlm and
munge installed, on a machine with two CPUs at least.

    .venv/bin/python bench/survey_cluster.py [--margin 0.3] [--full]

(The test asserts with a margin of 60%, so only the busy CPU and the setting decide its verdicts;
30% here also shows the noisy node's halved FMA peak.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import common

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import slurm  # noqa: E402
import test_survey_cluster as arrangement  # noqa: E402
from bandwall.survey import settings  # noqa: E402


def main() -> int:
    ap = common.parser(__doc__, rounds=None, bindir=False, summary=True)
    ap.add_argument("--margin", default="0.3", help="the test uses a wider one (no timing decides it)")
    ap.add_argument("--full", action="store_true", help="full runs, not --short")
    args = common.parse(ap)
    reason = slurm.unavailable()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("needs two CPUs: the noisy node has one of its own", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fake = root / "node3-settings"
        arrangement.other_settings_root(fake)
        prolog = root / "task-prolog"
        prolog.write_text(
            f'#!/bin/sh\n[ "$SLURMD_NODENAME" = {arrangement.ODD} ] && '
            f'echo "export {settings.ROOT_VARIABLE}={fake}"\nexit 0\n'
        )
        prolog.chmod(0o755)
        own = {n: {cpus[1] if n == arrangement.NOISY else cpus[0]} for n in arrangement.NODES}
        (noisy_cpu,) = own[arrangement.NOISY]
        with slurm.cluster(root / "slurm", nodes=len(own), task_prolog=prolog, node_cpus=own) as cluster:
            code = f"import os; os.sched_setaffinity(0, {{{noisy_cpu}}})\nwhile True: pass"
            spin = subprocess.Popen([sys.executable, "-c", code])
            try:
                argv = ["salloc", f"-N{len(own)}", "--exclusive", sys.executable, "-m", "bandwall", "survey"]
                argv += [*([] if args.full else ["--short"]), "--no-store", "--margin", args.margin]
                argv += ["--out-dir", str(root / "nodes")]
                print("$", " ".join(argv[3:]), f"  # inside salloc -N{len(own)} --exclusive", flush=True)
                out = cluster.run(*argv, timeout=1800, env={"COLUMNS": "160"})
            finally:
                spin.kill()
                spin.wait()
            sys.stdout.write(out.stdout)
            sys.stderr.write(out.stderr)
            return out.returncode


if __name__ == "__main__":
    sys.exit(main())
