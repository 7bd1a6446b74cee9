"""Where ranks go on several hosts, which jobs a sweep launches for on-node and off-node,
the store's locality (and its migration from schema 1), and cross-host failures said in
one line. Unit tests; the real thing across emulated hosts is in test_hosts.py."""

from __future__ import annotations

import sqlite3

import pytest

from commchar.errors import UsageError
from commchar.measure import hostfailures
from commchar.measure.operations import parse_ops
from commchar.measure.placement import Host, locality, rank_hosts, read_hostfile, slurm_hosts
from commchar.measure.plan import points_for
from commchar.measure.runner import place_points
from commchar.store import Store
from _stores import store_with_points

TWO = [Host("a", 2), Host("b", 2)]


def test_host_files_of_either_family_are_read_with_their_slots(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("# cluster\na slots=2\nb:3\nc\na slots=1\n")
    assert read_hostfile(path) == [Host("a", 3), Host("b", 3), Host("c", 1)]
    path.write_text("a slots=0\n")
    with pytest.raises(UsageError, match="line 1"):
        read_hostfile(path)


def test_block_fills_a_host_and_cyclic_deals_ranks_out():
    assert rank_hosts(TWO, 4, "block") == ["a", "a", "b", "b"]
    assert rank_hosts(TWO, 4, "cyclic") == ["a", "b", "a", "b"]
    assert rank_hosts(TWO, 6, "block") == ["a", "a", "b", "b", "a", "a"]  # past the slots: wraps
    assert locality("p2p", ["a", "a", "b", "b"]) == "on-node"  # ranks 0 and 1 only
    assert locality("collective", ["a", "a", "b", "b"]) == "off-node"
    with pytest.raises(UsageError, match="placement"):
        rank_hosts(TWO, 2, "scatter")


def test_slurm_allocations_are_read_from_the_environment():
    env = {"SLURM_JOB_NUM_NODES": "4", "SLURM_JOB_CPUS_PER_NODE": "2(x3),1"}
    assert [h.slots for h in slurm_hosts(env)] == [2, 2, 2, 1]
    assert slurm_hosts({}) is None


def test_point_to_point_runs_on_node_and_off_node_collectives_by_policy():
    points = points_for(parse_ops("pingpong:send,bcast"), [0, 8], 2)
    block, cyclic = place_points(points, 2, TWO, "block")
    assert (block.policy, cyclic.policy) == ("block", "cyclic")
    assert set(block.localities.values()) == {"on-node"} and len(block.points) == 4
    assert {pt.op for pt in cyclic.points} == {"pingpong"}
    assert set(cyclic.localities.values()) == {"off-node"}
    # cyclic policy: the collective goes off-node, and ping-pong on-node by the other job
    first, second = place_points(points, 2, TWO, "cyclic")
    assert {(pt.op, loc) for pt, loc in first.localities.items()} == {("pingpong", "off-node"),
                                                                       ("bcast", "off-node")}
    assert {(pt.op, loc) for pt, loc in second.localities.items()} == {("pingpong", "on-node")}
    # one slot a host: no two ranks can share one, so there is no on-node job
    (only,) = place_points(points, 2, [Host("a", 1), Host("b", 1)], "block")
    assert set(only.localities.values()) == {"off-node"}
    (single,) = place_points(points, 2, [Host("a", 4)], "block")
    assert single.policy is None and set(single.localities.values()) == {""}


def test_a_schema_1_store_is_migrated_and_takes_both_localities(tmp_path):
    db = tmp_path / "old.db"
    store_with_points(db, sizes=2)
    with sqlite3.connect(db) as conn:  # back to what commchar wrote before localities
        columns = [r[1] for r in conn.execute("PRAGMA table_info(points)") if r[1] != "locality"]
        conn.execute("PRAGMA legacy_alter_table=ON")
        conn.execute("ALTER TABLE points RENAME TO p1")
        conn.execute(f"CREATE TABLE points AS SELECT {', '.join(columns)} FROM p1")
        conn.execute("DROP TABLE p1")
        conn.execute("ALTER TABLE failures DROP COLUMN locality")
        conn.execute("ALTER TABLE jobs DROP COLUMN placement")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with Store(db, readonly=True) as store:  # read as it is, never converted
        before = store.points()
        assert {p["locality"] for p in before} == {""}
    with Store(db) as store:
        assert store.points() == before
        point = store.connection.execute("SELECT * FROM points LIMIT 1").fetchone()
        summary = {k: point[k] for k in ("t_us", "t_min_us", "t_p25_us", "t_mean_us", "t_p75_us",
                                         "t_p95_us", "t_max_us", "t_std_us", "ci_lo_us", "ci_hi_us",
                                         "outliers", "outlier_rule", "reps")}
        message = {"op": point["op"], "variant": point["variant"], "p": point["p"],
                   "n_bytes": point["n_bytes"], "samples_us": [1.0]}
        store.add_point(point["run_id"], point["job_id"], point["library"], message, summary,
                        oversubscribed=False, ci_rel=0.0, locality="off-node")
        assert len(store.points()) == len(before) + 1
        assert store.connection.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                                        ).fetchone()[0] == "4"
        assert store.samples(point["id"])  # the samples still belong to their points


# What the launchers and ssh print when a host is out of reach (seen on emulated hosts).
HYDRA_UNREACHABLE = """ssh: connect to host 10.250.44.9 port 22: No route to host
[mpiexec@vm] HYDU_sock_write (utils/sock/sock.c:254): write error (Bad file descriptor)
"""
UCX_NO_DEVICE = """[1795371282.564671] [cchost1-5608:15132:0]     ucp_context.c:1276 UCX  ERROR no \
usable transports/devices (asked tcp on network:mlx5_0:1 )
Abort(874106511): Fatal error in internal_Init: Other MPI error, error stack:
"""
OMPI_NO_BTL = """At least one pair of MPI processes are unable to reach each other for
MPI communications.  This means that no Open MPI device has indicated
  Process 1 ([[22416,1],1]) is on host: cchost2-5608
  Process 2 ([[22416,1],0]) is on host: 10.250.44.2
  BTLs attempted: self
"""
MPICH_UCX_INIT = """Abort(68800143): Fatal error in internal_Init: Other MPI error, error stack:
MPID_Init(443)...........: 
MPIDI_UCX_init_local(252):  ucx function returned with failed status(ucx_init.c 252 \
MPIDI_UCX_init_local No such device)
"""


@pytest.mark.parametrize("stderr, said", [
    (HYDRA_UNREACHABLE, "host 10.250.44.9: unreachable (no route to host)"),
    ("ssh: connect to host n7 port 22: Connection refused\n",
     "host n7: ssh connection refused (no sshd listening on port 22)"),
    ("root@n3: Permission denied (publickey).\n", "host n3: ssh login refused (permission denied: publickey)"),
    (UCX_NO_DEVICE, "host cchost1-5608: the library has no network transport to the other hosts"),
    (OMPI_NO_BTL, "hosts cchost2-5608 and 10.250.44.2: Open MPI has no transport between the hosts"
                  " (transports tried: self)"),
    ("MPI_Init failed: something else\n", None),
    (MPICH_UCX_INIT, "hosts a, b: the library has no network transport to the other hosts (UCX could"
                     " not open its device: No such device)"),
])
def test_cross_host_failures_are_one_line_naming_the_host(stderr, said):
    found = hostfailures.diagnose(stderr, ["a", "b"])
    assert (found is None) if said is None else found.startswith(said), found


def test_a_csv_with_localities_is_fitted_as_on_node_and_off_node(tmp_path):
    from commchar.models.inputs import read_csv

    rows = [(loc, n, (1 if loc == "on-node" else 50) + n / (5000 if loc == "on-node" else 125))
            for loc in ("on-node", "off-node") for n in (0, 1 << 20, 4 << 20)]
    path = tmp_path / "points.csv"
    path.write_text("library,op,variant,p,n_bytes,t_us,locality\n"
                    + "".join(f"mpich,pingpong,send,2,{n},{t},{loc}\n" for loc, n, t in rows))
    assert {p["library"] for p in read_csv(path)} == {"mpich on-node", "mpich off-node"}
    path.write_text("library,op,variant,p,n_bytes,t_us,locality\nmpich,pingpong,send,2,0,1,nearby\n")
    with pytest.raises(Exception, match="locality 'nearby' is not one of on-node, off-node"):
        read_csv(path)
