"""The one-node Slurm the test session brings up: srun places tasks, and MPI programs built with each
implementation wire up under srun through the plugin bandwall.mpi.flavours names for it."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import slurm
from bandwall.mpi import flavours as mpi

HELLO = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("{\"rank\": %d, \"size\": %d, \"sum\": %d}\n", rank, size, sum);
  MPI_Finalize();
  return 0;
}
"""


def test_srun_places_tasks_on_the_node(slurm_cluster):
    out = slurm_cluster.run("srun", "-n", "2", "hostname")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [slurm_cluster.node] * 2


def test_sinfo_shows_every_cpu_of_the_machine(slurm_cluster):
    # An earlier test's job may still be completing on the shared node: wait for the state.
    slurm.wait_idle(slurm_cluster)
    out = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%c %t")
    assert out.stdout.split() == [str(slurm_cluster.cpus), "idle"]


@pytest.mark.parametrize("name", mpi.flavours.names())
def test_mpi_hello_under_srun(slurm_cluster, tmp_path, name):
    flavour = mpi.flavours.get(name)
    if shutil.which(flavour.mpicc) is None:
        pytest.skip(f"{name} is not installed ({flavour.packages})")
    assert flavour.srun_mpi in slurm_cluster.mpi_plugins()
    src = tmp_path / "hello.c"
    src.write_text(HELLO)
    exe = tmp_path / "hello"
    subprocess.run([flavour.mpicc, str(src), "-o", str(exe)], check=True)
    assert mpi.linked(str(exe)) == flavour
    out = slurm_cluster.run("srun", f"--mpi={flavour.srun_mpi}", "-n", "2", str(exe))
    assert out.returncode == 0, out.stderr
    ranks = sorted((json.loads(ln) for ln in out.stdout.splitlines()), key=lambda r: r["rank"])
    assert ranks == [{"rank": 0, "size": 2, "sum": 1}, {"rank": 1, "size": 2, "sum": 1}]
