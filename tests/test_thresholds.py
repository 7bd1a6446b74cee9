"""Thresholds refined between neighbouring sizes: the search, the store's marking and
migration, and `fit` from the rndv probe alone (no MPI here: tests/test_models_mpi.py
refines against real libraries)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from commchar.cli import main
from commchar.measure.plan import default_sizes
from commchar.measure.refine import proposals
from commchar.statistics import summarize
from commchar.modelfile.model import ModelFile
from commchar.models import fit_points
from commchar.models.thresholds import JUMP, SLOPE, Change, find_changes, is_pinned
from commchar.store import Store

from _stores import store_with_points

DELAY_US = 2000.0


def _rndv(n: int, S: int) -> dict:
    """What the kernel's rndv probe reports: the send's overhead below S, the delay from S."""
    t = DELAY_US + 5.0 if n >= S else 3.0 + n * 1e-4
    return {"library": "lib", "op": "rndv", "variant": "", "p": 2, "n_bytes": n, "t_us": t,
            "valid": True, "oversubscribed": False, "extra": {"delay_us": DELAY_US}}


def _pingpong(n: int, knee: int) -> dict:
    """Two Hockney regimes: a cheap start and steep bytes, then a dearer start and flat bytes."""
    t = 1.0 + n * 2e-3 if n < knee else 10.0 + n * 2e-4 + (knee * 2e-3 - 9.0 - knee * 2e-4)
    return {"library": "lib", "op": "pingpong", "variant": "send", "p": 2, "n_bytes": n,
            "t_us": max(t, 0.5), "valid": True, "oversubscribed": False, "extra": {}}


def _refine(points: list[dict], measure, max_rounds: int = 10) -> tuple[list[dict], int]:
    """The runner's loop, with `measure` standing for a job: propose, measure, repeat."""
    rounds = 0
    for _ in range(max_rounds):
        measured = {(p["library"], p["op"], p["variant"], p["p"], p["n_bytes"]) for p in points}
        todo = proposals(find_changes(points), measured, set())
        if not todo:
            break
        rounds += 1
        points += [measure(pt.op, pt.n_bytes) for job in todo.values() for pt in job]
    return points, rounds


@pytest.mark.parametrize("S", [12000, 257, 4097, 1000000])
def test_a_jump_is_pinned_to_the_byte_from_powers_of_two(S):
    points = [_rndv(n, S) for n in default_sizes(4 << 20)]
    first = find_changes(points)
    assert [(c.kind, c.after) for c in first] == [(JUMP, 1 << (S - 1).bit_length())]
    points, rounds = _refine(points, lambda op, n: _rndv(n, S))
    (change,) = find_changes(points)
    assert change.interval == (S, S + 1) and change.pinned()
    # a factor-of-two gap of G bytes takes about log8(G) rounds of 7 sizes
    assert rounds <= max(1, int(np.ceil(np.log(S) / np.log(8)))), rounds


def test_a_change_of_slope_is_pinned_to_a_few_percent():
    knee = 3000
    points = [_pingpong(n, knee) for n in default_sizes(1 << 20)]
    (first,) = find_changes(points)
    assert first.kind == SLOPE and first.before < knee <= first.after
    points, rounds = _refine(points, lambda op, n: _pingpong(n, knee))
    (change,) = find_changes(points)
    assert change.pinned() and change.after <= change.before * 1.05 and rounds <= 3
    # the regime change is found within one refined step of the knee
    assert change.before <= knee * 1.05 and change.after >= knee / 1.05


def test_pinned_and_inside():
    assert is_pinned(JUMP, 11999, 12000) and not is_pinned(JUMP, 11990, 12000)
    assert is_pinned(SLOPE, 1000, 1040) and not is_pinned(SLOPE, 1000, 1100)
    jump = Change("lib", "rndv", "", 2, JUMP, 8192, 16384)
    assert jump.inside(7) == list(range(9216, 16384, 1024))
    slope = Change("lib", "pingpong", "send", 2, SLOPE, 0, 16)
    assert slope.inside(3) == [1, 2, 4, 8]  # from 0 the log spacing starts at 1 byte


def test_a_size_already_stored_or_tried_is_not_proposed_again():
    change = Change("lib", "rndv", "", 2, JUMP, 100, 104)
    measured = {("lib", "rndv", "", 2, 101)}
    tried = {("lib", "rndv", "", 2, 102)}
    assert [pt.n_bytes for pt in proposals([change], measured, tried)[("lib", 2)]] == [103]


def test_refined_points_are_marked_and_an_older_store_is_migrated(tmp_path):
    db = tmp_path / "old.db"
    store_with_points(db, sizes=4)
    with sqlite3.connect(db) as conn:  # the store as commchar wrote it before refinement
        conn.execute("ALTER TABLE points DROP COLUMN refined")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    with Store(db, readonly=True) as store:  # reading never converts
        assert not any(p["refined"] for p in store.points())
    with Store(db) as store:
        run_id = store.runs()[0]["id"]
        job = store.create_job(run_id, "openmpi", 2, ["mpirun"], {}, False)
        samples = [2.0] * 10
        store.add_point(run_id, job, "openmpi", {"op": "pingpong", "variant": "send", "p": 2,
                                                 "n_bytes": 20, "samples_us": samples},
                        summarize(samples), oversubscribed=False, ci_rel=0.0, refined=True)
        refined = {p["n_bytes"]: p["refined"] for p in store.points() if p["op"] == "pingpong"}
    assert refined == {0: False, 8: False, 16: False, 24: False, 20: True}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "4"


def test_fit_from_the_rndv_probe_alone_gives_S_with_its_interval(tmp_path, capsys, monkeypatch):
    points = [_rndv(n, 12000) for n in default_sizes(256 << 10) + list(range(11990, 12010))]
    for pt in points:
        pt["row"] = f"n={pt['n_bytes']}"
    model = fit_points(points)
    section = model["libraries"]["lib"]["loggp_partial"]
    assert section["S"] == 12000 and section["S_interval"] == [12000, 12001]
    assert ModelFile.from_dict(model, source="test").loggp("lib") is None  # no LogGP: not simulable
    csv = tmp_path / "rndv.csv"
    csv.write_text("library,op,p,n_bytes,t_us,extra\n" + "".join(
        f"lib,rndv,2,{p['n_bytes']},{p['t_us']},\"{{\"\"delay_us\"\": 2000}}\"\n" for p in points))
    monkeypatch.setenv("COLUMNS", "200")  # the table on one line
    assert main(["fit", "--csv", str(csv)]) == 0
    assert "12000 in [12000, 12001)" in capsys.readouterr().out


def test_the_report_names_S_from_the_rndv_probe_alone_with_its_interval(tmp_path):
    db = tmp_path / "rndv.db"
    with Store(db) as store:
        run_id = store.create_run("0.1.0", {"hostname": "test"}, {"np": [2], "libraries": ["lib"]})
        job = store.create_job(run_id, "lib", 2, ["mpirun"], {}, False)
        for n in default_sizes(64 << 10) + [11998, 11999, 12000]:
            samples = [_rndv(n, 12000)["t_us"]] * 10
            store.add_point(run_id, job, "lib", {"op": "rndv", "variant": "", "p": 2, "n_bytes": n,
                                                 "samples_us": samples, "extra": {"delay_us": DELAY_US}},
                            summarize(samples), oversubscribed=False, ci_rel=0.0, refined=n % 1024 != 0)
        store.set_run_status(run_id, "complete")
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(db), "-o", str(out)]) == 0
    html = out.read_text()
    assert "S = 12000 B in [12000, 12001)" in html  # the finding
    assert "12000 in [12000, 12001)" in html  # the LogGPS table


def test_each_round_proposes_from_every_point_of_the_run_in_the_store_order(tmp_path):
    """refine reads only the points stored since its last round, and hands the proposer the
    same points, in the same order, as reading the whole run would."""
    from commchar.measure.plan import Point
    from commchar.measure.refine import refine

    S = 12000
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run("0.1.0", {"hostname": "test"}, {"np": [2], "libraries": ["lib"]})
        job = store.create_job(run_id, "lib", 2, ["mpirun"], {}, False)

        def add(op: str, n: int) -> None:
            t = _rndv(n, S)["t_us"] if op == "rndv" else _pingpong(n, 3000)["t_us"]
            samples = [t * (1 + 0.001 * i) for i in range(10)]
            point = {"op": op, "variant": "send" if op == "pingpong" else "", "p": 2, "n_bytes": n,
                     "samples_us": samples, "valid": True, "extra": {"delay_us": DELAY_US}}
            store.add_point(run_id, job, "lib", point, summarize(samples), oversubscribed=False, ci_rel=0.001)

        for n in default_sizes(1 << 20):
            add("pingpong", n)
            add("rndv", n)
        seen: list[list[dict]] = []

        def propose(points, measured, tried):
            assert points == store.points([run_id])  # the same points in the same order
            seen.append(points)
            todo = proposals(find_changes(points), measured, tried)
            return todo, len(todo)

        def measure(library: str, p: int, job_points: list[Point]) -> None:
            for pt in job_points:
                add(pt.op, pt.n_bytes)

        result = refine(store, run_id, ["lib"], 1e9, measure, propose=propose)
    assert result.rounds >= 2 and len(seen) == result.rounds + 1
    assert len(seen[-1]) > len(seen[0])
