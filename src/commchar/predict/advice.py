"""`advise`: equivalent ways to do the same job and where the cheaper one changes,
design faults against the best-known algorithms, and protocol thresholds.

The catalogue of equivalences is predict/catalogue.py, the root finding
predict/roots.py, the laws in p models/laws.py; predict/render.py words the
advice as tables (commchar.tables.Table, printed by `commchar advise`) and
predict/html.py writes the report's section with them.

Returns data; `commchar advise` prints it and `advice_html` renders it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from commchar import ranges
from commchar.errors import ModelError, UsageError
from commchar.modelfile import Expr, ModelFile, parse_expr
from commchar.modelfile.schema import term_expr
from commchar.models.laws import BEST_KNOWN, ComplexityClass, class_named, classify
from commchar.vocabulary import format_size as size
from commchar.predict.catalogue import CATALOGUE, Equivalence, Step
from commchar.predict.roots import roots as sign_changes, winner_after
from commchar.predict.values import n_at

@dataclass(frozen=True)
class Crossing:
    """Where the cheaper side changes: at `at` (an n in bytes or a p), `winner` becomes cheaper."""

    at: float
    winner: str


@dataclass(frozen=True)
class CrossingsInN:
    """At one p: the cheaper side at the smallest n, the crossings over n, the cheaper side at the largest n."""

    p: int
    n_low: float
    left_low: float
    right_low: float
    n_high: float
    left_high: float
    right_high: float
    crossings: tuple[Crossing, ...]

    @property
    def winner_low(self) -> str:
        return "left" if self.left_low <= self.right_low else "right"

    @property
    def winner_high(self) -> str:
        return "left" if self.left_high <= self.right_high else "right"


@dataclass(frozen=True)
class CrossingsInP:
    """At one n (bytes, or an expression in p): the cheaper side at the smallest p and the crossings over p."""

    n: str
    p_low: float
    winner_low: str
    p_high: float
    winner_high: str
    crossings: tuple[Crossing, ...]


@dataclass
class Comparison:
    """One equivalence in one library. Winners are 'left' or 'right'."""

    equivalence: Equivalence
    in_n: list[CrossingsInN]
    in_p: list[CrossingsInP]


# --- design faults and thresholds ------------------------------------------


@dataclass(frozen=True)
class GapAt:
    """The fitted term vs the best-known algorithm's term at p (both in us or us/B)."""

    p: float
    fitted: float | None  # None where the fitted law gives no number (beyond a pole)
    best: float

    @property
    def ratio(self) -> float | None:
        if self.fitted is None or self.best <= 0 or self.fitted <= 0:
            return None
        return self.fitted / self.best


@dataclass(frozen=True)
class DesignFault:
    op: str
    term: str  # t_s, t_b or t_c
    law: str
    law_source: str  # "laws field" or "classified from the expressions"
    expr: str
    best_law: str
    algorithm: str
    parameter: str  # alpha, beta or gamma: what the best-known cost is a multiple of
    parameter_value: float
    parameter_source: str
    gaps: tuple[GapAt, ...]  # at the largest p, 10x and 100x that p


@dataclass(frozen=True)
class SplitAdvice:
    """A message of n bytes sent whole vs in `pieces` equal pieces that fall below the threshold."""

    n: float
    pieces: int
    whole_us: float
    split_us: float

    @property
    def saving_pct(self) -> float:
        return 100.0 * (self.whole_us - self.split_us) / self.whole_us if self.whole_us > 0 else 0.0


@dataclass(frozen=True)
class Threshold:
    """A boundary between two segments of a point-to-point operation."""

    op: str
    below_max: float  # the lower segment's n_max
    above_min: float  # the upper segment's n_min
    t_below_us: float  # lower segment at below_max
    t_above_us: float  # upper segment at above_min
    just_over: SplitAdvice  # n = above_min sent whole vs in 2 halves
    user_sizes: tuple[SplitAdvice, ...]


@dataclass
class LibraryAdvice:
    library: str
    n_interval: tuple[float, float]
    p_values: list[int]
    comparisons: list[Comparison] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)  # equivalences the model cannot compare
    faults: list[DesignFault] = field(default_factory=list)
    laws: list[tuple[str, str, str, str]] = field(default_factory=list)  # op, term, law, source
    thresholds: list[Threshold] = field(default_factory=list)
    loggp_notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class AdviceResult:
    model_source: str
    libraries: list[LibraryAdvice]


# --- computing ---------------------------------------------------------------

GRID_POINTS = 240


def _listed(values: list[float], most: int = 8) -> str:
    """'13, 14, 15' or, past `most` values, '13, 14, ... 10000 (9988 values)'."""
    if len(values) <= most:
        return ", ".join(f"{v:g}" for v in values)
    return f"{', '.join(f'{v:g}' for v in values[:3])}, ... {values[-1]:g} ({len(values)} values)"


class _Extrapolations:
    """Collects, per operation, how far beyond its fitted ranges the advice went (one warning each)."""

    def __init__(self) -> None:
        self.n: dict[str, tuple[float, tuple[float, float]]] = {}
        self.p: dict[str, tuple[set[float], tuple[float, float]]] = {}
        self.negative: set[str] = set()

    def record(self, model: ModelFile, library: str, prediction) -> None:  # type: ignore[no-untyped-def]
        key = prediction.key
        if prediction.extrapolated_n:
            n_range = model.n_range(library, key) or (0.0, math.inf)
            worst = max(self.n.get(key, (0.0, n_range))[0], prediction.n)
            self.n[key] = (worst, n_range)
        if prediction.extrapolated_p:
            ps, p_range = self.p.get(key, (set(), model.p_range(library, key)))
            ps.add(prediction.p)
            self.p[key] = (ps, p_range)  # type: ignore[assignment]
        if prediction.t_us < 0:
            self.negative.add(key)

    def lines(self, library: str) -> list[str]:
        out = [f"{library} {key}: n up to {size(n)} is outside the fitted n range [{size(r[0])}, {size(r[1])}] (extrapolation)"
               for key, (n, r) in self.n.items()]
        out += [f"{library} {key}: p = {_listed(sorted(ps))} outside the fitted p range "
                f"[{r[0]:g}, {r[1]:g}] (extrapolation)" for key, (ps, r) in self.p.items()]
        out += [f"{library} {key}: the model predicts a negative time somewhere in the range (it does not hold there)"
                for key in sorted(self.negative)]
        return out


def _side_time(model: ModelFile, library: str, steps: Sequence[Step], n: float, p: float,
               seen: _Extrapolations | None = None) -> float:
    total = 0.0
    for step in steps:
        prediction = model.time(library, step.key, step.n_of(n, p), p)
        if seen is not None:
            seen.record(model, library, prediction)
        total += step.count(p) * prediction.t_us
    return total


def _n_grid(model: ModelFile, library: str, equivalence: Equivalence, low: float, high: float, p: float) -> list[float]:
    """Geometric grid over [low, high], plus every segment bound of the parts mapped to the job's n."""
    start = max(low, 1.0)
    grid = {low, high, *np.geomspace(start, max(high, start), GRID_POINTS).tolist()} if high > start else {low, high}
    for step in (*equivalence.left, *equivalence.right):
        scale = step.n_of(1.0, p)
        for segment in model.segments(library, step.key):
            for bound in (segment.n_min, segment.n_max):
                if bound is not None and scale > 0 and low < bound / scale < high:
                    grid.add(bound / scale)
    return sorted(grid)


def _compare(model: ModelFile, library: str, equivalence: Equivalence, n_interval: tuple[float, float],
             n_items: Sequence[float | Expr], p_values: Sequence[int], seen: _Extrapolations) -> Comparison:
    low, high = n_interval
    in_n = []
    for p in p_values:
        def difference(n: float, p: float = p) -> float:
            return _side_time(model, library, equivalence.left, n, p) - _side_time(model, library, equivalence.right, n, p)

        roots = [r for r in sign_changes(difference, _n_grid(model, library, equivalence, low, high, p)) if low < r < high]
        crossings = tuple(Crossing(r, winner_after(difference, r, high)) for r in roots)
        in_n.append(CrossingsInN(
            p, low, _side_time(model, library, equivalence.left, low, p, seen),
            _side_time(model, library, equivalence.right, low, p, seen),
            high, _side_time(model, library, equivalence.left, high, p, seen),
            _side_time(model, library, equivalence.right, high, p, seen), crossings))
    in_p = []
    p_low, p_high = float(min(p_values)), float(max(p_values))
    if p_high > p_low:
        p_grid = sorted(set(np.linspace(p_low, p_high, GRID_POINTS).tolist()))
        for item in n_items:
            def difference_p(p: float, item: float | Expr = item) -> float:
                n = n_at(item, p)  # type: ignore[arg-type]
                return _side_time(model, library, equivalence.left, n, p) - _side_time(model, library, equivalence.right, n, p)

            roots = [r for r in sign_changes(difference_p, p_grid) if p_low < r < p_high]
            crossings = tuple(Crossing(r, winner_after(difference_p, r, p_high)) for r in roots)
            in_p.append(CrossingsInP(
                str(item) if isinstance(item, Expr) else size(item),
                p_low, "left" if difference_p(p_low) <= 0 else "right",
                p_high, "left" if difference_p(p_high) <= 0 else "right", crossings))
    return Comparison(equivalence, in_n, in_p)


def value_or_none(expr: Expr, p: float) -> float | None:
    """expr at p, or None where it is not a number (a law beyond its pole)."""
    try:
        return expr.evaluate(p)
    except ModelError:
        return None


def _term_law(model: ModelFile, library: str, key: str, term: str,
              ps: Sequence[float]) -> tuple[ComplexityClass, str, Expr] | None:
    segments = model.segments(library, key)
    # Startup matters for short messages, per-byte terms for long ones.
    segment = segments[0] if term == "t_s" else segments[-1]
    expr: Expr = getattr(segment, term)
    laws = model.laws(library, key) or {}
    entry = laws.get(term) if isinstance(laws.get(term), dict) else None
    if entry and isinstance(entry.get("expr"), (str, int, float)):
        expr = term_expr(entry["expr"], f"laws.{term}.expr")
    named = class_named(entry.get("complexity")) if entry else None
    if named is not None:
        return named, "laws field", expr
    over = sorted({float(p) for p in ps if p >= 2}) or [2.0]
    # fewer than 3 values of p say little of a growth: look over a factor of 4 at least
    high = over[-1] if len(over) >= 3 else max(over[-1], 4 * over[0])
    try:
        # a term that is not a number somewhere in the range has no class (ModelError)
        law = classify(lambda p: np.array([expr.evaluate(float(q)) for q in p]), over[0], high)
    except ModelError:
        return None
    return law, "classified from the expressions", expr


def _alpha_beta_gamma(model: ModelFile, library: str) -> dict[str, tuple[float, str]]:
    """The alpha-beta-gamma parameters of models.md section 6 from the model itself.

    alpha and beta are the point-to-point Hockney t_s (short-message segment)
    and t_b (long-message segment) of pingpong:send; gamma is the reduction's
    cost per byte at p = 2 (one combine), t_c of reduce:sum (or allreduce:sum).
    """
    found: dict[str, tuple[float, str]] = {}
    if model.has(library, "pingpong"):
        key = model.resolve(library, "pingpong")
        segments = model.segments(library, key)
        alpha, beta = value_or_none(segments[0].t_s, 2), value_or_none(segments[-1].t_b, 2)
        if alpha is not None and alpha > 0:
            found["alpha"] = (alpha, f"t_s of {key}")
        if beta is not None and beta > 0:
            found["beta"] = (beta, f"t_b of {key}")
    for op in ("reduce", "allreduce"):
        if "gamma" not in found and model.has(library, op):
            key = model.resolve(library, op)
            gamma = value_or_none(model.segments(library, key)[-1].t_c, 2)
            if gamma is not None and gamma > 0:
                found["gamma"] = (gamma, f"t_c of {key} at p=2")
    return found


def _design_faults(model: ModelFile, library: str, p_values: Sequence[int], advice: LibraryAdvice) -> None:
    parameters = _alpha_beta_gamma(model, library)
    for key in model.operations(library):
        op = key.split(":")[0]
        if model.kind(library, key) == "p2p" or op not in BEST_KNOWN:
            continue
        p_range = model.p_range(library, key)
        ps = list(range(int(p_range[0]), int(p_range[1]) + 1)) if p_range and p_range[1] - p_range[0] <= 512 else list(p_values)
        p_max = float(max(p_range[1] if p_range else max(p_values), max(p_values)))
        for term, best in BEST_KNOWN[op].items():
            if term == "t_c" and key.endswith(":nop"):
                continue
            found = _term_law(model, library, key, term, ps)
            if found is None:
                continue
            law, source, expr = found
            advice.laws.append((key, term, law.name, source))
            if law.rank <= best.law.rank:
                continue
            if best.parameter in parameters:
                value, origin = parameters[best.parameter]
            else:
                # No point-to-point model: take the term's own value at p = 2,
                # where the algorithms coincide.
                own = value_or_none(expr, 2)
                if own is None or own <= 0:
                    continue
                value, origin = own / best.factor(2), f"{term} of {key} at p=2"
            gaps = tuple(GapAt(p, value_or_none(expr, p), value * best.factor(p)) for p in (p_max, 10 * p_max, 100 * p_max))
            advice.faults.append(DesignFault(key, term, law.name, source, str(expr), best.law.name, best.algorithm,
                                             best.parameter, value, origin, gaps))


def _thresholds(model: ModelFile, library: str, n_items: Sequence[float | Expr], advice: LibraryAdvice) -> None:
    for key in model.operations(library):
        if model.kind(library, key) != "p2p":
            continue
        segments = model.segments(library, key)

        def whole(n: float) -> float:
            return model.time(library, key, n, 2).t_us

        for lower, upper in zip(segments, segments[1:]):
            below, above = lower.n_max, upper.n_min
            if below is None:
                continue
            pieces_cap = below
            just_over = SplitAdvice(above, 2, whole(above), 2 * whole(above / 2))
            user = []
            for item in n_items:
                if isinstance(item, Expr) or not (above <= item) or pieces_cap <= 0:
                    continue
                pieces = math.ceil(item / pieces_cap)
                if pieces > 64 or model.segment_index(library, key, item) != segments.index(upper):
                    continue
                user.append(SplitAdvice(item, pieces, whole(item), pieces * whole(item / pieces)))
            advice.thresholds.append(Threshold(key, below, above, lower.time(below, 2), upper.time(above, 2),
                                               just_over, tuple(user)))
    loggp = model.loggp(library)
    if loggp:
        if "s" in loggp:
            advice.loggp_notes.append(f"messages up to s = {loggp['s']:g} B travel as one short packet")
        if "S" in loggp:
            advice.loggp_notes.append(
                f"messages of S = {loggp['S']:g} B or more use rendezvous: the sender waits until the receiver "
                "has posted the matching receive, so a late receiver delays the sender; below S a send completes "
                "after its local overhead")


def _default_n_interval(model: ModelFile, library: str) -> tuple[float, float]:
    lows, highs = [], []
    for key in model.operations(library):
        n_range = model.n_range(library, key)
        if n_range:
            lows.append(n_range[0])
            highs.append(n_range[1])
    if not lows:
        return (0.0, float(2**20))
    # Where every operation was fitted (sizes are rounded per p, so the ranges differ a little).
    low, high = max(lows), min(highs)
    return (low, high) if low < high else (min(lows), max(highs))


def _default_p_values(model: ModelFile, library: str) -> list[int]:
    lows, highs = [], []
    for key in model.operations(library):
        p_range = model.p_range(library, key)
        if p_range and model.kind(library, key) != "p2p":
            lows.append(p_range[0])
            highs.append(p_range[1])
    if not lows:
        return [2, 4, 8, 16, 32, 64]
    return ranges.sample(max(2, min(lows)), max(highs), every_up_to=33)


# Each process count costs a search for crossovers (tens of ms): more than this many
# would take minutes, and a sampled range shows the same crossovers.
MAX_P_VALUES = 256
DEFAULT_REPORT_SIZES = (8.0, 1024.0, 65536.0, 1048576.0)
ONE_DOUBLE_PER_PROCESS = "8*p"


def advise(
    model: ModelFile,
    n_values: Sequence[float | Expr] | None = None,
    p_values: Sequence[int] | None = None,
    library: str | None = None,
) -> AdviceResult:
    """Advice for each library (or the one named) over the given n and p.

    n_values: bytes or expressions in p; the crossovers in n are searched over
    [min, max] of the numeric ones, the crossovers in p at each value.
    Defaults: the n and p ranges the model was fitted over.
    """
    libraries = [library] if library is not None else model.libraries()
    results = []
    for lib in libraries:
        model.operations(lib)  # ModelError for an unknown library
        numeric = [float(v) for v in (n_values or []) if not isinstance(v, Expr)]
        if any(v < 0 for v in numeric):
            raise UsageError("--n: a message length must be >= 0")
        n_interval = (min(numeric), max(numeric)) if numeric else _default_n_interval(model, lib)
        items: list[float | Expr] = list(n_values) if n_values else \
            [parse_expr(ONE_DOUBLE_PER_PROCESS),
             *([s for s in DEFAULT_REPORT_SIZES if n_interval[0] <= s <= n_interval[1]] or [n_interval[1]])]
        ps = sorted(set(int(p) for p in p_values)) if p_values else _default_p_values(model, lib)
        if not ps or ps[0] < 1:
            raise UsageError("--p: process counts must be integers >= 1")
        if p_values and len(ps) > MAX_P_VALUES:
            raise UsageError(f"--p: {len(ps)} process counts, more than the {MAX_P_VALUES} advise compares"
                             f" (each is a search for crossovers); give fewer, e.g. {ps[0]}:{ps[-1]}:*2")
        advice = LibraryAdvice(lib, n_interval, ps)
        seen = _Extrapolations()
        for equivalence in CATALOGUE:
            missing = [s.key for s in (*equivalence.left, *equivalence.right) if not model.has(lib, s.key)]
            if missing:
                advice.unavailable.append(f"{equivalence.left_label} vs {equivalence.right_label}: "
                                          f"no model for {', '.join(sorted(set(missing)))}")
                continue
            advice.comparisons.append(_compare(model, lib, equivalence, n_interval, items, ps, seen))
        _design_faults(model, lib, ps, advice)
        _thresholds(model, lib, items, advice)
        advice.warnings.extend(seen.lines(lib))
        results.append(advice)
    return AdviceResult(model.source, results)


__all__ = ["CATALOGUE", "AdviceResult", "Comparison", "DesignFault", "Equivalence", "LibraryAdvice", "Threshold", "advise"]
