"""Every model through the same estimator contract (scikit-learn's convention, STYLE.md 7 and 9)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _model_data import TABLE4, collective_data, p2p_points

from commchar.errors import CommcharError, UsageError
from commchar.models import (
    CallCostModel, CollectiveModel, HockneyModel, LawSelector, LogGPModel, NotFittedError,
    SegmentedHockneyModel)

SIZES = [0] + [2**k for k in range(0, 21, 2)]


def _p2p():
    pts = p2p_points([(4096, 1.0, 0.0004), (np.inf, 6.0, 0.0001)], SIZES, 0.005, 0)
    return ([pt["n_bytes"] for pt in pts], [pt["t_us"] for pt in pts]), (np.array([0.0, 100.0, 1e6]),)


def _collective():
    n, p, t, v = collective_data(TABLE4["reduce"], 0.005, 0)
    return (n, p, t, v), (np.array([8.0, 1024.0]), 4, "sum")


def _law():
    p = np.arange(2, 9)
    return (p, 3.0 + 2.0 * np.log2(p)), (np.array([2.0, 16.0]),)


def _loggp():
    return (_loggp_points(),), (np.array([1.0, 1000.0]),)


def _loggp_points() -> list[dict]:
    pts = []
    for n in [0] + [2**k for k in range(0, 21, 2)]:
        pts.append({"op": "loggp", "n_bytes": n, "t_us": 1.0 + 0.0001 * n,
                    "extra": {"prtt1_us": 2.0 + 0.0002 * n, "gap_us": 0.3 + 0.0001 * n,
                              "o_s_us": 0.2 + 0.00001 * n, "o_r_us": 0.25}})
        pts.append({"op": "rndv", "n_bytes": n, "t_us": 0.5 if n < 16384 else 2000.0, "extra": {}})
    return pts


def _callcost():
    n = np.array([2.0 ** k for k in range(3, 15)])
    bare = 0.5 + 0.0002 * n
    return (n, 0.3 + 1.8 * bare, bare), (n, bare)


# model class, constructor kwargs, (fit args, predict args) factory
CASES = [
    (HockneyModel, {"bootstrap": 50, "seed": 3}, _p2p),
    (SegmentedHockneyModel, {"bootstrap": 20}, _p2p),
    (CollectiveModel, {"max_segments": 3}, _collective),
    (LawSelector, {"tolerance": 0.2}, _law),
    (LogGPModel, {"threshold_fraction": 0.4}, _loggp),
    (CallCostModel, {"penalty": 2.0}, _callcost),
]
IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_constructor_only_stores_parameters(cls, kwargs, data):
    model = cls(**kwargs)
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(model))
    params = model.get_params()
    for key, value in kwargs.items():
        assert params[key] == value
    assert cls.__name__ in repr(model)
    assert not model.is_fitted()


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_unfitted_model_refuses_to_predict(cls, kwargs, data):
    _, predict_args = data()
    with pytest.raises(NotFittedError, match="not fitted"):
        cls(**kwargs).predict(*predict_args)
    assert issubclass(NotFittedError, CommcharError)


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_fit_returns_self_sets_underscored_attributes_and_predicts(cls, kwargs, data):
    fit_args, predict_args = data()
    model = cls(**kwargs)
    assert model.fit(*fit_args) is model
    fitted = [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]
    assert fitted and model.is_fitted()
    assert set(model.get_params()) == set(kwargs) | set(cls._param_names())
    out = np.asarray(model.predict(*predict_args), dtype=float)
    assert out.shape == np.atleast_1d(predict_args[0]).shape
    assert np.all(np.isfinite(out)) and np.all(out > 0)


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_fit_is_deterministic_and_clonable(cls, kwargs, data):
    fit_args, predict_args = data()
    a = cls(**kwargs).fit(*fit_args)
    b = cls(**a.get_params()).fit(*fit_args)
    assert np.array_equal(np.asarray(a.predict(*predict_args)), np.asarray(b.predict(*predict_args)))


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_bad_parameter_is_reported_by_name_at_fit(cls, kwargs, data):
    fit_args, _ = data()
    name = next(iter(cls._parameter_constraints))
    model = cls(**kwargs).set_params(**{name: -5})  # constructors do not validate
    with pytest.raises(UsageError, match=f"{cls.__name__}: parameter {name} must be"):
        model.fit(*fit_args)
    with pytest.raises(UsageError, match="unknown parameter"):
        model.set_params(no_such_parameter=1)


def test_hockney_fits_relative_error_with_bootstrap_intervals():
    n = np.array([0] + [2**k for k in range(23)], dtype=float)
    rng = np.random.default_rng(0)
    t = (2.0 + 0.0001 * n) * np.exp(rng.normal(0, 0.01, n.size))
    h = HockneyModel().fit(n, t)
    # an unweighted fit would let the 4 MiB point decide t_s; relative error keeps it at 2 us
    assert h.t_s_ == pytest.approx(2.0, rel=0.03)
    assert h.t_b_ == pytest.approx(0.0001, rel=0.03)
    assert h.ci_["t_s"][0] < h.t_s_ < h.ci_["t_s"][1]
    assert h.ci_["Bw_as"][0] < 1 / h.t_b_ < h.ci_["Bw_as"][1]
    assert h.quality_["r2"] > 0.99 and h.quality_["max_rel_residual"] < 0.05
    assert HockneyModel().fit(n, t).ci_ == h.ci_  # fixed seed


def test_law_selector_prefers_simple_laws_with_few_p():
    # three p values: a 2-parameter shape law (power of log) must not be chosen
    law = LawSelector().fit([2, 3, 4], [10.0, 15.6, 19.8]).law_
    assert law.form in ("const", "log", "linear")
    flat = LawSelector().fit([2, 3, 4], [10.0, 10.02, 9.99])
    assert flat.law_.form == "const" and flat.law_.complexity() == "O(1)"
    two = LawSelector().fit([2, 4], [10.0, 20.0])
    assert two.underdetermined_ and "not determined" in two.describe()["note"]


def _broken(cls, fit_args):
    """The fit arguments with one bad value: a NaN time, or (LogGP) a size that is no number,
    which its fit meets only after it has begun setting fitted attributes."""
    args = [list(a) if isinstance(a, list) else np.array(a, dtype=float) for a in fit_args]
    if cls is LogGPModel:
        args[0] = [dict(pt) for pt in args[0]]
        rndv = next(i for i, pt in enumerate(args[0]) if pt["op"] == "rndv")
        args[0][rndv]["n_bytes"] = "x"
        return args
    times = 2 if cls in (CollectiveModel, CallCostModel) else len(args) - 1
    args[times][len(args[times]) // 2] = np.nan
    return args


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_failed_fit_leaves_the_model_unfitted(cls, kwargs, data):
    fit_args, predict_args = data()
    model = cls(**kwargs)
    with pytest.raises(Exception):
        model.fit(*_broken(cls, fit_args))
    assert [k for k in vars(model) if k.endswith("_") and not k.startswith("_")] == []
    with pytest.raises(NotFittedError):
        model.predict(*predict_args)


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=IDS)
def test_failed_refit_keeps_the_previous_fit(cls, kwargs, data):
    fit_args, predict_args = data()
    model = cls(**kwargs).fit(*fit_args)
    before = np.asarray(model.predict(*predict_args), dtype=float)
    with pytest.raises(Exception):
        model.fit(*_broken(cls, fit_args))
    assert np.array_equal(np.asarray(model.predict(*predict_args), dtype=float), before)


def test_loggp_fit_that_fails_part_way_is_not_fitted():
    """LogGP's fit sets delay_us_ before it reads the sizes: a failure after that point
    used to leave a model that claimed to be fitted."""
    model = LogGPModel()
    with pytest.raises(ValueError):
        model.fit([{"op": "rndv", "n_bytes": "x", "t_us": 1.0}])
    assert not model.is_fitted() and "delay_us_" not in vars(model)


@pytest.mark.parametrize("n,t,message", [
    ([0, np.nan, 8], [1, 2, 3], "must be finite numbers"),
    ([0, 4, 8], [1, np.inf, 3], "must be finite numbers"),
    ([0, -np.inf, 8], [1, 2, 3], "must be finite numbers"),
    ([0, -4, 8], [1, 2, 3], "sizes must be >= 0 and times > 0"),
    ([0, 4, 8], [1, 0, 3], "sizes must be >= 0 and times > 0"),
    ([0, 4, 8], [1, 1e-31, 3], "times must be between"),
    ([0, 4, 8], [1, 2e30, 3], "times must be between"),
    ([8, 8, 8], [1, 2, 3], "a single size (8 B)"),
    ([8], [1], "too few points"),
    ([0, 4], [1, 2, 3], "2 sizes but 3 times"),
])
def test_a_hockney_fits_inputs_are_checked_with_one_message(n, t, message):
    from commchar.errors import InputError

    with pytest.raises(InputError, match=re.escape(message)):
        HockneyModel().fit(n, t)
