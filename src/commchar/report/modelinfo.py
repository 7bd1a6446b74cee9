"""What the report reads off a model: thresholds, per-segment parameters, laws, peaks.

Numbers come from evaluating the model (ModelView.time), never from refitting,
so a hand-written model file and a fitted one are read the same way. The
informational fields (`metrics`, `laws`, `breakpoints`) are used when present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from commchar.report.adapters import ModelView

# Bytes moved per n for the aggregated bandwidth (models.md section 2): the
# published factors for rooted operations and alltoall; the open ones
# (allgather, allreduce, reduce_scatter, scan) use p - 1, every process but
# one receiving (or contributing) the n-byte vector once.
def aggregate_factor(op: str, p: int) -> float | None:
    if op == "barrier":
        return None
    if op == "alltoall":
        return float(p * (p - 1))
    return float(p - 1)


@dataclass
class SegmentParams:
    n_min: int
    n_max: int | None
    t_s: float | None
    t_b: float | None
    r2: float | None

    @property
    def pi_s(self) -> float | None:  # per second
        return 1e6 / self.t_s if self.t_s and self.t_s > 0 else None

    @property
    def bw_as(self) -> float | None:  # bytes per second
        return 1e6 / self.t_b if self.t_b and self.t_b > 0 else None

    @property
    def n_half(self) -> float | None:
        return self.t_s / self.t_b if self.t_s is not None and self.t_b and self.t_b > 0 else None


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
        fit = seg.get("fit") if isinstance(seg.get("fit"), dict) else {}
        n_max = seg.get("n_max")
        out.append(SegmentParams(
            int(seg.get("n_min") or 0), int(n_max) if isinstance(n_max, (int, float)) else None,
            affine[0] if affine else _number(seg.get("t_s")),
            affine[1] if affine else _number(seg.get("t_b")),
            fit.get("r2") if isinstance(fit.get("r2"), (int, float)) else None,
        ))
    return out


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


@dataclass
class PeakMetrics:
    bw_pag: float | None  # B/s
    bw_pag_p: int | None
    pi_pag: float | None  # 1/s
    pi_pag_p: int | None
    n_half_mag: float | None
    n_half_mag_p: int | None


def peak_metrics(view: ModelView, key: str, ps: list[int]) -> PeakMetrics | None:
    """Peak aggregated metrics over the measured p (models.md section 2)."""
    op = key.partition(":")[0]
    best: dict[str, tuple[float, int]] = {}
    for p in ps:
        factor = aggregate_factor(op, p)
        terms = per_p_terms(view, key, p)
        if factor is None or terms is None:
            continue
        t_s, t_b = terms
        if t_b > 0:
            bw_ag = factor * 1e6 / t_b
            if bw_ag > best.get("bw", (-1, 0))[0]:
                best["bw"] = (bw_ag, p)
            if t_s > 0:
                n_half = t_s / t_b
                if n_half < best.get("nh", (math.inf, 0))[0]:
                    best["nh"] = (n_half, p)
        if t_s > 0:
            pi_ag = factor * 1e6 / t_s
            if pi_ag > best.get("pi", (-1, 0))[0]:
                best["pi"] = (pi_ag, p)
    if not best:
        return None
    get = lambda k: best.get(k, (None, None))  # noqa: E731
    return PeakMetrics(*get("bw"), *get("pi"), *get("nh"))


def r_cc(view: ModelView, op: str, p: int) -> float | None:
    """t_b(p)/t_c(p): the nop model's per-byte term over what the real sum adds."""
    nop, total = per_p_terms(view, f"{op}:nop", p), per_p_terms(view, f"{op}:sum", p)
    if not nop or not total:
        return None
    t_c = total[1] - nop[1]
    return nop[1] / t_c if t_c > 0 and nop[1] > 0 else None


def laws(view: ModelView | None, key: str) -> dict[str, dict]:
    op = view.operation(key) if view else None
    raw = op.get("laws") if op else None
    return {k: v for k, v in raw.items() if isinstance(v, dict)} if isinstance(raw, dict) else {}


# Ordering of complexity classes, to compare a fitted law with the best known.
_CLASS_RANK = (
    ("O(1)", 0), ("O(log p)", 1), ("O(log2 p)", 1), ("O(log^2 p)", 2), ("O((log p)^2)", 2),
    ("O(sqrt p)", 2.5), ("O(p)", 3), ("O(p log p)", 4), ("O(p^2)", 5),
)


def complexity_rank(text: object) -> float | None:
    if not isinstance(text, str):
        return None
    compact = text.replace(" ", "").lower()
    for name, rank in _CLASS_RANK:
        if compact == name.replace(" ", "").lower():
            return rank
    return None


# Best-known startup law per collective (models.md section 6): every one has a
# tree, dissemination, recursive-doubling or Bruck algorithm with O(log p) startups.
BEST_STARTUP = {op: "O(log p)" for op in (
    "barrier", "bcast", "scatter", "gather", "allgather", "alltoall",
    "reduce", "allreduce", "reduce_scatter", "scan")}
# Best-known per-byte law where the total data does not grow with p.
BEST_PER_BYTE = {"bcast": "O(1)", "scatter": "O(1)", "gather": "O(1)", "allgather": "O(1)",
                 "reduce_scatter": "O(1)", "allreduce": "O(1)", "reduce": "O(1)",
                 "scan": "O(log p)"}
