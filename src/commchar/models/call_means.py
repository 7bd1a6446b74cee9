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

from commchar.vocabulary import op_key


def call_means_section(points: list[dict], op: str, variant: str, skipped: list[str], library: str
                       ) -> dict[str, Any] | None:
    """{statistic: "mean", steps, max_bytes} of the valid `op:variant` points, or None (and
    why in skipped) where there is none."""
    by_size: dict[int, list[float]] = {}
    for pt in points:
        if pt.get("op") != op or (pt.get("variant") or "") != variant or not pt.get("valid", True):
            continue
        t = pt.get("t_mean_us")
        if not isinstance(t, (int, float)) or not np.isfinite(t):
            t = pt.get("t_us")
        n = pt.get("n_bytes")
        if isinstance(t, (int, float)) and np.isfinite(t) and t >= 0 and isinstance(n, int) and n >= 0:
            by_size.setdefault(n, []).append(float(t))
    if not by_size:
        skipped.append(f"{library} {op_key(op, variant)}: no valid point")
        return None
    steps = [[n, float(f"{float(np.median(ts)):.6g}")] for n, ts in sorted(by_size.items())]
    return {"statistic": "mean", "steps": steps, "max_bytes": steps[-1][0]}
