"""The import contract of pyproject.toml ([tool.importlinter]): commands > report > views > tune > output >
display > pinning | numa | mpi | engine (independent) > kernels > counters > core, every module in a layer. It holds on the source tree, and breaks on an upward import
or a module left out of the layers (proven on a copy of the package with one line added)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).parent / "lint-imports"


def lint(python_dir: Path) -> subprocess.CompletedProcess:
    """lint-imports with the project's contract on the bandwall package found in python_dir."""
    env = dict(os.environ, PYTHONPATH=str(python_dir))
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=python_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def package_copy(tmp_path) -> Path:
    shutil.copytree(
        ROOT / "python" / "bandwall", tmp_path / "bandwall", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path


def test_the_source_keeps_its_layers():
    proc = lint(ROOT / "python")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "module, upward",
    [
        ("kernels/stream.py", "bandwall.commands.stream"),  # domain -> command
        ("kernels/sweep.py", "bandwall.report.plots"),  # domain -> view
        ("numa/numa_check.py", "bandwall.views.numa_check"),  # domain -> view
        ("views/iso3dfd.py", "bandwall.commands.iso3dfd"),  # view -> command
        ("report/sections/placement.py", "bandwall.commands.numa_check"),  # report -> command
        ("core/records.py", "bandwall.kernels.stream"),  # core -> kernels
        ("counters/events.py", "bandwall.kernels.iso3dfd"),  # counters -> kernels
        ("pinning/pin.py", "bandwall.numa.numa_check"),  # sibling -> sibling (independent)
        ("engine/pipeline.py", "bandwall.mpi.launchers"),  # sibling -> sibling (independent)
    ],
)
def test_an_upward_import_breaks_the_contract(package_copy, module, upward):
    path = package_copy / "bandwall" / module
    path.write_text(path.read_text() + f"\nimport {upward}  # noqa: E402\n")
    proc = lint(package_copy)
    assert proc.returncode != 0, proc.stdout
    importer = "bandwall." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {upward}" in proc.stdout


def test_a_module_outside_the_layers_breaks_the_contract(package_copy):
    (package_copy / "bandwall" / "unplaced.py").write_text('"""A module no layer names."""\n')
    proc = lint(package_copy)
    assert proc.returncode != 0, proc.stdout
    assert "unplaced" in proc.stdout
