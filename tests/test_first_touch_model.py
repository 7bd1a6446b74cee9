"""The first-touch fit (commchar.models.first_touch) from `touch` points, its model-file
field and its validation, and the kernel operation's data check under real mpirun."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from commchar.errors import InputError
from commchar.modelfile.model import ModelError, load
from commchar.modelfile.schema import validate
from commchar.models.first_touch import FirstTouchModel

KIB = 1024
MIB = 1024 * KIB


def _points(per_byte: float, c: float, resident_per_byte: float = 1e-4) -> list[dict]:
    points = []
    for k in range(6):
        n = 64 * KIB * 4 ** k
        resident = 2.0 + resident_per_byte * n
        points.append({"op": "touch", "variant": "resident", "n_bytes": n, "t_us": resident, "valid": True})
        points.append({"op": "touch", "variant": "fresh", "n_bytes": n, "t_us": resident + c + per_byte * n,
                       "valid": True})
    return points


def test_fit_recovers_the_per_byte_cost():
    model = FirstTouchModel().fit(_points(2.5e-4, 3.0))
    assert model.params_["per_byte"] == pytest.approx(2.5e-4, rel=1e-3)
    assert model.params_["per_page"] == pytest.approx(2.5e-4 * 4096, rel=1e-3)
    assert model.params_["c"] == pytest.approx(3.0, rel=1e-2)
    assert model.params_["max_bytes"] == 64 * KIB * 4 ** 5
    assert [s["n"] for s in model.sizes_] == [64 * KIB * 4 ** k for k in range(6)]
    # each size's own cost per byte: (c + per_byte n) / n
    for n, per_byte in model.params_["steps"]:
        assert per_byte == pytest.approx(2.5e-4 + 3.0 / n, rel=1e-3)


def test_steps_follow_a_cost_that_changes_with_size():
    # in cache up to 1 MiB (0.2 ns a byte), from memory above (0.8)
    points = []
    for k in range(6):
        n = 64 * KIB * 4 ** k
        points += [{"op": "touch", "variant": "resident", "n_bytes": n, "t_us": 1.0 + 1e-4 * n},
                   {"op": "touch", "variant": "fresh", "n_bytes": n,
                    "t_us": 1.0 + 1e-4 * n + (2e-4 if n <= MIB else 8e-4) * n}]
    steps = FirstTouchModel().fit(points).params_["steps"]
    assert [round(b, 6) for _, b in steps] == [2e-4, 2e-4, 2e-4, 8e-4, 8e-4, 8e-4]


def test_a_size_measured_one_way_only_is_left_out_and_none_refused():
    points = [pt for pt in _points(2e-4, 0.0) if not (pt["n_bytes"] == 64 * KIB and pt["variant"] == "fresh")]
    assert len(FirstTouchModel().fit(points).sizes_) == 5
    with pytest.raises(InputError):
        FirstTouchModel().fit([pt for pt in points if pt["variant"] == "resident"])


@pytest.mark.mpi
def test_kernel_measures_and_fit_writes_the_field(tmp_path):
    db, out = tmp_path / "t.db", tmp_path / "m.json"
    run = subprocess.run([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", "mpich",
                          "--ops", "touch", "--np", "2", "--sizes", "64K,1M", "--max-time", "0.2",
                          "--no-refine"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("select variant, valid, t_us from points where op = 'touch'").fetchall()
    assert sorted((v, ok) for v, ok, _ in rows) == [("fresh", 1), ("fresh", 1), ("resident", 1), ("resident", 1)]
    fit = subprocess.run([sys.executable, "-m", "commchar", "fit", "--db", str(db), "-o", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert fit.returncode == 0, fit.stderr
    touch = load(out).first_touch("mpich")
    assert touch is not None and touch["per_byte"] > 0 and touch["page_bytes"] == 4096


def test_schema_refuses_a_negative_cost():
    model = FirstTouchModel().fit(_points(2e-4, 0.0))
    doc = {"format": "commchar-model", "version": 1,
           "libraries": {"x": {"operations": {}, "loggp_partial": {"first_touch": model.params_ | {"per_byte": -1.0}}}}}
    with pytest.raises(ModelError) as err:
        validate(json.loads(json.dumps(doc)))
    assert "first_touch.per_byte" in str(err.value)
    doc["libraries"]["x"]["loggp_partial"]["first_touch"]["per_byte"] = 2e-4
    validate(doc)
