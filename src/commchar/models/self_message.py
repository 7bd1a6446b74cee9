"""What a message to oneself costs, from the kernel's `exchange:self` points
(cc_ops_exchange.c): each rank MPI_Sendrecv's n bytes to itself, the library's
self path (Open MPI's `self` BTL, MPICH's self send), as a halo's neighbour that
is the rank itself. Per measured size the mean time of one call (a program pays
the mean of its calls) is kept as `steps` ([n, us], n increasing); the simulator
interpolates linearly between them (beyond the largest size, along the last
segment) and charges half to the send and half to the receive.

Without it a self message pays the smallest messages' o_s and o_r and one copy at
O: about 0.34 us at 256 B with MPICH here, where the self path takes 0.05 us.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OP, VARIANT = "exchange", "self"


def self_message_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `self_message` entry, or None (and why in skipped)."""
    by_size: dict[int, list[float]] = {}
    for pt in points:
        if pt.get("op") != OP or pt.get("variant") != VARIANT or not pt.get("valid", True):
            continue
        t = pt.get("t_mean_us")
        if not isinstance(t, (int, float)) or not np.isfinite(t):
            t = pt.get("t_us")
        n = pt.get("n_bytes")
        if isinstance(t, (int, float)) and np.isfinite(t) and t >= 0 and isinstance(n, int) and n >= 0:
            by_size.setdefault(n, []).append(float(t))
    if not by_size:
        skipped.append(f"{library} exchange:self: no valid point")
        return None
    steps = [[n, float(f"{float(np.median(ts)):.6g}")] for n, ts in sorted(by_size.items())]
    return {"statistic": "mean", "steps": steps, "max_bytes": steps[-1][0]}
