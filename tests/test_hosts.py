"""Across emulated hosts (network namespaces joined by a 1 Gbit/s tbf-shaped bridge, one
sshd each), launched over ssh by Open MPI's mpirun and MPICH's Hydra as on a cluster.
Needs root; the hosts are torn down by the fixture's finalizer even when a test fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commchar.store import Store
from _hosts import LINK_MB_S, SIZES, commchar, emulated_hosts, off_and_on_node_bandwidth

pytestmark = pytest.mark.mpi

MEASURE = ["--precision", "0.05", "--max-time", "1", "--timeout", "120"]


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    with emulated_hosts(tmp_path_factory.mktemp("hosts") / "set", 2) as hosts:
        yield hosts


@pytest.fixture(scope="module")
def measured(two_hosts, mpi_libraries, tmp_path_factory):
    """Ping-pong and a broadcast with every library on the two hosts, fitted."""
    out = tmp_path_factory.mktemp("measured")
    db, model = out / "c.db", out / "model.json"
    libraries = ",".join(lib.name for lib in mpi_libraries)
    commchar("run", "--db", str(db), "--library", libraries, "--ops", "pingpong:send,bcast",
             "--sizes", SIZES, "--np", "2", "--hostfile", str(two_hosts.hostfile), *MEASURE,
             *two_hosts.env_flags())
    commchar("fit", "--db", str(db), "-o", str(model))
    return db, json.loads(model.read_text()), mpi_libraries


def test_ranks_run_where_the_placement_puts_them_and_the_store_says_so(measured, two_hosts):
    db, _, libraries = measured
    with Store(db, readonly=True) as store:
        jobs, points, failures = store.jobs(), store.points(), store.failures()
        run = store.runs()[0]
    assert run["options"]["placement"] == "block" and failures == []
    first, second = two_hosts.names
    for lib in libraries:
        placed = {j["placement"]: j["hosts"] for j in jobs if j["library"] == lib.name}
        assert placed == {"block": [first, first], "cyclic": [first, second]}, lib.name
        mine = {(p["op"], p["locality"]) for p in points if p["library"] == lib.name}
        # point-to-point both ways; the broadcast by the run's policy (block: one host at p = 2)
        assert mine == {("pingpong", "on-node"), ("pingpong", "off-node"), ("bcast", "on-node")}


def test_off_node_bandwidth_is_the_links_and_on_node_far_above(measured):
    """The bar: over TCP, the fitted asymptotic bandwidth of the off-node ping-pong is within
    10% of the 1 Gbit/s link's 125 MB/s; on-node (shared memory) it is far above."""
    _, model, libraries = measured
    fitted = {lib.name: off_and_on_node_bandwidth(model, lib.name) for lib in libraries}
    for name, (off, on) in fitted.items():
        assert abs(off - LINK_MB_S) <= 0.10 * LINK_MB_S, fitted
        assert on > 2 * LINK_MB_S, fitted


def test_report_puts_on_node_and_off_node_side_by_side(measured, tmp_path):
    db, _, libraries = measured
    out = tmp_path / "r.html"
    commchar("report", "--db", str(db), "-o", str(out))
    html = out.read_text()
    for lib in libraries:
        assert f"{lib.name} on-node" in html and f"{lib.name} off-node" in html
    table = html[html.index('id="locality"'):]
    table = table[:table.index("</table>")]
    assert "Bw_as on-node" in table and "Bw_as off-node" in table
    assert all(f"<td>{lib.name}</td>" in table for lib in libraries), table[:2000]


# -- failures that only happen across hosts: one line naming the host, nothing lost --------

def _mpich(libraries):
    found = [lib for lib in libraries if lib.family == "mpich"]
    if not found:
        pytest.skip("MPICH is not installed: its Hydra launcher is the one these failures go through")
    return found[0].name


def _run_expecting_failure(db: Path, hostfile: Path, library: str, *flags: str) -> str:
    result = commchar("run", "--db", str(db), "--library", library, "--ops", "pingpong:send",
                      "--sizes", "0,1K", "--np", "2", "--hostfile", str(hostfile),
                      "--precision", "0.2", "--max-time", "0.1", "--timeout", "20", *flags,
                      check=False)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize("case", ["refused", "unreachable"])
def test_a_host_ssh_cannot_reach_is_named_and_on_node_points_are_kept(case, two_hosts, mpi_libraries,
                                                                       tmp_path):
    library = _mpich(mpi_libraries)
    bad = f"{two_hosts.subnet}.{20 if case == 'refused' else 9}"
    if case == "refused":
        # An address of the second host on which no sshd listens: the host is up, ssh is refused.
        subprocess.run(["ip", "-n", two_hosts.namespaces[1], "addr", "add", f"{bad}/24", "dev", "eth0"],
                       check=True)
    hostfile = tmp_path / "hosts"
    hostfile.write_text(f"{two_hosts.addresses[0]} slots=2\n{bad} slots=2\n")
    try:
        line = _run_expecting_failure(tmp_path / "c.db", hostfile, library, *two_hosts.env_flags())
    finally:
        if case == "refused":
            subprocess.run(["ip", "-n", two_hosts.namespaces[1], "addr", "del", f"{bad}/24", "dev",
                            "eth0"], check=False)
    cause = "ssh connection refused" if case == "refused" else "unreachable"
    assert f"host {bad}: {cause}" in line, line
    with Store(tmp_path / "c.db", readonly=True) as store:
        kept = {(p["n_bytes"], p["locality"]) for p in store.points()}
        assert kept == {(0, "on-node"), (1024, "on-node")}  # measured on the good host, stored
        assert {f["locality"] for f in store.failures()} == {"off-node"}
        assert store.runs()[0]["status"] == "incomplete"


def test_a_library_without_a_network_transport_is_named_with_its_host(two_hosts, mpi_libraries, tmp_path):
    library = _mpich(mpi_libraries)
    line = _run_expecting_failure(tmp_path / "c.db", two_hosts.hostfile, library,
                                  *two_hosts.env_flags(UCX_NET_DEVICES="mlx5_0:1"))
    assert "no network transport to the other hosts" in line, line
    # UCX names the host on stdout, which may die with the rank; else the job's hosts are named
    assert any(host in line for host in two_hosts.names + two_hosts.addresses), line
