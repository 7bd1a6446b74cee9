"""Points measured with the cores of ranks 0 and 1 in another state than their library's main one
are measured once more at the end of a sweep (commchar.measure.again), each replacing the first in
the store, which keeps the first's times in the new point's extra.superseded."""

from __future__ import annotations

import sqlite3

from commchar.measure.again import elsewhere, measure_again
from commchar.measure.plan import Point
from commchar.statistics import summarize
from commchar.store import Store

NEAR, FAR = [66.0, 67.0], [327.0, 330.0]


def _add(store: Store, run_id: int, job: int, op: str, variant: str, n: int, rtt: list[float] | None,
         t: float, *, library: str = "mpich", p: int = 2, refined: bool = False, again: bool = False,
         valid: bool = True) -> None:
    samples = [t] * 10
    point = {"op": op, "variant": variant, "p": p, "n_bytes": n, "samples_us": samples, "valid": valid,
             "extra": {"core_rtt_ns": rtt} if rtt else {}}
    store.add_point(run_id, job, library, point, summarize(samples), oversubscribed=False, ci_rel=0.001,
                    refined=refined, again=again)


def _run(path) -> tuple[Store, int, int]:
    store = Store(path)
    run_id = store.create_run("0.1.0", {"hostname": "test"}, {"np": [2], "libraries": ["mpich"]})
    return store, run_id, store.create_job(run_id, "mpich", 2, ["mpirun"], {}, False)


def test_the_points_outside_their_librarys_main_state_are_asked_for(tmp_path):
    store, run_id, job = _run(tmp_path / "s.db")
    with store:
        for n in (0, 8, 64, 512, 4096):
            _add(store, run_id, job, "bcast", "", n, NEAR, 1.0)  # the main state: most points
            _add(store, run_id, job, "pingpong", "send", n, FAR if n < 4096 else NEAR, 2.0)
        _add(store, run_id, job, "pingpong", "send", 9, [66.0, 330.0], 2.0)  # moved during the point
        _add(store, run_id, job, "pingpong", "send", 10, FAR, 2.0, valid=False)  # invalid: left alone
        _add(store, run_id, job, "rndv", "", 100, FAR, 2.0)  # no distance moves its answer
        _add(store, run_id, job, "allreduce", "", 8, None, 1.0, p=4)  # no round trips
        _add(store, run_id, job, "pingpong", "send", 0, FAR, 1.0, library="openmpi")  # one state alone
        todo = elsewhere(store.points([run_id]))
        # a run all of whose points lie in one state asks for nothing
        assert elsewhere([pt for pt in store.points([run_id]) if pt["op"] == "bcast"]) == {}
    assert list(todo) == [("mpich", 2)]
    assert [pt.n_bytes for pt in todo[("mpich", 2)]] == [0, 8, 9, 64, 512]
    assert {(pt.op, pt.variant) for pt in todo[("mpich", 2)]} == {("pingpong", "send")}


def test_a_point_measured_again_replaces_the_first_and_keeps_its_times(tmp_path):
    store, run_id, job = _run(tmp_path / "s.db")
    with store:
        for n in (0, 8, 64, 512, 4096):
            _add(store, run_id, job, "bcast", "", n, NEAR, 1.0)
        _add(store, run_id, job, "pingpong", "send", 64, FAR, 2.0, refined=True)
        _add(store, run_id, job, "pingpong", "send", 128, FAR, 2.5)
        asked: list[tuple[str, int, list[Point]]] = []

        def measure(library: str, p: int, points: list[Point]) -> None:
            asked.append((library, p, points))
            for pt in points:  # the cores back near for 64 B, still far for 128 B
                _add(store, run_id, job, pt.op, pt.variant, pt.n_bytes, NEAR if pt.n_bytes == 64 else FAR,
                     0.5, again=True)

        told: list[int] = []
        result = measure_again(store, run_id, ["mpich"], measure, told.append)
        points = {pt["n_bytes"]: pt for pt in store.points([run_id]) if pt["op"] == "pingpong"}
    assert [(lib, p, [pt.n_bytes for pt in pts]) for lib, p, pts in asked] == [("mpich", 2, [64, 128])]
    assert (result.points, result.still) == (2, 1) and told == [2]
    assert len(points) == 2 and points[64]["t_us"] == 0.5
    assert points[64]["refined"] and not points[128]["refined"]
    first = points[64]["extra"]["superseded"]
    assert first["t_us"] == 2.0 and first["core_rtt_ns"] == FAR and first["created_at"]
    assert first["job_id"] == job and first["point_id"] < points[64]["point_id"]
    assert points[64]["extra"]["core_rtt_ns"] == NEAR
    with Store(tmp_path / "s.db") as again:  # one samples row per point, the first's gone
        assert again.samples(points[64]["point_id"]) == [0.5] * 10
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 7


def test_nothing_outside_the_main_state_measures_nothing(tmp_path):
    store, run_id, job = _run(tmp_path / "s.db")
    with store:
        _add(store, run_id, job, "pingpong", "send", 64, NEAR, 2.0)
        never = lambda *a: (_ for _ in ()).throw(AssertionError)  # noqa: E731
        result = measure_again(store, run_id, ["mpich"], never, never)
    assert (result.points, result.still) == (0, 0)
