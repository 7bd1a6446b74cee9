"""Laws in p: the one home of everything commchar says about how a cost grows with p.

- Complexity classes (O(1), O(log p), O(p), ...) with their ranks and names, and
  the one classifier that puts a function of p in a class (`classify`): the fit
  labels its laws with it, the advisor labels a hand-written model's terms with it.
- The best-known algorithm per collective and term (`BEST_KNOWN`, models.md
  section 6), against which the advisor and the report judge a library.
- Fitted laws: the forms of the published tables and the step counts of the
  algorithms libraries run. Candidates: a + b f(p) with f in {1, log2 p, p,
  p log2 p, p^2, p(p-1), ceil(log2 p), (p-1)/p}, a + b floor(log2 p) + c [p not
  a power of two], c (log2 p)^e, and 1/(a - b log2 p). Each is fitted on
  relative error.
  `LawSelector(select="loo")` keeps the simplest form whose leave-one-out error
  is close to the best one (the few p values of a small machine cannot tell
  apart forms that the noise hides); `select="extrapolate"` (the collectives'
  laws) scores each form by predicting the larger measured p from the smaller
  ones, prefers the algorithms' step counts, and keeps a + b log2 p unless
  another form does clearly better there.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, number_in

# --- complexity classes ----------------------------------------------------------


@dataclass(frozen=True)
class ComplexityClass:
    """A complexity class in p: its name, rank (higher grows faster) and growth function
    (None for classes that are named in model files but never chosen by the classifier)."""

    name: str
    rank: float
    growth: Callable[[np.ndarray], np.ndarray] | None = None


CONSTANT = ComplexityClass("O(1)", 0, lambda p: np.ones_like(p))
LOG = ComplexityClass("O(log p)", 1, lambda p: np.log2(p))
LOG_SQUARED = ComplexityClass("O(log^2 p)", 2)
SQRT = ComplexityClass("O(sqrt p)", 2.5)
LINEAR = ComplexityClass("O(p)", 3, lambda p: p)
P_LOG = ComplexityClass("O(p log p)", 4, lambda p: p * np.log2(p))
QUADRATIC = ComplexityClass("O(p^2)", 5, lambda p: p * p)
# the classes the classifier chooses among, in rank order
CLASSES = (CONSTANT, LOG, LINEAR, P_LOG, QUADRATIC)

# Spellings found in model files (written by hand or by other tools), compacted:
# no spaces, lower case.
_BY_NAME = {
    "o(1)": CONSTANT,
    **dict.fromkeys(("o(logp)", "o(log2p)", "o(lgp)", "o(log(p))", "o(log2(p))"), LOG),
    **dict.fromkeys(("o(log^2p)", "o((logp)^2)", "o(log2^2p)"), LOG_SQUARED),
    **dict.fromkeys(("o(sqrtp)", "o(sqrt(p))", "o(p^0.5)"), SQRT),
    "o(p)": LINEAR,
    **dict.fromkeys(("o(plogp)", "o(plog2p)", "o(p*logp)", "o(p*log2(p))"), P_LOG),
    **dict.fromkeys(("o(p^2)", "o(p2)"), QUADRATIC),
}


def class_named(text: object) -> ComplexityClass | None:
    """The class a `laws.*.complexity` string names (`O(log p)`, `O(p)`...), or None."""
    if not isinstance(text, str):
        return None
    return _BY_NAME.get(re.sub(r"\s+", "", text).lower())


def classify(values: Callable[[np.ndarray], np.ndarray], low: float, high: float) -> ComplexityClass:
    """The class of a function of p over [low, high] (p >= 2): a function that does not
    grow is O(1); otherwise the class whose a + b*growth(p) (b > 0) follows it with the
    smallest largest relative error over 24 points spread geometrically."""
    p = np.unique(np.round(np.geomspace(max(low, 2.0), max(high, low + 1.0, 3.0), 24)))
    with np.errstate(all="ignore"):  # a law may blow up beyond its range: then it is not classed
        y = np.asarray(values(p), dtype=float)
    if not np.all(np.isfinite(y)) or np.any(y == 0) or abs(y[-1]) <= abs(y[0]) * 1.02:
        return CONSTANT
    best, best_err = CONSTANT, float(np.max(np.abs(y - y.mean()) / np.abs(y)))
    for cls in CLASSES[1:]:
        f = cls.growth(p)  # type: ignore[misc]
        A = np.column_stack([np.ones_like(p), f]) / y[:, None]
        (a, b), *_ = np.linalg.lstsq(A, np.ones_like(p), rcond=None)
        if b <= 0:
            continue
        err = float(np.max(np.abs(a + b * f - y) / np.abs(y)))
        if err < best_err:
            best, best_err = cls, err
    return best


# --- the best-known algorithms (models.md section 6) ------------------------------


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

    law: ComplexityClass
    algorithm: str
    parameter: str  # "alpha" (t_s), "beta" (t_b) or "gamma" (t_c)
    factor: Callable[[float], float]


def _terms(startup: tuple[str, Callable[[float], float]],
           per_byte: tuple[str, ComplexityClass, Callable[[float], float]] | None,
           compute: tuple[str, ComplexityClass, Callable[[float], float]] | None = None) -> dict[str, BestKnown]:
    terms = {"t_s": BestKnown(LOG, startup[0], "alpha", startup[1])}
    if per_byte:
        terms["t_b"] = BestKnown(per_byte[1], per_byte[0], "beta", per_byte[2])
    if compute:
        terms["t_c"] = BestKnown(compute[1], compute[0], "gamma", compute[2])
    return terms


# Per operation and term, the best-known algorithm's cost (models.md section 6,
# alpha-beta-gamma model, n as defined there), taking the cheapest algorithm
# for each term separately. Every collective has a tree, dissemination,
# recursive-doubling or Bruck algorithm with O(log p) startups. Reduce's per-byte
# terms are reduce_scatter (recursive halving) then a binomial gather
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


def best_known_class(op: str, term: str) -> ComplexityClass | None:
    """The class of the best-known algorithm's `term` (t_s, t_b, t_c) for `op`, if known."""
    best = BEST_KNOWN.get(op, {}).get(term)
    return best.law if best else None


# --- fitted laws ---------------------------------------------------------------

def _ceil_log2(p: np.ndarray) -> np.ndarray:
    """Rounds of a binomial tree, Bruck or dissemination: ceil(log2 p) (exact at powers of two)."""
    return np.ceil(np.log2(p))


def _floor_log2(p: np.ndarray) -> np.ndarray:
    return np.floor(np.log2(p))


def _not_pow2(p: np.ndarray) -> np.ndarray:
    """1 where p is not a power of two: the extra step of recursive doubling/halving there."""
    return _ceil_log2(p) - _floor_log2(p)


# name -> (f(p), expression of f, complexity class of a + b f with b > 0)
LINEAR_FORMS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], str, ComplexityClass]] = {
    "log": (LOG.growth, "log2(p)", LOG),  # type: ignore[dict-item]
    "linear": (LINEAR.growth, "p", LINEAR),  # type: ignore[dict-item]
    "plogp": (P_LOG.growth, "p*log2(p)", P_LOG),  # type: ignore[dict-item]
    "quadratic": (QUADRATIC.growth, "p^2", QUADRATIC),  # type: ignore[dict-item]
    "ceillog": (_ceil_log2, "ceil(log2(p))", LOG),
    "share": (lambda p: (p - 1) / p, "(1 - 1/p)", CONSTANT),
    "pairs": (lambda p: p * (p - 1), "p*(p - 1)", QUADRATIC),
}
# a + b floor(log2 p) + c [p not a power of two]: recursive doubling or halving, whose
# non-power-of-two p pay one (or two) extra full-vector steps to fold the extra ranks in
POW2GAP_TEXT = "ceil(log2(p)) - floor(log2(p))"
FORMS = ("const", "log", "linear", "plogp", "quadratic", "powlog", "reciprocal")
# The collectives' candidates: the published forms and the algorithms' step counts.
ALGORITHM_FORMS = ("ceillog", "share", "pow2gap")
EXTRAPOLATION_FORMS = (*FORMS, *ALGORITHM_FORMS, "pairs")
FAMILY_TEXT = {
    "const": "a", "log": "a + b*log2(p)", "linear": "a + b*p", "plogp": "a + b*p*log2(p)",
    "quadratic": "a + b*p^2", "powlog": "c*log2(p)^e", "reciprocal": "1/(a - b*log2(p))",
    "ceillog": "a + b*ceil(log2(p))", "share": "a + b*(1 - 1/p)", "pairs": "a + b*p*(p - 1)",
    "pow2gap": "a + b*floor(log2(p)) + c*(ceil(log2(p)) - floor(log2(p)))",
}
MIN_P_FOR_SHAPE = 5
POWER_IS_ONE = 0.05  # |e - 1| below which c*log2(p)^e is reported as a + b*log2(p)
N_PARAMS = {"const": 1, "powlog": 2, "reciprocal": 2, "pow2gap": 3, **{k: 2 for k in LINEAR_FORMS}}
SHAPE_FORMS = ("powlog", "reciprocal")
# Forward validation: the smallest number of p values a law is fitted from before it
# predicts the larger ones; with no more distinct p than this, nothing is held out and
# "extrapolate" keeps a + b log2 p unless leave-one-out finds a far closer form.
MIN_P_TO_EXTRAPOLATE = 3
STEP_FORMS = ("const", "log", *ALGORITHM_FORMS)
FREE_FORM_MARGIN = 0.2


def num(x: float, digits: int = 6) -> str:
    """A number for the model-file expression language (6 significant digits)."""
    text = f"{x:.{digits}g}"
    return "0" if text in ("-0", "0") else text


def _affine_text(a: float, b: float, f_text: str, digits: int) -> str:
    """b*f + a with the sign written as an operator ("90*log2(p) - 15")."""
    head = f"{num(b, digits)}*{f_text}"
    if num(a, digits) == "0":
        return head
    return f"{head} - {num(-a, digits)}" if a < 0 else f"{head} + {num(a, digits)}"


def _sum_text(terms: list[tuple[float, str]], a: float, digits: int) -> str:
    """b1*f1 + b2*f2 + ... + a with signs written as operators; zero terms left out."""
    text = ""
    for coef, f_text in terms:
        if num(coef, digits) == "0":
            continue
        if not text:
            text = f"{num(coef, digits)}*{f_text}"
        else:
            text += f" - {num(-coef, digits)}*{f_text}" if coef < 0 else f" + {num(coef, digits)}*{f_text}"
    if not text:
        return num(a, digits)
    if num(a, digits) == "0":
        return text
    return f"{text} - {num(-a, digits)}" if a < 0 else f"{text} + {num(a, digits)}"


@dataclass(frozen=True)
class Law:
    """One fitted law in p: a form and its parameters (published or fitted)."""

    form: str
    params: dict[str, float] = field(default_factory=dict)

    def __call__(self, p: Any) -> np.ndarray:
        p = np.asarray(p, dtype=float)
        q = self.params
        if self.form == "const":
            return np.full_like(p, q["a"])
        if self.form in LINEAR_FORMS:
            return q["a"] + q["b"] * LINEAR_FORMS[self.form][0](p)
        if self.form == "pow2gap":
            return q["a"] + q["b"] * _floor_log2(p) + q["c"] * _not_pow2(p)
        if self.form == "powlog":
            with np.errstate(divide="ignore", invalid="ignore"):
                return q["c"] * np.log2(p) ** q["e"]
        if self.form == "reciprocal":
            with np.errstate(divide="ignore"):
                return 1.0 / (q["a"] - q["b"] * np.log2(p))
        raise InputError(f"unknown law form {self.form!r}")

    def expr(self, digits: int = 6) -> str:
        """The law in the model-file expression language."""
        q, d = self.params, digits
        if self.form == "const":
            return num(q["a"], d)
        if self.form in LINEAR_FORMS:
            return _affine_text(q["a"], q["b"], LINEAR_FORMS[self.form][1], d)
        if self.form == "pow2gap":
            return _sum_text([(q["b"], "floor(log2(p))"), (q["c"], f"({POW2GAP_TEXT})")], q["a"], d)
        if self.form == "powlog":
            return f"{num(q['c'], d)}*log2(p)^{num(q['e'], d)}"
        b = q["b"]
        inner = (f"{num(q['a'], d)} - {num(b, d)}*log2(p)" if b >= 0
                 else f"{num(q['a'], d)} + {num(-b, d)}*log2(p)")
        return f"1/({inner})"

    def complexity(self, p_range: tuple[float, float] = (2.0, 64.0)) -> str:
        """Growth class: for a + b f directly; for the other forms `classify` over
        p_range, so the answer is always one of CLASSES."""
        if self.form == "const":
            return CONSTANT.name
        if self.form in LINEAR_FORMS:
            return LINEAR_FORMS[self.form][2].name if self.params["b"] > 0 else CONSTANT.name
        if self.form == "pow2gap":
            return LOG.name if self.params["b"] > 0 else CONSTANT.name
        return classify(self, *p_range).name

    def describe(self, p_range: tuple[float, float]) -> dict[str, Any]:
        return {"expr": self.expr(), "complexity": self.complexity(p_range), "form": self.form,
                "family": FAMILY_TEXT[self.form],
                "params": {k: float(v) for k, v in self.params.items()}}


def _weights(y: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Relative-error weights 1/|y| (or 1/scale), divided by the largest.

    |y| is floored at 10% of the largest |y| so that a quantity crossing zero
    (t_c) is not fitted to infinite relative precision near zero. Only ratios
    of weights matter; computing them as ratios keeps them in [1e-300, 1] and
    finite even for values near the smallest double (1/1e-320 is inf).
    """
    if scale is not None:
        return float(np.min(scale)) / scale
    largest = float(np.max(np.abs(y)))
    if largest == 0 or not math.isfinite(largest):
        return np.ones_like(y)
    relative = np.abs(y) / largest  # in [0, 1], so the floor cannot underflow
    return 0.1 / np.maximum(relative, 0.1)


def _affine(columns: list[np.ndarray], y: np.ndarray, w: np.ndarray, nondecreasing: bool) -> np.ndarray:
    """(a, b1, b2, ...) of a + sum b_i f_i(p) by weighted least squares; with nondecreasing,
    every b_i >= 0 (the f_i grow with p)."""
    A = np.column_stack([np.ones_like(y), *columns]) * w[:, None]
    if not nondecreasing:
        return np.linalg.lstsq(A, y * w, rcond=None)[0]
    lower = np.r_[-np.inf, np.zeros(len(columns))]
    from scipy.optimize import lsq_linear  # loaded by a fit alone: evaluating verbs start faster

    return lsq_linear(A, y * w, bounds=(lower, np.full(lower.size, np.inf))).x


def fit_form(form: str, p: np.ndarray, y: np.ndarray, scale: np.ndarray | None = None,
             nondecreasing: bool = False) -> Law | None:
    """The least-relative-error law of one form through (p, y); None if the form cannot apply.

    `scale` replaces |y| as the yardstick of each residual (see LawSelector.fit).
    `nondecreasing` keeps the coefficients of the growing terms of an a + b f form (and of
    pow2gap) >= 0: a law then never falls as p grows, and one that would is the constant.
    """
    w = _weights(y, scale)
    if form == "const":
        return Law("const", {"a": float(np.sum(w * w * y) / np.sum(w * w))})
    if np.unique(p).size < 2:
        return None
    if form in LINEAR_FORMS:
        a, b = _affine([LINEAR_FORMS[form][0](p)], y, w, nondecreasing)
        law = Law(form, {"a": float(a), "b": float(b)})
    elif form == "pow2gap":
        # Determined only when the p include a non-power of two and two powers of two.
        gap = _not_pow2(p)
        if np.unique(p[gap == 0]).size < 2 or not np.any(gap > 0):
            return None
        a, b, c = _affine([_floor_log2(p), gap], y, w, nondecreasing)
        law = Law("pow2gap", {"a": float(a), "b": float(b), "c": float(c)})
    else:
        return _shape_form(form, p, y, w)
    if nondecreasing and all(v == 0 for k, v in law.params.items() if k != "a"):
        return fit_form("const", p, y, scale)
    return law


def _shape_form(form: str, p: np.ndarray, y: np.ndarray, w: np.ndarray) -> Law | None:
    """powlog and reciprocal, fitted as straight lines after a transform (w is unused:
    the transforms make the residuals relative already)."""
    if form == "powlog":
        # Needs log2 p > 0 and one sign: then log|y| is linear in log(log2 p).
        if np.any(p < 2) or not (np.all(y > 0) or np.all(y < 0)):
            return None
        u = np.log(np.log2(p))
        (lc, e), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(u), u]), np.log(np.abs(y)), rcond=None)
        return Law("powlog", {"c": float(math.copysign(math.exp(lc), y[0])), "e": float(e)})
    if form == "reciprocal":
        # 1/y = a - b log2 p; weighting by y makes the residual relative in y.
        if not np.all(y > 0):
            return None
        lg = np.log2(p)
        A = np.column_stack([np.ones_like(lg), -lg]) * y[:, None]
        (a, b), *_ = np.linalg.lstsq(A, np.ones_like(y), rcond=None)
        law = Law("reciprocal", {"a": float(a), "b": float(b)})
        return law if np.all(float(a) - float(b) * lg > 0) else None
    raise InputError(f"unknown law form {form!r}")


def _finite_law(law: Law | None, p: np.ndarray) -> bool:
    if law is None or not all(math.isfinite(v) for v in law.params.values()):
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.isfinite(law(p))))


def _accelerates(form: str, p: np.ndarray, y: np.ndarray, scale: np.ndarray | None) -> bool:
    """True for a form that grows faster than any a + b log2 p beyond the measured p."""
    if form == "powlog":
        law = fit_form(form, p, y, scale)
        return law is None or law.params["e"] > 1
    return form in ("linear", "plogp", "quadratic", "pairs", "reciprocal")


ONE_P_NOTE = "one process count: no law in p"
FEW_P_NOTE = "fewer than 3 values of p: the form is not determined by the data"


SELECTIONS = ("loo", "extrapolate")


class LawSelector(Estimator):
    """Chooses and fits a law y(p) among `forms`.

    select="loo" (the default): by leave-one-out cross-validation. The simplest
    form (fewest parameters, then the order of FORMS) whose LOO RMS relative
    error is within `tolerance` (relative) plus `slack` (absolute) of the best is
    kept. With fewer than 3 distinct p a 2-parameter form cannot be
    cross-validated: two p give the constant when it predicts each value from
    the other within `slack`, else a + b log2 p marked underdetermined.

    select="extrapolate": by forward validation, the question a law in p is asked
    (what happens at more processes than were measured). Each form is fitted on
    the MIN_P_TO_EXTRAPOLATE smallest distinct p, then on one more, ..., and
    predicts every larger measured p each time; its error is the RMS relative
    error of those predictions. Candidates are the step forms `steps` (const,
    a + b log2 p, a + b ceil(log2 p), a + b (1 - 1/p), a + b floor(log2 p) +
    c [p not a power of two], plus whatever the caller adds: a collective's node
    traffic) and, from MIN_P_FOR_SHAPE distinct p on, the free forms (p, p log2 p,
    p^2, p(p-1), powlog, reciprocal). Among the step forms within `tolerance` +
    `slack` of their best error, the fewest parameters win, and among those
    a + b log2 p unless another is better by more than `tie`. A free form replaces
    that choice only when its error is lower, and when it bends upwards faster
    than log2 p only when it is at most FREE_FORM_MARGIN of it. Growth
    coefficients are kept >= 0 (a fitted law never falls as p grows). With too
    few p to hold any out (3), a + b log2 p, unless leave-one-out finds a step
    form or a + b p with at most FREE_FORM_MARGIN of its error.

    Fitted: law_ (Law), cv_errors_ (form -> RMS relative error of the selection:
    LOO or forward), selection_ ("loo" or "extrapolate", the one used),
    underdetermined_ (bool), p_range_.
    """

    _parameter_constraints = {
        "tolerance": number_in(0.0, 10.0), "slack": number_in(0.0, 1.0), "tie": number_in(0.0, 10.0),
        "select": (lambda v: v in SELECTIONS, f"one of {', '.join(SELECTIONS)}"),
        "forms": (lambda v: v is None or (isinstance(v, tuple) and len(v) > 0
                                          and all(f in FAMILY_TEXT for f in v)),
                  f"None or a non-empty tuple of {', '.join(FAMILY_TEXT)}"),
        "steps": (lambda v: isinstance(v, tuple) and all(f in FAMILY_TEXT for f in v),
                  f"a tuple of {', '.join(FAMILY_TEXT)}"),
    }

    def __init__(self, tolerance: float = 0.25, slack: float = 0.01, tie: float = 0.10,
                 forms: tuple[str, ...] | None = None, select: str = "loo",
                 steps: tuple[str, ...] = STEP_FORMS) -> None:
        self.tolerance = tolerance
        self.slack = slack
        self.tie = tie
        self.forms = forms
        self.select = select
        self.steps = steps

    def fit(self, p: Any, y: Any, scale: Any = None) -> "LawSelector":
        """Fit y(p). `scale` (optional, > 0 per value) is the yardstick of each value's
        error instead of |y|: t_c, a difference of two slopes, is only known to a
        fraction of those slopes, so its residuals are measured against them."""
        self._validate_params()
        p = np.asarray(p, dtype=float).ravel()
        y = np.asarray(y, dtype=float).ravel()
        sc = None if scale is None else np.asarray(scale, dtype=float).ravel()
        if sc is not None and (sc.size != y.size or np.any(~(sc > 0))):
            raise InputError("LawSelector: scale must be one positive number per value")
        if p.size != y.size or p.size == 0:
            raise InputError(f"LawSelector: {p.size} values of p for {y.size} values")
        if np.any(p < 1) or not np.all(np.isfinite(y)):
            raise InputError("LawSelector: p must be >= 1 and values finite")
        self.p_range_ = (float(p.min()), float(p.max()))
        distinct = np.unique(p).size
        forms = self.forms or (EXTRAPOLATION_FORMS if self.select == "extrapolate" else FORMS)
        forms = tuple(dict.fromkeys(("const", "log", *forms, *(self.steps if self.select == "extrapolate" else ()))))
        forward = self.select == "extrapolate" and distinct > MIN_P_TO_EXTRAPOLATE
        self.selection_ = "extrapolate" if forward else "loo"
        error = self._forward_error if forward else self._loo_error
        # Extrapolating, no law falls as p grows (a cost that falls is noise or an algorithm
        # change the law cannot see): growth coefficients are kept >= 0.
        rising = self.select == "extrapolate"
        # Candidate forms that do not apply overflow or divide by zero on the way to an
        # infinite error; that is their rejection, not something to warn about.
        with np.errstate(all="ignore"):
            self.cv_errors_ = {form: error(form, p, y, sc, rising) for form in forms}
        self.underdetermined_ = distinct < 3
        if distinct == 1 or np.all(y == y[0]):
            chosen = "const"
        elif distinct == 2:
            chosen = "const" if self.cv_errors_["const"] <= self.slack else "log"
        else:
            # A power of log2 p or a reciprocal has a shape parameter that 3-4 values
            # of p cannot pin down; nor can 3 values give a 3-parameter law any check.
            pool = [f for f in forms if (distinct >= MIN_P_FOR_SHAPE or f not in SHAPE_FORMS)
                    and N_PARAMS[f] < distinct]
            chosen = (self._extrapolating(pool, forward, p, y, sc) if self.select == "extrapolate"
                      else self._choose(pool, forward))
        if chosen == "powlog" and self.cv_errors_.get("log", math.inf) < 2 * self.cv_errors_["powlog"]:
            # c*log2(p)^e with e ~ 1 is c*log2(p): name it by the simpler family.
            e = fit_form("powlog", p, y, sc).params["e"]  # type: ignore[union-attr]
            if abs(e - 1.0) <= POWER_IS_ONE:
                chosen = "log"
        # the chosen form fitted to every point: a solver's step through an overflow is
        # caught by the finiteness check below, not warned about
        with np.errstate(all="ignore"):
            law = fit_form(chosen, p, y, sc, rising)
        self.fallback_ = None
        if law is None or not _finite_law(law, p):
            # Cannot happen for well-conditioned data; a model file must never hold a non-finite
            # number, so fall back to the constant, and to 0 if even that is not finite.
            law = fit_form("const", p, y, sc)
            self.fallback_ = f"the {chosen} law was not finite: the constant was used"
            if law is None or not _finite_law(law, p):
                law = Law("const", {"a": 0.0})
                self.fallback_ = f"no finite law through the values: 0 was used (values {y.tolist()!r})"
        self.law_: Law = law
        self.distinct_p_ = distinct
        return self

    def _extrapolating(self, pool: list[str], forward: bool, p: np.ndarray, y: np.ndarray,
                       scale: np.ndarray | None) -> str:
        """The form select="extrapolate" keeps, from `pool` (at least 3 distinct p)."""
        if not forward:
            # Too few p to hold any out: a + b log2 p, unless leave-one-out finds a step form
            # or a + b p far closer to the values (FREE_FORM_MARGIN of its error).
            other = self._choose([f for f in pool if f in (*self.steps, "linear") and f != "log"], False)
            return other if self.cv_errors_[other] < FREE_FORM_MARGIN * self.cv_errors_["log"] else "log"
        chosen = self._choose([f for f in pool if f in self.steps], True)
        # A free form competes from MIN_P_FOR_SHAPE values of p on (one held-out p cannot
        # tell a curve from noise), and must then predict the larger p better than the step
        # form; one that bends upwards faster than log2 p (p, p log p, p^2, a power of log2 p
        # above 1, a reciprocal) must have at most FREE_FORM_MARGIN of its error, because a
        # step count bends where the library changes algorithm and such a curve does not.
        free = [f for f in pool if f not in self.steps]
        if free and np.unique(p).size >= MIN_P_FOR_SHAPE:
            other = self._choose(free, True)
            margin = FREE_FORM_MARGIN if _accelerates(other, p, y, scale) else 1.0
            if self.cv_errors_[other] < margin * self.cv_errors_[chosen]:
                return other
        return chosen

    def _choose(self, pool: list[str], forward: bool) -> str:
        """Among the forms within `tolerance` + `slack` of the best error, those with fewest
        parameters; of these the best, unless within `tie` of it (then the order of `forms`,
        and extrapolating, a + b log2 p first)."""
        best = min(self.cv_errors_[f] for f in pool)
        ok = [f for f in pool if self.cv_errors_[f] <= best * (1 + self.tolerance) + self.slack]
        fewest = min(N_PARAMS[f] for f in ok)
        simplest = [f for f in ok if N_PARAMS[f] == fewest]
        top = min(self.cv_errors_[f] for f in simplest)
        within = [f for f in simplest if self.cv_errors_[f] <= top * (1 + self.tie) + 1e-12]
        return "log" if forward and "log" in within else within[0]

    @staticmethod
    def _forward_error(form: str, p: np.ndarray, y: np.ndarray, scale: np.ndarray | None,
                       rising: bool = False) -> float:
        """RMS relative error predicting every larger p from the k smallest distinct p,
        k = MIN_P_TO_EXTRAPOLATE, ..., all but one."""
        w = 1.0 / (scale if scale is not None else np.maximum(np.abs(y), 0.1 * float(np.max(np.abs(y)))))
        ps = np.unique(p)
        errs: list[np.ndarray] = []
        for cut in ps[MIN_P_TO_EXTRAPOLATE:]:
            train, test = p < cut, p >= cut
            law = fit_form(form, p[train], y[train], None if scale is None else scale[train], rising)
            if law is None or not _finite_law(law, p):
                return math.inf
            errs.append((law(p[test]) - y[test]) * w[test])
        return float(np.sqrt(np.mean(np.square(np.concatenate(errs)))))

    @staticmethod
    def _loo_error(form: str, p: np.ndarray, y: np.ndarray, scale: np.ndarray | None,
                   rising: bool = False) -> float:
        # The yardstick of each held-out error: |y| floored as in _weights, or scale.
        w = 1.0 / (scale if scale is not None else np.maximum(np.abs(y), 0.1 * float(np.max(np.abs(y)))))
        if fit_form(form, p, y, scale, rising) is None:
            return math.inf
        errs = []
        for i in range(p.size):
            keep = np.arange(p.size) != i
            if np.unique(p[keep]).size < N_PARAMS[form]:
                return math.inf if N_PARAMS[form] > 1 else 0.0
            law = fit_form(form, p[keep], y[keep], None if scale is None else scale[keep], rising)
            if law is None:
                return math.inf
            pred = float(law(np.array([p[i]]))[0])
            if not math.isfinite(pred):
                return math.inf
            errs.append((pred - y[i]) * w[i])
        return float(np.sqrt(np.mean(np.square(errs))))

    def predict(self, p: Any) -> np.ndarray:
        self._check_fitted()
        return self.law_(np.asarray(p, dtype=float))

    def describe(self) -> dict[str, Any]:
        self._check_fitted()
        d = self.law_.describe(self.p_range_)
        d["cv_rel_error"] = {k: (None if not math.isfinite(v) else v) for k, v in self.cv_errors_.items()}
        d["selection"] = self.selection_
        d["p_range"] = list(self.p_range_)
        if self.distinct_p_ == 1:
            d["note"] = ONE_P_NOTE
        elif self.underdetermined_:
            d["note"] = FEW_P_NOTE
        if self.fallback_:
            d["note"] = f"{d.get('note', '')}; {self.fallback_}".lstrip("; ")
        return d
