"""Size-dependent LogGP costs (Kielmann's PLogP idea) from the ping-pong regimes.

LogGP's single G is the gap per byte of long messages; an MPI library's eager
protocol may copy twice and cost several times more per byte at mid sizes.
The fitted `pingpong:send` segments already hold that: one-way time
t_s + t_b n per protocol regime. `size_regimes` turns each segment into the
per-message costs the simulator looks up by size (`loggp.regimes`), keeping
L, g and S global:

- G = t_b of the segment (clamped at 0);
- o_s + o_r = t_s + t_b - L (clamped at 0), split in the ratio of the PRTT
  o_s : o_r (halves when both are 0), so o_s + L + o_r + (n-1)G equals the
  segment's t_s + t_b n at every size of the segment;
- O = min(global O, G), so the receiver's max((n-1)O, (n-1)G) stays (n-1)G
  and the end-to-end time is still the segment's.
"""

from __future__ import annotations

import math
from typing import Any


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None  # an expression in p: a ping-pong has only p = 2, so a fit never writes one
    return x if math.isfinite(x) else None


def size_regimes(loggp: dict[str, Any], segments: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Per-size o_s, o_r, G, O (us, us/B) from ping-pong segments and the PRTT
    parameters (L, o_s, o_r, O); None when a segment is not a plain number."""
    L, o_s, o_r = (max(float(loggp[k]), 0.0) for k in ("L", "o_s", "o_r"))
    big_o = max(float(loggp.get("O") or 0.0), 0.0)
    share_s = o_s / (o_s + o_r) if o_s + o_r > 0 else 0.5
    regimes: list[dict[str, Any]] = []
    for seg in segments:
        t_s, t_b = _number(seg.get("t_s")), _number(seg.get("t_b"))
        if t_s is None or t_b is None:
            return None
        G = max(t_b, 0.0)
        overhead = max(t_s + t_b - L, 0.0)
        regimes.append({"n_min": int(seg["n_min"]),
                        "n_max": None if seg.get("n_max") is None else int(seg["n_max"]),
                        "o_s": overhead * share_s, "o_r": overhead * (1.0 - share_s),
                        "G": G, "O": min(big_o, G)})
    return regimes or None
