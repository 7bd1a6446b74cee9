"""Laws in p: which complexity class a term t_s(p), t_b(p), t_c(p) follows,
and the best-known algorithm's class per operation (reference models.md section 6).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from commchar.errors import ModelError
from commchar.modelfile import Expr


@dataclass(frozen=True)
class Law:
    """A complexity class in p: its name, rank (higher grows faster) and growth function."""

    name: str
    rank: int
    growth: Callable[[float], float]


CONSTANT = Law("O(1)", 0, lambda p: 1.0)
LOG = Law("O(log p)", 1, lambda p: math.log2(p))
LINEAR = Law("O(p)", 2, lambda p: p)
P_LOG = Law("O(p log p)", 3, lambda p: p * math.log2(p))
QUADRATIC = Law("O(p^2)", 4, lambda p: p * p)
LAWS = (CONSTANT, LOG, LINEAR, P_LOG, QUADRATIC)

_BY_NAME = {
    "o(1)": CONSTANT, "o(logp)": LOG, "o(log2p)": LOG, "o(lgp)": LOG, "o(log(p))": LOG, "o(log2(p))": LOG,
    "o(p)": LINEAR, "o(plogp)": P_LOG, "o(plog2p)": P_LOG, "o(p*logp)": P_LOG, "o(p^2)": QUADRATIC, "o(p2)": QUADRATIC,
}

# A simpler law is kept when it explains the values within this share of their RMS.
TOLERANCE = 0.01


def law_named(text: str) -> Law | None:
    """The Law a `laws.*.complexity` string names (`O(log p)`, `O(p)`...), or None."""
    return _BY_NAME.get(re.sub(r"\s+", "", text).lower())


@dataclass(frozen=True)
class Classification:
    law: Law
    relative_rms: float  # of the chosen law's least-squares fit a + b*growth(p)


def classify(expr: Expr, ps: Sequence[float]) -> Classification:
    """Fit a + b*f(p) for each candidate law f over the p values and pick the law.

    A term that does not grow over the range is O(1). Otherwise the simplest
    law with b > 0 whose relative RMS residual is within TOLERANCE of the best
    one's wins, so an exact `a + b*log2(p)` is O(log p) and `95*p - 24` O(p).
    """
    ps = sorted({float(p) for p in ps if p >= 2})
    if len(ps) < 3:
        ps = [2.0, 3.0, 4.0] if not ps else [ps[0], ps[0] * 2, ps[0] * 4]
    y = np.array([expr.evaluate(p) for p in ps])
    scale = float(np.sqrt(np.mean(y * y))) or 1.0
    if y[-1] <= y[0] + 1e-12 * scale:
        return Classification(CONSTANT, 0.0)
    fits: list[tuple[Law, float]] = []
    constant_error = float(np.sqrt(np.mean((y - y.mean()) ** 2))) / scale
    fits.append((CONSTANT, constant_error))
    for law in LAWS[1:]:
        g = np.array([law.growth(p) for p in ps])
        design = np.column_stack([np.ones_like(g), g])
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        if coef[1] <= 0:
            continue
        error = float(np.sqrt(np.mean((design @ coef - y) ** 2))) / scale
        fits.append((law, error))
    best_error = min(error for _, error in fits)
    for law, error in sorted(fits, key=lambda f: f[0].rank):
        if error <= best_error + TOLERANCE:
            return Classification(law, error)
    raise AssertionError("unreachable: the best fit is always within tolerance of itself")


def _lg(p: float) -> float:
    return math.log2(p)


def _ceil_lg(p: float) -> float:
    return float(math.ceil(math.log2(p) - 1e-12))


def _share(p: float) -> float:
    return (p - 1) / p


def _twice_share(p: float) -> float:
    return 2 * (p - 1) / p


@dataclass(frozen=True)
class BestKnown:
    """The best-known algorithm's term: `factor(p)` times alpha, beta or gamma (`parameter`)."""

    law: Law
    algorithm: str
    parameter: str  # "alpha" (t_s), "beta" (t_b) or "gamma" (t_c)
    factor: Callable[[float], float]


def _terms(startup: tuple[str, Callable[[float], float]], per_byte: tuple[str, Law, Callable[[float], float]] | None,
           compute: tuple[str, Law, Callable[[float], float]] | None = None) -> dict[str, BestKnown]:
    terms = {"t_s": BestKnown(LOG, startup[0], "alpha", startup[1])}
    if per_byte:
        terms["t_b"] = BestKnown(per_byte[1], per_byte[0], "beta", per_byte[2])
    if compute:
        terms["t_c"] = BestKnown(compute[1], compute[0], "gamma", compute[2])
    return terms


# Per operation and term, the best-known algorithm's cost (models.md section 6,
# alpha-beta-gamma model, n as defined there), taking the cheapest algorithm
# for each term separately. Reduce is not in the table: reduce_scatter
# (recursive halving) then a binomial gather gives its per-byte terms
# (Rabenseifner's reduce, as in MPICH).
BEST_KNOWN: dict[str, dict[str, BestKnown]] = {
    "barrier": _terms(("dissemination", _ceil_lg), None),
    "bcast": _terms(("binomial tree", _ceil_lg), ("scatter + allgather (van de Geijn)", CONSTANT, _twice_share)),
    "scatter": _terms(("binomial tree", _lg), ("binomial tree", CONSTANT, _share)),
    "gather": _terms(("binomial tree", _lg), ("binomial tree", CONSTANT, _share)),
    "allgather": _terms(("recursive doubling or Bruck", _lg), ("recursive doubling, Bruck or ring", CONSTANT, _share)),
    "alltoall": _terms(("Bruck", _lg), ("Bruck", LOG, lambda p: _lg(p) / 2)),
    "reduce": _terms(("binomial tree", _lg), ("reduce_scatter + gather (Rabenseifner)", CONSTANT, _twice_share),
                     ("reduce_scatter + gather (Rabenseifner)", CONSTANT, _share)),
    "allreduce": _terms(("recursive doubling", _lg), ("reduce_scatter + allgather (Rabenseifner)", CONSTANT, _twice_share),
                        ("reduce_scatter + allgather (Rabenseifner)", CONSTANT, _share)),
    "reduce_scatter": _terms(("recursive halving", _lg), ("recursive halving", CONSTANT, _share),
                             ("recursive halving", CONSTANT, _share)),
    "scan": _terms(("recursive doubling", _lg), ("recursive doubling", LOG, _lg), ("recursive doubling", LOG, _lg)),
}


def value_or_none(expr: Expr, p: float) -> float | None:
    """expr at p, or None where it is not a number (a law beyond its pole)."""
    try:
        return expr.evaluate(p)
    except ModelError:
        return None
