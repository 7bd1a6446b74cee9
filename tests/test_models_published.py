"""Test vectors from published.md: the AP3000 tables, in binary units as published."""

from __future__ import annotations

import numpy as np
import pytest

from commchar.models.laws import Law
from commchar.models.metrics import peak_metrics, point_to_point_metrics

TABLE1 = [
    # t_s, t_b, pi_s (KiB/s), Bw_as (MiB/s), n_half (B)
    ("MPI Send", 69, 0.0162, 14.15, 58.87, 4260),
    ("MPI Bsend", 84, 0.0213, 11.63, 44.77, 3944),
    ("MPI Ssend", 75, 0.0171, 13.02, 55.77, 4386),
    ("MPI Rsend", 69, 0.0162, 14.15, 58.87, 4260),
    ("PVM psend", 53, 0.0162, 18.43, 58.87, 3272),
    ("PVM send", 50, 0.0263, 19.53, 36.26, 1902),
    ("vendor l_send", 46, 0.0162, 21.23, 58.87, 2840),
]


@pytest.mark.parametrize("name,t_s,t_b,pi_s,bw_as,n_half", TABLE1, ids=[r[0] for r in TABLE1])
def test_table1_derived_metrics_match_published_digits(name, t_s, t_b, pi_s, bw_as, n_half):
    m = point_to_point_metrics([(0.0, 0.0, t_s, t_b)], "iec")
    assert f"{m['pi_s']:.2f}" == f"{pi_s:.2f}"
    assert f"{m['Bw_as']:.2f}" == f"{bw_as:.2f}"
    assert m["n_half"] == n_half
    assert m["units"] == {"bandwidth": "MiB/s", "specific_performance": "KiB/s", "length": "B"}


def test_table1_si_units_are_decimal():
    m = point_to_point_metrics([(0.0, 0.0, 69, 0.0162)], "si")
    assert m["Bw_as"] == pytest.approx(1e6 / 0.0162 / 1e6)  # 61.73 MB/s
    assert m["pi_s"] == pytest.approx(1e6 / 69 / 1e3)  # 14.49 kB/s


TABLE2 = {
    # t_s(p), t_b(p), pi_pag (KiB/s), Bw_pag (MiB/s), n_half_mag (B)
    "MPI": (Law("log", {"a": 0, "b": 69}), Law("log", {"a": 0, "b": 0.0162}), 43.43, 180.63, 4260),
    "PVM": (Law("linear", {"a": 0, "b": 22}), Law("linear", {"a": 0, "b": 0.0110}), 40.69, 79.47, 2000),
    "vendor": (Law("linear", {"a": 46 - 50, "b": 25}), Law("linear", {"a": 0.0162 - 0.0220, "b": 0.0110}),
               36.29, 83.13, 2346),
}


@pytest.mark.parametrize("library", TABLE2)
def test_table2_peak_metrics_from_broadcast_models(library):
    t_s, t_b, pi_pag, bw_pag, n_half_mag = TABLE2[library]
    peak = peak_metrics("bcast", t_s, t_b, range(2, 13), "iec")
    assert f"{peak['pi_pag']:.2f}" == f"{pi_pag:.2f}"
    assert f"{peak['Bw_pag']:.2f}" == f"{bw_pag:.2f}"
    assert peak["n_half_mag"] == n_half_mag
    assert peak["p_range"] == [2, 12]


def test_table2_vendor_law_is_the_published_one():
    t_s, t_b, *_ = TABLE2["vendor"]
    p = np.arange(2, 13)
    assert np.allclose(t_s(p), 46 + 25 * (p - 2))
    assert np.allclose(t_b(p), 0.0162 + 0.0110 * (p - 2))


def test_table4_reduce_rcc_at_2_and_12():
    t_b = Law("log", {"a": 0.0037, "b": 0.0171})
    t_c = Law("log", {"a": -0.0037, "b": 0.0051})
    r_cc = t_b(np.array([2.0, 12.0])) / t_c(np.array([2.0, 12.0]))
    assert f"{r_cc[0]:.2f}" == "14.86"
    assert f"{r_cc[1]:.2f}" == "4.46"


def test_published_laws_print_in_the_expression_language():
    from commchar.modelfile import parse_expr

    for law, text in [(Law("log", {"a": -15, "b": 90}), "90*log2(p) - 15"),
                      (Law("powlog", {"c": 0.0209, "e": -0.383}), "0.0209*log2(p)^-0.383"),
                      (Law("reciprocal", {"a": 0.0135, "b": 0.00296}), "1/(0.0135 - 0.00296*log2(p))"),
                      (Law("linear", {"a": 0, "b": 89}), "89*p")]:
        assert law.expr() == text
        for p in (2, 5, 12):
            assert parse_expr(text).evaluate(p) == pytest.approx(float(law(np.array([p]))[0]), rel=1e-9)


def _noise_free_points(op: str, variants: dict[str, tuple], sizes: list[int]) -> list[dict]:
    pts = []
    for variant, (t_s, t_b) in variants.items():
        for p in range(2, 13):
            for n in sizes:
                pts.append({"library": "ap3000", "op": op, "variant": variant, "p": p, "n_bytes": n,
                            "t_us": float(t_s(p) + t_b(p) * n)})
    return pts


def test_table4_reduce_rcc_through_fit_points():
    from commchar.models import fit_points

    lg = np.log2
    sizes = [0] + [2**k for k in range(3, 21)]
    pts = _noise_free_points("reduce", {
        "nop": (lambda p: 90 * lg(p) - 15, lambda p: 0.0171 * lg(p) + 0.0037),
        "sum": (lambda p: 90 * lg(p) - 15, lambda p: 0.0171 * lg(p) + 0.0037 + 0.0051 * lg(p) - 0.0037),
    }, sizes)
    model = fit_points(pts, units="iec")
    per_p = model["libraries"]["ap3000"]["operations"]["reduce:sum"]["metrics"]["per_p"]
    assert f"{per_p['2']['r_cc']:.2f}" == "14.86"
    assert f"{per_p['12']['r_cc']:.2f}" == "4.46"


@pytest.mark.parametrize("library", TABLE2)
def test_table2_peaks_through_fit_points(library):
    from commchar.models import fit_points

    t_s, t_b, pi_pag, bw_pag, n_half_mag = TABLE2[library]
    sizes = [0] + [2**k for k in range(0, 21)]
    model = fit_points(_noise_free_points("bcast", {"": (t_s, t_b)}, sizes), units="iec")
    op = model["libraries"]["ap3000"]["operations"]["bcast"]
    peak = op["metrics"]["peak"]
    assert f"{peak['pi_pag']:.2f}" == f"{pi_pag:.2f}"
    assert f"{peak['Bw_pag']:.2f}" == f"{bw_pag:.2f}"
    assert peak["n_half_mag"] == n_half_mag
    expected = {"MPI": "O(log p)", "PVM": "O(p)", "vendor": "O(p)"}[library]
    assert op["laws"]["t_s"]["complexity"] == expected
    assert op["laws"]["t_b"]["complexity"] == expected
