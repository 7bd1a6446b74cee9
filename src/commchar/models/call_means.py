"""One call's mean time per measured size, as a table the simulator interpolates: the
shape of the model entries that keep a probe's own times rather than a fitted law
(`loggp.self_message`, models/self_message.py; `loggp.send_post`, models/send_post.py).

Per size the median over the valid points of that size (a validation's runs) of each
point's mean (a program pays the mean of its calls; the median where a point lacks a
mean) is kept as `steps` ([n, us], n increasing); the simulator interpolates linearly
between them, beyond the measured sizes along the nearest segment, never below 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from commchar.vocabulary import op_key


def _finite(value: Any) -> float | None:
    """A finite number (Python's or numpy's) as a float, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def mean_steps(points: list[dict]) -> list[list[float]]:
    """[[n, us], ...], n increasing: per size the median over `points` of each point's mean
    (its median where it lacks one), to 6 significant digits."""
    by_size: dict[int, list[float]] = {}
    for pt in points:
        t = _finite(pt.get("t_mean_us"))
        if t is None:
            t = _finite(pt.get("t_us"))
        n = _finite(pt.get("n_bytes"))
        if t is not None and t >= 0 and n is not None and n >= 0 and n.is_integer():
            by_size.setdefault(int(n), []).append(t)
    return [[n, float(f"{float(np.median(ts)):.6g}")] for n, ts in sorted(by_size.items())]


def call_means_section(points: list[dict], op: str, variant: str, skipped: list[str], library: str
                       ) -> dict[str, Any] | None:
    """{statistic: "mean", steps, max_bytes} of the valid `op:variant` points, or None (and
    why in skipped) where there is none."""
    steps = mean_steps([pt for pt in points if pt.get("op") == op and (pt.get("variant") or "") == variant
                        and pt.get("valid", True)])
    if not steps:
        skipped.append(f"{library} {op_key(op, variant)}: no valid point")
        return None
    return {"statistic": "mean", "steps": steps, "max_bytes": steps[-1][0]}
