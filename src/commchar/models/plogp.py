"""Size-dependent LogGP costs (Kielmann's PLogP idea) from the ping-pong regimes.

LogGP's single G is the gap per byte of long messages; an MPI library's eager
protocol may copy twice and cost several times more per byte at mid sizes.
The fitted `pingpong:send` segments already hold that: one-way time
t_s + t_b n per protocol regime. `size_regimes` turns each segment into the
per-message costs the simulator looks up by size (`loggp.regimes`), keeping
g and S global (and L, except an eager regime's own):

- G = t_b of the segment (clamped at 0);
- o_s + o_r + L = t_s + t_b, so o_s + L + o_r + (n-1)G equals the segment's
  t_s + t_b n at every size of the segment. An eager segment (n_max < S)
  whose fixed time exceeds the PRTT's o_s + L + o_r keeps the PRTT's o_s and
  o_r, what the sender's and the receiver's CPUs pay, and takes the rest as
  its own latency `L`: the time the message spends between the two CPUs
  (the cells it crosses, the receiver's poll finding it), which two
  messages sent back to back overlap. On a 2-vCPU Intel Xeon guest MPICH's
  eager ping-pong of 256 B has a fixed time of 0.45 us one way against the
  PRTT's o_s + L + o_r of 0.32, and a loop that sends two such messages each
  way takes 0.84 us an iteration, one 0.56: the second pair costs what the
  CPUs pay, not a whole half round trip (docs/models.md, "Size-dependent
  costs").
  A segment S cuts is two entries, its eager sizes and the rest.
  Every other segment splits t_s + t_b - L (clamped at 0) in the ratio of the
  PRTT o_s : o_r (halves when both are 0) under the global L: a rendezvous
  message's handshake crosses L twice, and the segment's time holds it once;
- O = min(global O, G), so the receiver's max((n-1)O, (n-1)G) stays (n-1)G
  and the end-to-end time is still the segment's.
"""

from __future__ import annotations

import math
from typing import Any

from commchar.segment_gaps import by_rendezvous


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
    S = _number(loggp.get("S"))
    share_s = o_s / (o_s + o_r) if o_s + o_r > 0 else 0.5
    regimes: list[dict[str, Any]] = []
    for seg in segments:
        t_s, t_b = _number(seg.get("t_s")), _number(seg.get("t_b"))
        if t_s is None or t_b is None:
            return None
        G = max(t_b, 0.0)
        overhead = max(t_s + t_b - L, 0.0)
        n_min, n_max = int(seg["n_min"]), None if seg.get("n_max") is None else int(seg["n_max"])
        costs = {"G": G, "O": min(big_o, G)}
        split = {"o_s": overhead * share_s, "o_r": overhead * (1.0 - share_s)}
        if S is None or by_rendezvous(n_min, S) or overhead <= o_s + o_r:
            regimes.append({"n_min": n_min, "n_max": n_max} | split | costs)
            continue
        # the eager sizes of the segment (those below S, the first rendezvous size); those
        # from S on (a segment S cuts) keep the split
        eager_max = int(S) - 1 if n_max is None or by_rendezvous(n_max, S) else n_max
        regimes.append({"n_min": n_min, "n_max": eager_max, "o_s": o_s, "o_r": o_r,
                        "L": L + overhead - o_s - o_r} | costs)
        if eager_max != n_max:
            regimes.append({"n_min": eager_max + 1, "n_max": n_max} | split | costs)
    return regimes or None
