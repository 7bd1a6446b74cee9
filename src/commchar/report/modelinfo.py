"""What the report reads off a model: thresholds, per-segment parameters, laws, metrics.

Parameters come from evaluating the model (ModelView.time), never from refitting,
so a hand-written model file and a fitted one are read the same way. Derived
metrics (Bw_as, n_half, pi_s, peaks, r_cc) are the fit's own `metrics` when the
model carries them; a model without them (written by hand) gets them from the
same functions the fit uses (commchar.models.metrics), so there is one definition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from commchar.report.adapters import ModelView, fit_metrics

BASE = "si"  # the unit system asked of commchar.models.metrics; converted back to B/s and 1/s here


def _bandwidth(value: float | None) -> float | None:
    """A metric in BASE's bandwidth unit -> B/s."""
    return fit_metrics.per_second(value, fit_metrics.UNITS[BASE]["bandwidth"][0])


def _specific(value: float | None) -> float | None:
    """A metric in BASE's specific-performance unit -> 1/s."""
    return fit_metrics.per_second(value, fit_metrics.UNITS[BASE]["specific"][0])


@dataclass
class SegmentParams:
    n_min: int
    n_max: int | None
    t_s: float | None
    t_b: float | None
    r2: float | None
    pi_s: float | None = None   # 1/s
    bw_as: float | None = None  # B/s
    n_half: int | None = None   # B, of this regime alone


def _regime_metrics(t_s: float | None, t_b: float | None) -> dict[str, Any]:
    if t_s is None or t_b is None:
        return {}
    m = fit_metrics.point_to_point_metrics([(0.0, 0.0, t_s, t_b)], BASE)
    return {"pi_s": _specific(m["pi_s"]), "bw_as": _bandwidth(m["Bw_as"]), "n_half": m["n_half"]}


def segments(view: ModelView | None, key: str) -> list[dict]:
    op = view.operation(key) if view else None
    segs = op.get("segments") if op else None
    return [s for s in segs if isinstance(s, dict)] if isinstance(segs, list) else []


def thresholds(view: ModelView | None, key: str) -> list[int]:
    """Sizes where the model changes regime (a protocol switch)."""
    op = view.operation(key) if view else None
    if not op:
        return []
    marks = op.get("breakpoints")
    if isinstance(marks, list) and all(isinstance(m, (int, float)) for m in marks):
        return sorted(int(m) for m in marks)
    return [int(s["n_min"]) for s in segments(view, key)[1:] if isinstance(s.get("n_min"), (int, float))]


def brackets(view: ModelView | None, key: str) -> list[tuple[int, int]]:
    """(last size of a regime, first of the next) of each regime change the fit recorded."""
    op = view.operation(key) if view else None
    marks = op.get("breakpoints") if op else None
    if not isinstance(marks, list):
        return []
    return [(int(m["after"]), int(m["at"])) for m in marks
            if isinstance(m, dict) and all(isinstance(m.get(k), (int, float)) for k in ("after", "at"))]


def _affine_in_segment(view: ModelView, key: str, seg: dict, p: int) -> tuple[float, float] | None:
    """(t_s, per-byte slope) of one segment at p, by evaluating the model inside it."""
    lo = int(seg.get("n_min") or 0)
    hi = seg.get("n_max")
    n1 = lo
    n2 = int(hi) if isinstance(hi, (int, float)) and hi > lo else max(2 * lo, lo + (1 << 20))
    t1, t2 = view.time(key, n1, p), view.time(key, n2, p)
    if t1 is None or t2 is None:
        return None
    slope = (t2 - t1) / (n2 - n1)
    return t1 - slope * n1, slope


def p2p_parameters(view: ModelView | None, key: str) -> list[SegmentParams]:
    out = []
    for seg in segments(view, key):
        affine = _affine_in_segment(view, key, seg, 2) if view else None
        fit: dict[str, Any] = seg["fit"] if isinstance(seg.get("fit"), dict) else {}
        n_max = seg.get("n_max")
        t_s = affine[0] if affine else _number(seg.get("t_s"))
        t_b = affine[1] if affine else _number(seg.get("t_b"))
        out.append(SegmentParams(
            int(seg.get("n_min") or 0), int(n_max) if isinstance(n_max, (int, float)) else None, t_s, t_b,
            fit.get("r2") if isinstance(fit.get("r2"), (int, float)) else None, **_regime_metrics(t_s, t_b)))
    return out


def _metrics(view: ModelView | None, key: str) -> dict:
    op = view.operation(key) if view else None
    m = op.get("metrics") if op else None
    return m if isinstance(m, dict) else {}


def _metric_units(m: dict) -> tuple[str, str]:
    units: dict[str, str] = m["units"] if isinstance(m.get("units"), dict) else {}
    return units.get("bandwidth", ""), units.get("specific_performance", "")


def p2p_headline(view: ModelView | None, key: str) -> tuple[float | None, int | None]:
    """(Bw_as in B/s, n_half in B) of the whole segmented model: the fit's metrics, else
    the same computation (commchar.models.metrics) on the regimes read off the model."""
    m = _metrics(view, key)
    if "Bw_as" in m:
        bw_unit, _ = _metric_units(m)
        return fit_metrics.per_second(m.get("Bw_as"), bw_unit), m.get("n_half")
    params = p2p_parameters(view, key)
    if not params or any(p.t_s is None or p.t_b is None for p in params):
        return None, None
    computed = fit_metrics.point_to_point_metrics(
        [(p.n_min, p.n_max, p.t_s, p.t_b) for p in params], BASE)  # type: ignore[misc]
    return _bandwidth(computed["Bw_as"]), computed["n_half"]


def _number(value: object) -> float | None:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def per_p_terms(view: ModelView, key: str, p: int) -> tuple[float, float] | None:
    """(t_s(p), t_b(p) + t_c(p)) of the asymptotic (last) segment."""
    segs = segments(view, key)
    return _affine_in_segment(view, key, segs[-1], p) if segs else None


def _first_sized_terms(view: ModelView, key: str, p: int) -> tuple[float, float] | None:
    """(t_s, slope) of the first segment with n > 0 (a zero-byte regime says nothing of startup)."""
    segs = [s for s in segments(view, key) if s.get("n_max") is None or (s.get("n_max") or 0) > 0]
    return _affine_in_segment(view, key, segs[0], p) if segs else None


def _transfer_key(view: ModelView, key: str) -> str:
    """A reduction's transfer term is its nop variant's (models.md), when the model has one."""
    op, _, variant = key.partition(":")
    return f"{op}:nop" if variant == "sum" and view.operation(f"{op}:nop") is not None else key


def _term_law(terms_at: Callable[[int], tuple[float, float] | None], i: int
              ) -> Callable[[np.ndarray], np.ndarray]:
    """t_s (i = 0) or the slope (i = 1) as a function of p, read off the model."""
    return lambda ps: np.array([(terms_at(int(q)) or (math.nan, math.nan))[i] for q in ps])


@dataclass
class PeakMetrics:
    bw_pag: float | None  # B/s
    bw_pag_p: int | None
    pi_pag: float | None  # 1/s
    pi_pag_p: int | None
    n_half_mag: float | None
    n_half_mag_p: int | None


def peak_metrics(view: ModelView, key: str, ps: list[int]) -> PeakMetrics | None:
    """Peak aggregated metrics (models.md section 2): the fit's `metrics.peak` (over every
    integer p it fitted), else commchar.models.metrics.peak_metrics over `ps` on the model."""
    m = _metrics(view, key)
    peak = m.get("peak") if isinstance(m.get("peak"), dict) else None
    if peak is None:
        if not ps:
            return None
        xfer = _transfer_key(view, key)
        peak = fit_metrics.peak_metrics(key.partition(":")[0],
                                        _term_law(lambda q: _first_sized_terms(view, key, q), 0),
                                        _term_law(lambda q: per_p_terms(view, xfer, q), 1), ps, BASE)
        bw_unit, pi_unit = fit_metrics.UNITS[BASE]["bandwidth"][0], fit_metrics.UNITS[BASE]["specific"][0]
    else:
        bw_unit, pi_unit = _metric_units(m)
    if not any(k in peak for k in ("Bw_pag", "pi_pag", "n_half_mag")):
        return None
    return PeakMetrics(fit_metrics.per_second(peak.get("Bw_pag"), bw_unit), peak.get("Bw_pag_p"),
                       fit_metrics.per_second(peak.get("pi_pag"), pi_unit), peak.get("pi_pag_p"),
                       peak.get("n_half_mag"), peak.get("n_half_mag_p"))


def r_cc(view: ModelView, op: str, p: int) -> float | None:
    """t_b(p)/t_c(p) of a reduction: the fit's `metrics.per_p`, else
    commchar.models.metrics.r_cc on the nop slope and what the sum adds to it."""
    m = _metrics(view, f"{op}:sum")
    per_p = m.get("per_p") if isinstance(m.get("per_p"), dict) else None
    if per_p is not None:
        row = per_p.get(str(p))
        return row.get("r_cc") if isinstance(row, dict) else None
    nop, total = per_p_terms(view, f"{op}:nop", p), per_p_terms(view, f"{op}:sum", p)
    if not nop or not total or nop[1] <= 0:
        return None
    value = fit_metrics.r_cc(nop[1], total[1] - nop[1])
    return value if value is not None and value > 0 else None


def laws(view: ModelView | None, key: str) -> dict[str, dict]:
    op = view.operation(key) if view else None
    raw = op.get("laws") if op else None
    return {k: v for k, v in raw.items() if isinstance(v, dict)} if isinstance(raw, dict) else {}



@dataclass
class Accuracy:
    """One operation's errors as the fit stored them (`errors`, docs/model-format.md):
    relative errors at its own measured points and at sizes held out of a second fit."""

    key: str
    in_sample: dict | None
    held_out: dict | None
    mean_in_sample: dict | None


def accuracy(view: ModelView | None) -> list[Accuracy]:
    """Every operation's stored errors, in key order; none for a model written without them."""
    ops = (view.data.get("operations") or {}) if view else {}
    out = []
    for key in sorted(ops):
        errors = ops[key].get("errors") if isinstance(ops[key], dict) else None
        if not isinstance(errors, dict):
            continue

        def part(name: str) -> dict | None:
            value = errors.get(name)  # noqa: B023 - used at once
            return value if isinstance(value, dict) and isinstance(value.get("median"), (int, float)) else None

        out.append(Accuracy(key, part("in_sample"), part("held_out"), part("mean_in_sample")))
    return out
