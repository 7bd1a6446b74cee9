"""One call's mean time per measured size, as a table the simulator interpolates: the
shape of the model entries that keep a probe's own times rather than a fitted law
(`loggp.self_message`, models/self_message.py; `loggp.send_post`, models/send_post.py).

Per size the median over the valid points of that size (a validation's runs) of each
point's mean (a program pays the mean of its calls; the median where a point lacks a
mean) is kept as `steps` ([n, us], n increasing); the simulator interpolates linearly
between them, beyond the measured sizes along the nearest segment, never below 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from commchar.models.excess import point_time
from commchar.vocabulary import op_key


def mean_steps(points: list[dict]) -> list[list[float]]:
    """[[n, us], ...], n increasing: per size the median over `points` of each point's mean
    (its median where it lacks one: excess.point_time), to 6 significant digits."""
    by_size: dict[int, list[float]] = {}
    for pt in points:
        t, n = point_time(pt, "t_mean_us"), pt.get("n_bytes")
        if isinstance(n, (float, np.floating)) and float(n).is_integer():
            n = int(n)
        if t is not None and isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0:
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
