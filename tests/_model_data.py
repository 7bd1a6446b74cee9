"""Synthetic measurements from known models (shared by the model tests)."""

from __future__ import annotations

from typing import Callable

import numpy as np

lg = np.log2
Law = Callable[[np.ndarray], np.ndarray]

# Published AP3000 laws (published.md Tables 3 and 4): form name, function.
TABLE3: dict[str, dict[str, tuple[str, Law]]] = {
    "scatter": {"t_s": ("linear", lambda p: 58 + 53 * p), "t_b": ("powlog", lambda p: 0.0209 * lg(p) ** -0.3830)},
    "gather": {"t_s": ("reciprocal", lambda p: 1 / (0.0135 - 0.00296 * lg(p))),
               "t_b": ("powlog", lambda p: 0.0252 * lg(p) ** -0.1473)},
    "allgather": {"t_s": ("linear", lambda p: 95 * p - 24), "t_b": ("log", lambda p: 0.0239 + 0.00279 * lg(p))},
    "alltoall": {"t_s": ("linear", lambda p: 89 * p), "t_b": ("linear", lambda p: 0.0291 + 0.000884 * p)},
}
TABLE4: dict[str, dict[str, tuple[str, Law]]] = {
    "reduce": {"t_s": ("log", lambda p: 90 * lg(p) - 15), "t_b": ("log", lambda p: 0.0171 * lg(p) + 0.0037),
               "t_c": ("log", lambda p: 0.0051 * lg(p) - 0.0037)},
    "allreduce": {"t_s": ("log", lambda p: 144 * lg(p) + 15), "t_b": ("log", lambda p: 0.0344 * lg(p)),
                  "t_c": ("log", lambda p: 0.0038 * lg(p) - 0.0026)},
    "reduce_scatter": {"t_s": ("log", lambda p: 279 * lg(p) - 57), "t_b": ("log", lambda p: 0.0147 * lg(p) + 0.0262),
                       "t_c": ("log", lambda p: 0.0046 * lg(p) + 0.0049)},
    "scan": {"t_s": ("linear", lambda p: 70 * p + 38), "t_b": ("linear", lambda p: 0.0145 * p + 0.0116),
             "t_c": ("linear", lambda p: 0.0071 * p - 0.0079)},
}

SIZES = [0] + [2**k for k in range(3, 21)]  # 0, 8 B .. 1 MiB as the AP3000 study
P_VALUES = np.arange(2, 13)


def collective_data(laws: dict[str, tuple[str, Law]], noise: float, seed: int
                    ) -> tuple[list[float], list[float], list[float], list[str]]:
    """(n, p, t, variant) of T = t_s + t_b n (+ t_c n for `sum`) with lognormal noise."""
    rng = np.random.default_rng(seed)
    variants = ("sum", "nop") if "t_c" in laws else ("",)
    n_, p_, t_, v_ = [], [], [], []
    for p in P_VALUES:
        for n in SIZES:
            for v in variants:
                t = laws["t_s"][1](p) + laws["t_b"][1](p) * n + (laws["t_c"][1](p) * n if v == "sum" else 0.0)
                n_.append(n)
                p_.append(p)
                t_.append(float(t * np.exp(rng.normal(0.0, noise))))
                v_.append(v)
    return n_, p_, t_, v_


def p2p_points(regimes: list[tuple[float, float, float]], sizes: list[int], noise: float, seed: int,
               library: str = "lib", op: str = "pingpong", variant: str = "send") -> list[dict]:
    """Points of a piecewise Hockney model: regimes are (n_max, t_s, t_b), the last n_max inf."""
    rng = np.random.default_rng(seed)
    pts = []
    for n in sizes:
        t_s, t_b = next((ts, tb) for n_max, ts, tb in regimes if n <= n_max)
        pts.append({"library": library, "op": op, "variant": variant, "p": 2, "n_bytes": n,
                    "t_us": float((t_s + t_b * n) * np.exp(rng.normal(0.0, noise))),
                    "valid": True, "oversubscribed": False, "extra": {}})
    return pts


def loggp_findings(key: str, entry: dict | None, marker: str) -> list[str]:
    """The report's threshold findings of a model whose loggp section holds only `key`: entry,
    those whose text holds `marker`."""
    from commchar.report.adapters import ModelView
    from commchar.report.dataset import Entity
    from commchar.report.findings import thresholds

    view = ModelView("lib", {"operations": {}, "loggp_partial": {key: entry}}, "test")
    return [f.text for f in thresholds(Entity("lib", "lib", {}, [], [], [], model=view)) if marker in f.text]
