"""What the node takes from a rank while every rank works, from the kernel's `noise`
points (cc_ops_noise.c: every rank of a p-rank job reads the clock in a tight loop
at once; a gap of a microsecond or more is a detour).

A tightly coupled program pays the detours of every rank: its partners wait, so a
detour that costs one rank 0.3% of its time holds up a 16-rank iteration about 16
times as often (Petrini, Kerbyson and Pakin, SC 2003). A traced program's
computation already holds the detours that hit it; those that hit a rank inside the
library (sending, copying, progressing a message its partners wait for) are what a
replay adds, by drawing detours from this model (sim/src/noise.rs).

Per p measured (the node gives a busy core less than an idle one's neighbours
leave it), the section lists the detours in bins of length by powers of two, each
bin with its rate per rank and second and its mean length, so the mean time lost
is exact whatever the tail: a detour of 4 ms a second weighs what it costs.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, fitted_section

OP = "noise"


def _valid(points: list[dict]) -> list[dict]:
    """The noise points whose extra holds the kernel's lists, consistent with their p."""
    out = []
    for pt in points:
        if pt.get("op") != OP or not pt.get("valid", True):
            continue
        extra = pt["extra"] if isinstance(pt.get("extra"), dict) else {}
        seconds, bins = extra.get("noise_seconds_rank"), extra.get("noise_bins")
        if not (isinstance(seconds, list) and len(seconds) == pt["p"] and isinstance(bins, list)):
            continue
        try:
            sec = np.asarray(seconds, dtype=float)
            table = np.asarray(bins, dtype=float).reshape(-1, 3)
        except (TypeError, ValueError):
            continue  # not the kernel's
        if np.all(np.isfinite(sec)) and np.all(sec > 0) and np.all(np.isfinite(table)) and np.all(table >= 0):
            out.append({"p": int(pt["p"]), "seconds": float(sec.sum()), "bins": table})
    return out


def lost_fraction(point: dict) -> float | None:
    """The share of its ranks' time a noise point's detours took, or None where the point
    lacks the kernel's lists."""
    valid = _valid([point])
    if not valid:
        return None
    lost = float(valid[0]["bins"][:, 2].sum())
    return lost / (valid[0]["seconds"] * 1e6)


class NoiseModel(Estimator):
    """Detour rates and lengths per p from `noise` point dicts.

    Fitted: params_ ({by_p: [{p, rank_seconds, rate_per_s, fraction, bins: [[lower_us,
    rate_per_s, mean_us], ...]}]}, p increasing).
    """

    def fit(self, points: list[dict]) -> "NoiseModel":
        self._validate_params()
        valid = _valid(points)
        if not valid:
            raise InputError("no noise point with the kernel's detour lists")
        by_p: dict[int, list[dict]] = defaultdict(list)
        for v in valid:
            by_p[v["p"]].append(v)
        rows = []
        for p in sorted(by_p):
            seconds = sum(v["seconds"] for v in by_p[p])  # rank-seconds looped
            pooled: dict[float, list[float]] = defaultdict(lambda: [0.0, 0.0])
            for v in by_p[p]:
                for lower, count, lost in v["bins"]:
                    pooled[float(lower)][0] += count
                    pooled[float(lower)][1] += lost
            bins = [[lower, round(count / seconds, 4), round(lost / count, 3)]
                    for lower, (count, lost) in sorted(pooled.items()) if count > 0]
            detours = sum(c for c, _ in pooled.values())
            lost_us = sum(t for _, t in pooled.values())
            rows.append({"p": p, "rank_seconds": round(seconds, 3), "rate_per_s": round(detours / seconds, 3),
                         "fraction": round(lost_us / (seconds * 1e6), 6), "bins": bins})
        self.params_: dict[str, Any] = {"by_p": rows}
        return self


def noise_section(points: list[dict], skipped: list[str], library: str) -> dict | None:
    """The loggp section's `noise` entry, or None (and why in skipped)."""
    return fitted_section(NoiseModel(), points, skipped, f"{library} noise")