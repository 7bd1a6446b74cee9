"""Derived, aggregated and peak metrics (models.md section 2) and their units.

Internally times are us and sizes bytes, so a bandwidth 1/t_b is in B/us;
`scale_metric` turns it into the requested units.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from commchar.errors import UsageError

UNITS = {
    # bandwidth unit, specific-performance unit, bytes per unit
    "si": {"bandwidth": ("MB/s", 1e6), "specific": ("kB/s", 1e3)},
    "iec": {"bandwidth": ("MiB/s", 2.0**20), "specific": ("KiB/s", 2.0**10)},
}

# Bytes moved between processes per byte of n, by a bandwidth-optimal algorithm
# (docs/models.md). bcast, scatter, gather, reduce and alltoall are the published
# factors; allgather, allreduce, reduce_scatter and scan are commchar's choices.
AGGREGATE_FACTOR: dict[str, tuple[Callable[[float], float], str]] = {
    "bcast": (lambda p: p - 1, "p-1"),
    "mcast": (lambda p: p - 1, "p-1"),  # PVM's pvm_mcast: a broadcast
    "scatter": (lambda p: p - 1, "p-1"),
    "gather": (lambda p: p - 1, "p-1"),
    "reduce": (lambda p: p - 1, "p-1"),
    "alltoall": (lambda p: p * (p - 1), "p(p-1)"),
    "allgather": (lambda p: p - 1, "p-1"),
    "reduce_scatter": (lambda p: p - 1, "p-1"),
    "allreduce": (lambda p: 2 * (p - 1), "2(p-1)"),
    "scan": (lambda p: p - 1, "p-1"),
}

# GPU collective test suites (nccl-tests): busbw = algbw * factor.
BUSBW_FACTOR: dict[str, tuple[Callable[[float], float], str]] = {
    "allreduce": (lambda p: 2 * (p - 1) / p, "2(p-1)/p"),
    "allgather": (lambda p: (p - 1) / p, "(p-1)/p"),
    "reduce_scatter": (lambda p: (p - 1) / p, "(p-1)/p"),
    "alltoall": (lambda p: (p - 1) / p, "(p-1)/p"),
    "scatter": (lambda p: (p - 1) / p, "(p-1)/p"),
    "gather": (lambda p: (p - 1) / p, "(p-1)/p"),
    "bcast": (lambda p: 1.0, "1"),
    "mcast": (lambda p: 1.0, "1"),
    "reduce": (lambda p: 1.0, "1"),
    "scan": (lambda p: 1.0, "1"),
}


def aggregate_factor(op: str, p: float) -> float | None:
    """Bytes moved between processes per byte of n at p (None: no aggregated metric for op)."""
    factor = AGGREGATE_FACTOR.get(op)
    return None if factor is None else float(factor[0](p))


def r_cc(t_b: float, t_c: float) -> float | None:
    """Transfer-to-computation ratio t_b/t_c; None when the sum adds nothing per byte."""
    return t_b / t_c if t_c != 0 and math.isfinite(t_b / t_c) else None


def per_second(value: float | None, unit: str) -> float | None:
    """A bandwidth or specific performance written in `unit` (MB/s, MiB/s, kB/s, KiB/s) in
    base units (B/s or 1/s); None for an unknown unit or a missing value."""
    factors = {name: size for table in UNITS.values() for name, size in table.values()}
    if value is None or unit not in factors:
        return None
    return float(value) * factors[unit]


def check_units(units: str) -> str:
    if units not in ("si", "iec"):
        raise UsageError(f"units must be 'si' or 'iec', got {units!r}")
    return units


def scale_bandwidth(bytes_per_us: float | None, units: str) -> float | None:
    """B/us -> the bandwidth unit of `units` (MB/s or MiB/s)."""
    if bytes_per_us is None or not math.isfinite(bytes_per_us):
        return None
    return bytes_per_us * 1e6 / UNITS[units]["bandwidth"][1]


def scale_specific(per_us: float | None, units: str) -> float | None:
    """1/us -> the specific-performance unit of `units` (kB/s or KiB/s, as published)."""
    if per_us is None or not math.isfinite(per_us):
        return None
    return per_us * 1e6 / UNITS[units]["specific"][1]


def unit_names(units: str) -> dict[str, str]:
    return {"bandwidth": UNITS[units]["bandwidth"][0], "specific_performance": UNITS[units]["specific"][0],
            "length": "B"}


def ceil_bytes(x: float) -> int:
    """A message length is whole bytes: the smallest one reaching the target (as published)."""
    return int(math.ceil(round(x, 6)))


def half_peak_length(segments: list[tuple[float, float, float, float]]) -> int | None:
    """n_half of a piecewise model: the smallest n whose throughput n/T(n) reaches
    half the asymptotic bandwidth (1/t_b of the last segment).

    segments: (n_min, n_max, t_s, t_b) in size order; for one segment this is
    ceil(t_s / t_b), the Hockney n_half.
    """
    t_b_last = segments[-1][3]
    if t_b_last <= 0:
        return None
    for k, (n_min, _n_max, t_s, t_b) in enumerate(segments):
        upper = segments[k + 1][0] if k + 1 < len(segments) else math.inf
        lower = n_min if k > 0 else 0.0
        # n/(t_s + t_b n) >= 1/(2 t_b_last)  <=>  n (2 t_b_last - t_b) >= t_s
        slope = 2 * t_b_last - t_b
        if slope <= 0:
            continue
        n = max(lower, t_s / slope)
        if n < upper:
            return ceil_bytes(n) if k == 0 or n > lower else int(lower)
    return None


def point_to_point_metrics(segments: list[tuple[float, float, float, float]], units: str) -> dict[str, Any]:
    """Bw_as (last regime), n_half (whole model), pi_s = 1/T(0) (first regime)."""
    t_s0, t_b_last = segments[0][2], segments[-1][3]
    return {
        "Bw_as": scale_bandwidth(1.0 / t_b_last, units) if t_b_last > 0 else None,
        "n_half": half_peak_length(segments),
        "pi_s": scale_specific(1.0 / t_s0, units) if t_s0 > 0 else None,
        "units": unit_names(units),
    }


def aggregated(op: str, p: float, t_s: float, t_b: float, n_half: float | None, units: str) -> dict[str, Any]:
    """Per-p aggregated metrics: Bw_ag = factor * Bw_as, pi_ag = factor * pi_s, n_half_ag = n_half."""
    f = aggregate_factor(op, p)
    if f is None:
        return {}
    return {
        "Bw_ag": scale_bandwidth(f / t_b, units) if t_b > 0 else None,
        "pi_ag": scale_specific(f / t_s, units) if t_s > 0 else None,
        "n_half_ag": n_half,
    }


def bus_bandwidth(op: str, n: float, p: float, t_us: float, units: str) -> dict[str, float | None]:
    """algbw = S / t and busbw = algbw * factor, S the nccl-tests size (n; n*p for alltoall,
    whose n is per destination)."""
    if op not in BUSBW_FACTOR or t_us <= 0:
        return {}
    size = n * p if op == "alltoall" else n
    algbw = size / t_us
    return {"n": n, "algbw": scale_bandwidth(algbw, units),
            "busbw": scale_bandwidth(algbw * BUSBW_FACTOR[op][0](p), units)}


def peak_metrics(op: str, t_s: Callable[[np.ndarray], np.ndarray], t_b: Callable[[np.ndarray], np.ndarray],
                 p_values: Iterable[int], units: str) -> dict[str, Any]:
    """Bw_pag, pi_pag (maxima over p) and n_half_mag (minimum over p) from laws in p."""
    factor = AGGREGATE_FACTOR.get(op)
    ps = np.array(sorted(set(int(p) for p in p_values if p >= 2)), dtype=float)
    if factor is None or ps.size == 0:
        return {}
    ts, tb = np.asarray(t_s(ps), float), np.asarray(t_b(ps), float)
    f = np.array([factor[0](p) for p in ps])
    ok_b, ok_s = tb > 0, ts > 0
    out: dict[str, Any] = {"p_range": [int(ps[0]), int(ps[-1])], "factor": factor[1]}
    if ok_b.any():
        bw = np.where(ok_b, f / np.where(ok_b, tb, 1), -np.inf)
        out["Bw_pag"] = scale_bandwidth(float(bw.max()), units)
        out["Bw_pag_p"] = int(ps[int(np.argmax(bw))])
    if ok_s.any():
        pi = np.where(ok_s, f / np.where(ok_s, ts, 1), -np.inf)
        out["pi_pag"] = scale_specific(float(pi.max()), units)
        out["pi_pag_p"] = int(ps[int(np.argmax(pi))])
    both = ok_b & ok_s
    if both.any():
        nh = np.array([ceil_bytes(s / b) if ok else math.inf for s, b, ok in zip(ts, tb, both)])
        out["n_half_mag"] = int(nh.min())
        out["n_half_mag_p"] = int(ps[int(np.argmin(nh))])
    return out
