"""Property: whatever variants, process counts and sizes a run is missing, fit_points writes
a model file the reader accepts, with no non-finite number anywhere (not even informational)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commchar.modelfile import validate
from commchar.models import LawSelector, fit_points

SIZES = [0] + [2**k for k in range(0, 23, 2)]


@st.composite
def reduction_runs(draw: st.DrawFn) -> tuple[list[dict], str]:
    """One reduction measured with sum and/or nop, each at its own p and its own size range;
    some p oversubscribed, some slopes zero (a clamped fit), times across six decades."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    variants = draw(st.sampled_from([("sum", "nop"), ("sum",), ("nop",)]))
    points = []
    for variant in variants:
        ps = draw(st.lists(st.sampled_from([2, 3, 4]), min_size=1, max_size=3, unique=True))
        lo = draw(st.integers(0, 4))
        hi = draw(st.integers(lo + 4, len(SIZES)))
        t_s = 10 ** draw(st.floats(-1, 3))
        t_b = draw(st.sampled_from([0.0, 1e-6, 1e-4, 1e-2]))
        for p in ps:
            over = p > 2 and draw(st.booleans())
            factor = 10 ** rng.uniform(0, 4) if over else 1.0  # time-shared cores
            for n in SIZES[lo:hi]:
                t = factor * (t_s * np.log2(p + 1) + t_b * (1.5 if variant == "sum" else 1.0) * p * n)
                points.append({"library": "lib", "op": "allreduce", "variant": variant, "p": p, "n_bytes": n,
                               "t_us": float(t * np.exp(rng.normal(0, 0.05))), "valid": True,
                               "oversubscribed": over, "extra": {}})
    policy = draw(st.sampled_from(["exclude", "include"]))
    return points, policy


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reduction_runs())
def test_fit_always_writes_a_valid_finite_model(run: tuple[list[dict], str]) -> None:
    points, policy = run
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy must not warn either (fixed at the source)
        model = fit_points(points, oversubscribed=policy)
    validate(model)
    json.dumps(model, allow_nan=False)  # raises on nan or inf anywhere, informational fields included
    ops = model["libraries"]["lib"]["operations"]
    measured = {pt["variant"] for pt in points}
    assert {key.partition(":")[2] for key in ops} == measured
    for key, op in ops.items():
        over = sorted({pt["p"] for pt in points if pt["oversubscribed"] and pt["variant"] == key.partition(":")[2]})
        dedicated = any(not pt["oversubscribed"] for pt in points if pt["variant"] == key.partition(":")[2])
        if over and (policy == "include" or not dedicated):
            assert op["oversubscribed_p"] == over
        else:
            assert "oversubscribed_p" not in op


def test_sum_without_nop_in_a_regime_gets_zero_t_c_with_a_note() -> None:
    """The zero-byte regime measured for sum only, nop only at p = 2: no regime may lose
    its laws (the operation used to be dropped) and t_c exists only where both ran."""
    points = []
    for variant, ps, sizes in (("sum", (2, 3), [0] + [2**k for k in range(0, 21)]),
                               ("nop", (2,), [2**k for k in range(0, 21)])):
        for p in ps:
            for n in sizes:
                t = 2.0 * p + 0.001 * n * (2.0 if variant == "sum" else 1.0) if n else 0.01
                points.append({"library": "lib", "op": "allreduce", "variant": variant, "p": p,
                               "n_bytes": n, "t_us": t, "valid": True, "oversubscribed": False})
    model = fit_points(points)
    validate(model)
    json.dumps(model, allow_nan=False)
    ops = model["libraries"]["lib"]["operations"]
    zero, sized = ops["allreduce:sum"]["segments"][:2]
    assert (zero["n_min"], zero["n_max"]) == (0, 0) and zero["t_c"] == "0"
    assert any("no process count has both sum and nop" in n for n in zero["fit"]["notes"])
    # where both variants were measured (p = 2), t_c is the sum's slope minus the nop's
    assert float(sized["t_c"]) == pytest.approx(0.001, rel=0.01)
    assert any("not measured in this regime" in n for n in ops["allreduce:nop"]["segments"][0]["fit"]["notes"])


def test_law_of_values_near_the_smallest_double_is_finite() -> None:
    """Weights 1/|y| overflowed to inf for such values, and inf/inf made the law NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for y in ([1e-320, 2e-320], [5e-324, 5e-324, 1e-323], [0.0, 0.0, 0.0]):
            law = LawSelector().fit([2, 3, 4][:len(y)], y).law_
            assert all(np.isfinite(v) for v in law.params.values()), (y, law)
        law = LawSelector().fit([2, 3], [1e-3, 2e-3], scale=[1e-300, 1e-300]).law_
        assert all(np.isfinite(v) for v in law.params.values())


def test_one_process_count_is_a_constant_with_a_note() -> None:
    selector = LawSelector().fit([2, 2, 2], [5.0, 5.2, 4.9])
    described = selector.describe()
    assert described["form"] == "const" and described["note"] == "one process count: no law in p"
    assert described["p_range"] == [2.0, 2.0]


def test_oversubscribed_times_do_not_bend_the_dedicated_law() -> None:
    """The review's case: MPICH allreduce 0.8 us at p = 2 on dedicated cores, 10-100 ms at
    p = 3, 4 time-shared; the law through all three predicted 2.25 ms at p = 2."""
    from commchar.modelfile import ModelFile

    rng = np.random.default_rng(3)
    points = []
    for variant in ("sum", "nop"):
        for p, base in ((2, 0.8), (3, 1e4), (4, 1e5)):
            for n in [2**k for k in range(0, 21, 2)]:
                t = base + 0.0005 * n
                points.append({"library": "mpich", "op": "allreduce", "variant": variant, "p": p,
                               "n_bytes": n, "t_us": float(t * np.exp(rng.normal(0, 0.02))),
                               "valid": True, "oversubscribed": p > 2})
    model = fit_points(points)
    predicted = ModelFile.from_dict(model).time("mpich", "allreduce", n=1, p=2).t_us
    assert predicted == pytest.approx(0.8, rel=0.1)
    assert model["libraries"]["mpich"]["operations"]["allreduce:sum"]["p_range"] == [2, 2]
    excluded = model["provenance"]["oversubscribed_excluded"]
    assert [(e["operation"], e["p"]) for e in excluded] == [("allreduce:nop", [3, 4]), ("allreduce:sum", [3, 4])]
    included = fit_points(points, oversubscribed="include")
    assert included["libraries"]["mpich"]["operations"]["allreduce:sum"]["oversubscribed_p"] == [3, 4]
