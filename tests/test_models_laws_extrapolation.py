"""Laws in p chosen for extrapolation: known step-count laws recovered from p <= 8 and
predicted at p = 12 and 16; the forms' model-file expressions; `commchar fit --np`;
bench/laws_extrapolation.py on synthetic points."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from commchar.cli import main
from commchar.modelfile import parse_expr
from commchar.models import CollectiveModel, LawSelector
from commchar.models.laws import EXTRAPOLATION_FORMS, FREE_FORM_MARGIN, fit_form

FIT_P = np.array([2, 3, 4, 6, 8])
HELD_OUT_P = np.array([12, 16])
SIZES = [0] + [2**k for k in range(3, 21)]
BENCH = Path(__file__).resolve().parents[1] / "bench" / "laws_extrapolation.py"


def ceil_lg(p):
    return np.ceil(np.log2(p))


def floor_lg(p):
    return np.floor(np.log2(p))


def not_pow2(p):
    return ceil_lg(p) - floor_lg(p)


# Step-count laws of the algorithms libraries run: (form, truth).
STEP_LAWS = {
    "ceillog": lambda p: 1.5 + 2.0 * ceil_lg(p),                       # binomial tree, Bruck, dissemination
    "pow2gap": lambda p: 1.0 + 3.0 * floor_lg(p) + 2.5 * not_pow2(p),  # recursive halving at any p
    "share": lambda p: 0.2 + 0.8 * (p - 1) / p,                        # scatter + allgather volume
}


def _noisy(values: np.ndarray, noise: float, seed: int) -> np.ndarray:
    return values * np.exp(np.random.default_rng(seed).normal(0.0, noise, values.size))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("form", list(STEP_LAWS))
def test_a_step_count_law_is_recovered_from_small_p_and_extrapolated(form, seed):
    truth = STEP_LAWS[form]
    p = np.repeat(FIT_P, 3)
    selector = LawSelector(select="extrapolate").fit(p, _noisy(truth(p), 0.01, seed))
    assert selector.selection_ == "extrapolate"
    assert selector.law_.form == form, selector.cv_errors_
    predicted = selector.predict(HELD_OUT_P)
    assert np.all(np.abs(predicted / truth(HELD_OUT_P) - 1) < 0.05), (selector.law_.expr(), predicted)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_log_law_is_extrapolated_within_a_few_percent(seed):
    p = np.repeat(FIT_P, 2).astype(float)
    selector = LawSelector(select="extrapolate").fit(p, _noisy(2.0 + 1.0 * np.log2(p), 0.02, seed))
    assert selector.law_.complexity() == "O(log p)", selector.law_.expr()
    truth = 2.0 + np.log2(HELD_OUT_P)
    assert np.all(np.abs(selector.predict(HELD_OUT_P) / truth - 1) < 0.10), selector.law_.expr()


def test_an_upward_curve_must_predict_the_larger_p_five_times_better_than_a_step_count():
    # Leave-one-out takes a + b p log2 p through these five values; predicting the larger p
    # from the smaller ones it errs 0.07 against 0.33 for a + b log2 p: better, but not
    # FREE_FORM_MARGIN (5x) better, so the extrapolating choice keeps the step count.
    p = FIT_P.astype(float)
    y = [1.0, 1.3, 1.7, 2.6, 3.9]
    assert LawSelector().fit(p, y).law_.form == "plogp"
    chosen = LawSelector(select="extrapolate").fit(p, y)
    errors = chosen.cv_errors_
    assert errors["plogp"] < errors["log"] and errors["plogp"] > FREE_FORM_MARGIN * errors["log"]
    assert chosen.law_.form == "log"
    # the same values with the margin waived take the curve
    assert min(errors, key=errors.get) == "plogp"


def test_published_free_forms_still_win_when_the_data_say_so():
    p = np.arange(2, 13, dtype=float)
    for form, truth in (("linear", lambda q: 58 + 53 * q), ("quadratic", lambda q: 3 + 0.5 * q * q)):
        law = LawSelector(select="extrapolate").fit(p, _noisy(truth(p), 0.002, 0)).law_
        assert law.form == form, law.expr()


def test_extrapolated_laws_never_fall_with_p():
    p = FIT_P.astype(float)
    falling = 10.0 - 2.0 * np.log2(p)
    selector = LawSelector(select="extrapolate").fit(p, falling)
    assert selector.law_.form == "const"
    assert np.all(np.diff(selector.predict(np.arange(2, 65))) >= 0)
    # leave-one-out (the default selection) follows the data down
    assert LawSelector().fit(p, falling).law_.params["b"] < 0


def test_too_few_p_to_hold_out_gives_log_unless_another_form_is_far_closer():
    three = np.array([2.0, 3.0, 4.0])
    noisy = LawSelector(select="extrapolate").fit(three, [1.0, 1.9, 2.1])
    assert (noisy.selection_, noisy.law_.form) == ("loo", "log")
    linear = LawSelector(select="extrapolate").fit(three, 3.0 + 2.0 * three)
    assert linear.law_.form == "linear"


@pytest.mark.parametrize("form", EXTRAPOLATION_FORMS)
def test_every_form_is_written_as_an_expression_that_evaluates_to_the_law(form):
    p = np.array([2, 3, 4, 5, 6, 8, 12, 16], dtype=float)
    y = 3.0 + np.log2(p) + 0.1 * not_pow2(p) + 0.01 * p
    law = fit_form(form, p, y)
    assert law is not None
    expr = parse_expr(law.expr(12))
    for q in (2, 3, 7, 12, 16, 1000):
        assert expr.evaluate(q) == pytest.approx(float(law(np.array([q]))[0]), rel=1e-9), law.expr()


def test_ceil_and_floor_in_the_expression_language():
    assert parse_expr("ceil(log2(p))").evaluate(8) == 3
    assert parse_expr("ceil(log2(p))").evaluate(9) == 4
    assert parse_expr("floor(log2(p))").evaluate(15) == 3
    assert parse_expr("2*(ceil(log2(p)) - floor(log2(p)))").evaluate(12) == 2


def _collective(t_s, t_b, ps, seed: int, noise: float = 0.01):
    rng = np.random.default_rng(seed)
    n_, p_, t_ = [], [], []
    for p in ps:
        for n in SIZES:
            n_.append(n)
            p_.append(p)
            t = (0.02 if n == 0 else t_s(p) + t_b(p) * n)
            t_.append(float(t * np.exp(rng.normal(0.0, noise))))
    return n_, p_, t_


@pytest.mark.parametrize("seed", [0, 1])
def test_a_collective_fitted_at_p_up_to_8_predicts_12_and_16(seed):
    # t_s: a Bruck-like ceil(log2 p); t_b: the node's traffic p(p-1) of an alltoall on shared memory
    t_s = lambda p: 2.0 + 1.2 * ceil_lg(p)  # noqa: E731
    t_b = lambda p: 1e-4 + 2e-5 * p * (p - 1)  # noqa: E731
    model = CollectiveModel(op="alltoall").fit(*_collective(t_s, t_b, FIT_P, seed))
    assert (model.law(1, "t_s").form, model.law(1, "t_b").form) == ("ceillog", "pairs")
    for p in HELD_OUT_P:
        n = np.array([8.0, 4096.0, 1048576.0])
        truth = t_s(p) + t_b(p) * n
        assert np.all(np.abs(model.predict(n, p) / truth - 1) < 0.05)


def _csv_points(path: Path) -> Path:
    t_s = lambda p: 1.0 + 0.8 * ceil_lg(p)  # noqa: E731
    t_b = lambda p: 2e-4 * (1 + np.log2(p))  # noqa: E731
    rng = np.random.default_rng(3)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["library", "op", "variant", "p", "n_bytes", "t_us"])
        for p in (2, 3, 4, 6, 8, 12, 16):
            for n in SIZES:
                t = 0.02 if n == 0 else t_s(p) + t_b(p) * n
                writer.writerow(["lib", "bcast", "", p, n, float(t * math.exp(rng.normal(0, 0.005)))])
    return path


def test_fit_np_fits_only_those_process_counts(tmp_path, capsys):
    points = _csv_points(tmp_path / "points.csv")
    out = tmp_path / "model.json"
    assert main(["fit", "--csv", str(points), "--np", "2:8", "--call-costs", "off", "-o", str(out)]) == 0
    bcast = json.loads(out.read_text())["libraries"]["lib"]["operations"]["bcast"]
    assert bcast["p_range"] == [2, 8]
    assert bcast["laws"]["t_s"]["selection"] == "extrapolate"
    capsys.readouterr()
    assert main(["fit", "--csv", str(points), "--np", "5", "--call-costs", "off"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "commchar: error: commchar fit: no point at --np 5 (measured at p = 2,3,4,6,8,12,16)", err


def _bench():
    spec = importlib.util.spec_from_file_location("laws_extrapolation", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_bench_predicts_held_out_p_from_the_fitted_ones(tmp_path, capsys):
    bench = _bench()
    with _csv_points(tmp_path / "points.csv").open() as fh:
        points = [{"library": r["library"], "op": r["op"], "variant": r["variant"], "p": int(r["p"]),
                   "n_bytes": int(r["n_bytes"]), "t_us": float(r["t_us"]), "valid": True,
                   "oversubscribed": False} for r in csv.DictReader(fh)]
    result = bench.evaluate(points, [2, 3, 4, 6, 8], [12, 16])
    assert {r[3] for r in result["rows"]} == {12, 16} and len(result["rows"]) == 2 * len(SIZES)
    sized = bench.summary([r for r in result["rows"] if r[2] > 0])
    assert sized["median"] < 0.03 and abs(sized["worst"]) < 0.10 and sized["within"] == 1.0
    assert result["fitted_p"] == [2, 3, 4, 6, 8]
    assert bench.print_report(result, [12, 16], "extrapolate") == 0
    out = capsys.readouterr().out
    assert "fitted from p = 2,3,4,6,8, predicted at p = 12,16" in out and "all points: 38 points" in out
    floor = bench.evaluate(points, [2, 3, 4, 6, 8], [12, 16], in_sample=True)
    assert floor["fitted_p"] == [2, 3, 4, 6, 8, 12, 16]


def _bcast_points(library: str, times: dict[int, float], n: int = 16384) -> list[dict]:
    return [{"library": library, "op": "bcast", "variant": "", "p": p, "n_bytes": size,
             "t_us": t * size / n, "valid": True, "oversubscribed": False}
            for p, t in times.items() for size in (n, 2 * n, 4 * n)]


def test_bench_sums_apart_the_points_whose_algorithm_no_fitted_p_ran(capsys):
    # MPICH on one node: a bcast of 16-64 KiB runs release_gather at p = 2..8 and 16, the MPIR
    # ring at p = 12 (ch4 composition gamma), which no fitted p ran at those sizes
    bench = _bench()
    times = {2: 3.6, 3: 3.7, 4: 4.4, 6: 4.8, 8: 4.8, 12: 27.5, 16: 5.5}
    result = bench.evaluate(_bcast_points("mpich", times), [2, 3, 4, 6, 8], [12, 16])
    assert set(result["unseen"]) == {("mpich", "bcast", n, 12) for n in (16384, 32768, 65536)}
    assert set(result["unseen"].values()) == {"MPIR_Bcast_intra_scatter_ring_allgather"}
    assert bench.print_report(result, [12, 16], "extrapolate") == 0
    out = capsys.readouterr().out
    assert "an algorithm a fitted p ran: 3 points" in out
    assert "an algorithm no fitted p ran at that size: 3 points" in out
    assert "MPIR_Bcast_intra_scatter_ring_allgather: bcast n=16384 p=12" in out
    # an operation without selection rules (a nonblocking bcast) is not marked, nor does it stop the bench
    ibcast = [{**pt, "op": "ibcast"} for pt in _bcast_points("mpich", times)]
    assert bench.evaluate(ibcast, [2, 3, 4, 6, 8], [12, 16])["unseen"] == {}
    # a library without selection rules has no such split
    plain = bench.evaluate(_bcast_points("lib", times), [2, 3, 4, 6, 8], [12, 16])
    assert plain["unseen"] == {}
    bench.print_report(plain, [12, 16], "extrapolate")
    assert "no fitted p ran" not in capsys.readouterr().out


def test_bench_sets_the_points_beside_a_second_store(tmp_path, capsys):
    bench = _bench()
    times = {2: 3.6, 3: 3.7, 4: 4.4, 6: 4.8, 8: 4.8, 12: 5.2, 16: 5.5}
    result = bench.evaluate(_bcast_points("lib", times), [2, 3, 4, 6, 8], [12, 16])
    other = _bcast_points("lib", {**times, 12: 5.2 * 1.1})
    again = bench.agreement(result["rows"], other)
    assert len(again) == len(result["rows"]) == 6
    errors = sorted(round(r[6], 6) for r in again)
    assert errors == [0.0] * 3 + [0.1] * 3
    assert bench.agreement(result["rows"], _bcast_points("lib", {2: 1.0})) == []


def test_bench_refuses_a_run_of_a_second_store_it_was_not_given(capsys):
    with pytest.raises(SystemExit) as exc:
        _bench().main(["--db", "x.db", "--against-run", "2"])
    assert exc.value.code == 2
    assert "--against-run needs --against DB2" in capsys.readouterr().err
