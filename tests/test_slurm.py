"""`commchar run --launcher srun` inside a Slurm allocation, on a Slurm cluster made of
Debian's slurm-wlm (munged, slurmctld, one slurmd per emulated host) from a configuration
in a temporary directory. Root only; everything is stopped by the fixture's finalizer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from _hosts import LINK_MB_S, SIZES, emulated_hosts, emulated_slurm, off_and_on_node_bandwidth
from commchar.store import Store

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with emulated_hosts(tmp_path_factory.mktemp("slurm") / "set", 2) as hosts:
        with emulated_slurm(hosts) as conf:
            yield hosts, conf


def test_srun_inside_salloc_measures_on_node_and_off_node(cluster, mpi_libraries, tmp_path):
    """MPICH's ranks start through Slurm's pmi2 plugin; the bar is the one mpirun meets."""
    hosts, conf = cluster
    mpich = [lib.name for lib in mpi_libraries if lib.family == "mpich"]
    if not mpich:
        pytest.skip("MPICH is not installed: its PMI client is the one Slurm's pmi2 plugin serves")
    db, model = tmp_path / "c.db", tmp_path / "model.json"
    env = {**os.environ, "SLURM_CONF": str(conf)}
    run = subprocess.run(
        ["salloc", "--nodes", "2", "--ntasks-per-node", "2", sys.executable, "-m", "commchar", "run",
         "--launcher", "srun", "--db", str(db), "--library", mpich[0], "--ops", "pingpong:send",
         "--sizes", SIZES, "--np", "2", "--precision", "0.05", "--max-time", "1",
         "--timeout", "120", *hosts.env_flags()],
        capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    with Store(db, readonly=True) as store:
        jobs, points = store.jobs(), store.points()
    placed = {j["placement"]: (j["hosts"], j["launcher_cmd"][0]) for j in jobs}
    first, second = hosts.names
    assert placed == {"block": ([first, first], "srun"), "cyclic": ([first, second], "srun")}
    assert {p["locality"] for p in points} == {"on-node", "off-node"}
    fitted = subprocess.run([sys.executable, "-m", "commchar", "fit", "--db", str(db), "-o", str(model)],
                            capture_output=True, text=True, timeout=300)
    assert fitted.returncode == 0, fitted.stderr
    off, on = off_and_on_node_bandwidth(json.loads(model.read_text()), mpich[0])
    assert abs(off - LINK_MB_S) <= 0.10 * LINK_MB_S, off
    assert on > 2 * LINK_MB_S, on
