"""`predict`: the time of operations and compositions over a grid of (n, p).

Returns data; `commchar predict` alone prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from commchar.errors import ModelError, UsageError
from commchar.modelfile import Expr, ModelFile
from commchar.predict.compose import Composition, PartTime, parse_composition
from commchar.predict.values import n_at, parse_n_values


@dataclass(frozen=True)
class Estimate:
    """One EXPR at one (library, n, p)."""

    library: str
    expr: str
    n: float
    p: int
    t_us: float
    parts: tuple[PartTime, ...]

    @property
    def extrapolated(self) -> bool:
        return any(part.prediction.extrapolated for part in self.parts)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w for part in self.parts for w in part.prediction.warnings))

    def as_dict(self) -> dict[str, Any]:
        return {
            "library": self.library,
            "expr": self.expr,
            "n": _number(self.n),
            "p": self.p,
            "t_us": self.t_us,
            "extrapolated": self.extrapolated,
            "parts": [
                {"op": share.prediction.key, "n": _number(share.prediction.n), "count": _number(share.count),
                 "t_us": share.t_us, "segment": share.prediction.segment}
                for share in self.parts
            ],
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Row:
    """All EXPRs at one (library, n, p), with the cheapest and its margin.

    `cheapest` names the cheapest EXPR (several joined by ' = ' when within
    TIE percent; 'tie' when all are); `margin_pct` is how much cheaper it is
    than the next cheapest, in percent of that one's time (None with a single
    EXPR or when all tie).
    """

    library: str
    n: float
    p: int
    estimates: tuple[Estimate, ...]
    cheapest: str | None
    margin_pct: float | None


@dataclass
class PredictResult:
    exprs: list[str]
    libraries: list[str]
    rows: list[Row]
    skipped: dict[str, str] = field(default_factory=dict)  # library -> why

    @property
    def estimates(self) -> list[Estimate]:
        return [e for row in self.rows for e in row.estimates]

    @property
    def warnings(self) -> list[str]:
        return list(dict.fromkeys(w for estimate in self.estimates for w in estimate.warnings))

    def as_json(self) -> list[dict[str, Any]]:
        """The `--json` output: one object per (library, expr, n, p)."""
        return [e.as_dict() for e in self.estimates]


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


TIE = 0.05  # percent: closer than this, two EXPRs are reported as equally cheap


def _cheapest(estimates: Sequence[Estimate]) -> tuple[str | None, float | None]:
    """The cheapest EXPR(s) (tied ones joined by ' = ') and the margin to the next cheapest."""
    if len(estimates) < 2:
        return None, None
    ordered = sorted(estimates, key=lambda e: e.t_us)
    best = ordered[0].t_us

    def tied(e: Estimate) -> bool:
        return e.t_us - best <= abs(best) * TIE / 100

    winners = [e.expr for e in ordered if tied(e)]
    rest = [e for e in ordered if not tied(e)]
    if not rest:
        return "tie", None
    runner_up = rest[0].t_us
    margin = 100.0 * (runner_up - best) / runner_up if runner_up > 0 else None
    return " = ".join(winners), margin


def predict(
    model: ModelFile,
    exprs: Sequence[str],
    n_values: Sequence[float | Expr | str] | str,
    p_values: Sequence[int],
    library: str | None = None,
) -> PredictResult:
    """Predict every EXPR (operation or composition) at every (n, p).

    n_values holds bytes or expressions in p (or is a --n string); p_values
    process counts. With `library` None, every library of the model that has
    all the operations is predicted (the others are listed in `skipped`);
    ModelError when none has them, or when the named library lacks one.
    """
    if not exprs:
        raise UsageError("give at least one operation or composition to predict")
    if not p_values:
        raise UsageError("--p: no process count")
    compositions: list[Composition] = []
    for text in exprs:
        composition = parse_composition(text)
        if composition.text not in (c.text for c in compositions):
            compositions.append(composition)
    items: list[float | Expr] = []
    for item in ([n_values] if isinstance(n_values, str) else n_values):
        items.extend(parse_n_values(item) if isinstance(item, str) else [item])
    if not items:
        raise UsageError("--n: no message length")
    for p in p_values:
        if int(p) != p or p < 1:
            raise UsageError(f"--p: a process count must be an integer >= 1, found {p}")

    libraries = [library] if library is not None else model.libraries()
    chosen, skipped = [], {}
    for lib in libraries:
        try:
            for composition in compositions:
                composition.check(model, lib)
            chosen.append(lib)
        except ModelError as exc:
            if library is not None:
                raise
            skipped[lib] = str(exc)
    if not chosen:
        raise ModelError(next(iter(skipped.values())) if len(skipped) == 1 else
                         "no library of the model has all of " + ", ".join(c.text for c in compositions)
                         + ": " + "; ".join(skipped.values()))

    rows = []
    for lib in chosen:
        for p in p_values:
            for item in items:
                n = n_at(item, int(p))
                estimates = []
                for composition in compositions:
                    t_us, parts = composition.time(model, lib, n, int(p))
                    estimates.append(Estimate(lib, composition.text, n, int(p), t_us, parts))
                cheapest, margin = _cheapest(estimates)
                rows.append(Row(lib, n, int(p), tuple(estimates), cheapest, margin))
    return PredictResult([c.text for c in compositions], chosen, rows, skipped)
