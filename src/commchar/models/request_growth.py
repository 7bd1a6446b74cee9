"""What a process pays the first time it holds k requests at once, from the kernel's
`coldstart` points (cc_ops_coldstart.c: each rank of a fresh job posts 256 receives,
then 256 sends, timing each call; the k-th call is the first to hold k requests).

A library keeps a few request objects ready and allocates more when a program holds
more (MPICH 4 and 5 keep 8: the ninth call that holds a request costs 0.2 ms on a
2-vCPU VM, 1 ms on a 16-core node, once per process). A program that posts a
receive and a send to each of many peers pays it in its first exchange.

Per count k the cost is the median over every series (each fresh job's two ranks)
of the k-th call's duration, less the warm call's (the median of every call); a
count is kept where that cost exceeds both FLOOR_US and DEVIATION_Z robust
deviations of the per-count medians, so one job's stray delay is not a growth.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, fitted_section

OP = "coldstart"
KEYS = ("request_post_us_rank0", "request_post_us_rank1")
FLOOR_US = 2.0  # below this a call's excess is lost among a program's own gaps
DEVIATION_Z = 10.0
MIN_SERIES = 2  # a median of one series is one job's chance


def series_of(points: list[dict]) -> list[np.ndarray]:
    """Each valid coldstart point's per-rank call durations (us, in order)."""
    out = []
    for pt in points:
        if pt.get("op") != OP or not pt.get("valid", True):
            continue
        extra = pt["extra"] if isinstance(pt.get("extra"), dict) else {}
        for key in KEYS:
            values = extra.get(key)
            if not isinstance(values, list) or not values:
                continue
            try:
                d = np.asarray(values, dtype=float)
            except (TypeError, ValueError):
                continue  # not numbers: not the kernel's
            if np.all(np.isfinite(d)) and np.all(d >= 0):
                out.append(d)
    return out


class RequestGrowthModel(Estimator):
    """Request-growth costs from `coldstart` point dicts.

    Fitted: params_ ({counts: [[k, us], ...] the counts whose first holding costs more,
    warm_us, series, max_requests}), notes_.
    """

    def fit(self, points: list[dict]) -> "RequestGrowthModel":
        self._validate_params()
        series = series_of(points)
        if len(series) < MIN_SERIES:
            raise InputError(f"RequestGrowthModel: {len(series)} series of request calls, "
                             f"at least {MIN_SERIES} needed (coldstart points of this kernel)")
        length = min(d.size for d in series)
        table = np.vstack([d[:length] for d in series])
        warm = float(np.median(table))
        per_count = np.median(table, axis=0) - warm
        deviation = 1.4826 * float(np.median(np.abs(per_count - np.median(per_count))))
        threshold = max(FLOOR_US, DEVIATION_Z * deviation)
        counts = [[int(k) + 1, round(float(c), 3)] for k, c in enumerate(per_count) if c > threshold]
        self.params_: dict[str, Any] = {"counts": counts, "warm_us": round(warm, 4),
                                        "series": len(series), "max_requests": int(length)}
        self.notes_: list[str] = []
        if counts and counts[-1][0] > length - length // 8:
            self.notes_.append(f"a growth at {counts[-1][0]} of the {length} requests probed: "
                               "more may follow beyond them")
        return self


def request_growth_section(points: list[dict], skipped: list[str], library: str) -> dict | None:
    """The loggp section's `request_growth` entry, or None (and why in skipped)."""
    return fitted_section(RequestGrowthModel(), points, skipped, f"{library} request growth")