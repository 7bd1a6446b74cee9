"""What a communicator's first collectives cost, from the kernel's `collstart` points
(cc_ops_collstart.c: on a fresh communicator each, twelve calls of Bcast, Reduce,
Barrier and Allreduce in turn, "mixed", then twelve of each kind alone; per call the
median duration over the ranks).

A library can set a communicator up lazily: MPICH 4 and 5 (ch4 with its POSIX
module) count a communicator's Bcast, Reduce, Barrier and Allreduce calls together
and, past a threshold, map shared buffers for their release-gather algorithms in the
call that crosses it: a few hundred microseconds at 16 ranks, once. The kernels'
other collectives measure warm calls, so a program's replay adds these.

Per p, and per series, a call is kept where its excess over the warm call (the
median of the series' second half) exceeds both FLOOR_US and DEVIATION_Z robust
deviations of that half. The kinds share one count when the mixed series has a step
past its first four calls (each kind's first, which either count explains) within
one call of where a kind alone has its own: then a program's replay charges the
mixed series' steps by its count of those four kinds together, else each kind's own
steps by its own count.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, fitted_section

OP = "collstart"
KINDS = ("bcast", "reduce", "barrier", "allreduce")
SERIES = ("mixed",) + KINDS
FLOOR_US = 5.0  # below this a call's excess is lost among a program's own gaps
DEVIATION_Z = 10.0


def _series(points: list[dict]) -> dict[int, dict[str, list[np.ndarray]]]:
    """Per p and series, each valid point's per-call medians (us)."""
    out: dict[int, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    for pt in points:
        if pt.get("op") != OP or not pt.get("valid", True):
            continue
        extra = pt["extra"] if isinstance(pt.get("extra"), dict) else {}
        for name in SERIES:
            values = extra.get(f"collstart_median_us_{name}")
            if not isinstance(values, list) or len(values) < 4:
                continue
            try:
                d = np.asarray(values, dtype=float)
            except (TypeError, ValueError):
                continue  # not the kernel's
            if np.all(np.isfinite(d)) and np.all(d >= 0):
                out[int(pt["p"])][name].append(d)
    return out


def _steps(series: list[np.ndarray]) -> list[list[float]]:
    """[[call (1-based), excess us], ...] of the calls that cost more than the warm ones."""
    length = min(d.size for d in series)
    calls = np.median(np.vstack([d[:length] for d in series]), axis=0)
    warm_half = calls[length // 2:]
    warm = float(np.median(warm_half))
    deviation = 1.4826 * float(np.median(np.abs(warm_half - warm)))
    threshold = max(FLOOR_US, DEVIATION_Z * deviation)
    return [[int(k) + 1, round(float(c - warm), 3)] for k, c in enumerate(calls) if c - warm > threshold]


def _shared(mixed: list[list[float]], kinds: dict[str, list[list[float]]]) -> bool:
    """Whether the mixed series steps within one call of where a kind alone does, past the
    mixed series' first len(KINDS) calls: those are each kind's first, which a kind's own
    count explains as well as a shared one."""
    at = [m for m, _ in mixed if m > len(KINDS)]
    return any(abs(k - m) <= 1 for steps in kinds.values() for k, _ in steps for m in at)


class CollectiveStartModel(Estimator):
    """A communicator's first collectives from `collstart` point dicts.

    Fitted: params_ ({by_p: [{p, shared, calls: [[k, us]], kinds: {kind: [[k, us]]}}]},
    p increasing; calls: the mixed series' steps, what a shared count charges).
    """

    def fit(self, points: list[dict]) -> "CollectiveStartModel":
        self._validate_params()
        found = _series(points)
        rows = []
        for p in sorted(found):
            by = found[p]
            if "mixed" not in by or not all(k in by for k in KINDS):
                continue
            mixed = _steps(by["mixed"])
            kinds = {k: _steps(by[k]) for k in KINDS}
            rows.append({"p": p, "shared": _shared(mixed, kinds), "calls": mixed, "kinds": kinds})
        if not rows:
            raise InputError("no collstart point with the kernel's five series")
        self.params_: dict[str, Any] = {"by_p": rows}
        return self


def collective_start_section(points: list[dict], skipped: list[str], library: str) -> dict | None:
    """The loggp section's `collective_start` entry, or None (and why in skipped)."""
    return fitted_section(CollectiveStartModel(), points, skipped, f"{library} collective start")