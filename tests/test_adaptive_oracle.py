"""bench/adaptive_oracle.py: the adaptive rule replayed on a dense reference takes the
reference's own points, fewer than all, and its model's error is measured at every size."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from commchar.measure.plan import ADAPTIVE, DENSE, rule_sizes

BENCH = Path(__file__).resolve().parents[1] / "bench"
MiB = 1 << 20


def load(name: str):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def _jump(n: float) -> float:
    return 1.0 + 2e-4 * n if n < 10_000 else 5.0 + 1e-4 * n


def _point(n: int, t: float) -> dict:
    half = 1.959964 * 0.004 * t
    return {"library": "lib", "op": "pingpong", "variant": "send", "p": 2, "n_bytes": n, "t_us": t,
            "ci_lo_us": t - half, "ci_hi_us": t + half, "valid": True, "oversubscribed": False}


def test_the_rule_replayed_takes_reference_points_and_its_model_predicts_the_rest():
    oracle = load("adaptive_oracle")
    reference = [_point(n, _jump(n)) for n in rule_sizes(4 * MiB, DENSE)]
    taken, rounds = oracle.replay(reference)
    sizes = sorted(pt["n_bytes"] for pt in taken)
    assert set(rule_sizes(4 * MiB, ADAPTIVE)) <= set(sizes)  # the coarse grid first
    assert rounds >= 1 and len(sizes) == len(set(sizes)) and len(taken) < len(reference)
    assert all(pt in reference for pt in taken)
    errors = oracle.relative(oracle.curve_misses(taken, reference, "lib"))
    every = np.array([e for pairs in errors.values() for _, e in pairs])
    assert every.size == len(reference) and np.median(every) < 0.03


def test_drift_compares_only_the_sizes_both_measured():
    oracle = load("adaptive_oracle")
    reference = [_point(n, 1.0) for n in (0, 8, 64)]
    fast = [_point(8, 1.1), _point(64, 0.95), _point(512, 9.0)]
    assert sorted(round(d, 6) for d in oracle.drift(fast, reference)) == [0.05, 0.1]


def test_a_reference_measured_wholly_on_slowed_cores_is_scored_whole_and_said_to_be(capsys):
    accuracy = load("adaptive_accuracy")
    sizes = rule_sizes(64 * 1024, DENSE)
    fast = [_point(n, _jump(n)) | {"extra": {"core_copy_ns": [100.0, 100.0]}} for n in sizes[::2]]
    slowed = [_point(n, _jump(n)) | {"extra": {"core_copy_ns": [100.0, 300.0]}} for n in sizes]
    accuracy.report("lib", fast, slowed, None, False)
    out = " ".join(capsys.readouterr().out.split())
    assert f"{len(sizes)} of its points measured on a slowed core left out" in out
    assert "scored against every reference point, whatever its cores' state" in out
    assert f"reference {len(sizes)}: 1 operations, {len(sizes)} reference sizes" in out
    # one full-speed point left: the score is of it alone, nothing said of the rest
    slowed[0] = _point(sizes[0], _jump(sizes[0])) | {"extra": {"core_copy_ns": [100.0, 100.0]}}
    accuracy.report("lib", fast, slowed, None, False)
    out = " ".join(capsys.readouterr().out.split())
    assert "whatever its cores' state" not in out and "reference 1: 1 operations, 1 reference sizes" in out


@pytest.mark.mpi
def test_paired_accuracy_measures_reference_and_fast_runs_in_turn_and_scores_them(mpi_libraries, capsys):
    # bench/adaptive_accuracy.py --paired: no stored reference, a dense and an adaptive run per
    # group of operations; the fast model is scored against the dense points, with its drift
    accuracy = load("adaptive_accuracy")
    library = mpi_libraries[0].name
    accuracy.paired(library, "bcast,allreduce", 1, "adaptive", False)
    out = " ".join(capsys.readouterr().out.split())
    assert f"{library} paired: 2 groups of at most 1 operation(s), reference" in out
    assert f"{library} fast run " in out and "median error" in out
    assert "drift: at the " in out and "sizes both measured" in out


@pytest.mark.mpi
def test_launch_spread_compares_two_passes_of_a_launch_with_launches(mpi_libraries, capsys, monkeypatch):
    spread = load("launch_spread")
    library = mpi_libraries[0].name
    monkeypatch.setattr(sys, "argv", ["launch_spread.py", "--library", library, "--launches", "2",
                                      "--ops", "pingpong:send", "--sizes", "64,4K", "--precision", "0.05"])
    assert spread.main() == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{library} 2 launches, 2 points twice each: between the two passes of a launch" in out
    assert "between launches" in out and "launch 2: times x" in out and "cores' round trip" in out
