"""What concurrency costs on one node, from the kernel's `mbw` points (cc_ops_mbw.c).

An `mbw` point at p is k = p // 2 pairs of ranks streaming windows of messages
of n bytes at once; its time t is the slowest sender's window divided by the
window, so k n / t is the node's aggregate bandwidth. One pair alone (k = 1)
costs a + G n a message: its own gap and bandwidth, what the LogGP fit sees.
Pairs that stream at once also share what the node has only one of, its memory
bandwidth and the library's progress engine: each message takes c + n / B_node
of it, so k pairs need k (c + n / B_node) a slot. The time of a slot is the
larger of the two,

    t(n, k) = max(a + G n, k (c + G_node n)),    G_node = 1 / B_node,

and the aggregate bandwidth k n / t saturates at B_node as pairs are added
(at n large enough for c to vanish beside n / B_node).

The fit: a and G from the one-pair points (relative least squares); c and
G_node from the points of several pairs that the pair term cannot explain (their
time more than SLOWER above a + G n), fitted as t / k = c + G_node n with
c <= a and G_node <= G (one pair alone is bound by itself, never by the node),
the classification repeated with the fitted terms until it stops changing. Points
at one pair only, or none that the pairs slowed, leave B_node undetermined: no
parameters, a note giving the largest aggregate bandwidth seen, which B_node is
at least.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import lsq_linear

from commchar.errors import InputError
from commchar.models._lsq import relative_fit

OP = "mbw"
SLOWER = 0.10  # a slot this much slower than one pair alone is bound by the node
ROUNDS = 20  # classification rounds at most


@dataclass
class ConcurrencyModel:
    """Fitted from mbw points: params_ (None when B_node is not determined) and notes_."""

    params_: dict[str, Any] | None = None
    notes_: list[str] = field(default_factory=list)

    def fit(self, points: list[dict]) -> "ConcurrencyModel":
        pts = [pt for pt in points if pt.get("valid", True) and pt["op"] == OP and pt["t_us"] > 0]
        if not pts:
            raise InputError("no valid mbw point")
        n = np.array([pt["n_bytes"] for pt in pts], dtype=float)
        t = np.array([pt["t_us"] for pt in pts], dtype=float)
        k = np.array([pt["p"] // 2 for pt in pts], dtype=float)
        one = k == 1
        if len(set(n[one])) < 2:
            raise InputError("mbw needs one pair (p = 2 or 3) at two sizes or more, to separate a pair's own"
                             " cost from the node's")
        a, g = relative_fit(n[one], t[one])
        pair = a + g * n
        aggregate = k * n / t
        many = k > 1
        bound = many & (t > (1 + SLOWER) * pair)
        c = gn = 0.0
        held = False
        for _ in range(ROUNDS):
            if not bound.any():
                break
            c, gn, held = _node_fit(n[bound], t[bound] / k[bound], a, g)
            again = many & (k * (c + gn * n) > pair)
            if np.array_equal(again, bound):
                break
            bound = again
        self.notes_ = []
        pairs = sorted({int(x) for x in k})
        if not many.any():
            self.notes_.append(f"mbw measured with one pair only (p = {sorted({pt['p'] for pt in pts})}):"
                               " the node's bandwidth is at least "
                               f"{float(aggregate.max()):.0f} MB/s; measure at p >= 4")
            self.params_ = None
            return self
        if not bound.any() or gn <= 0:
            self.notes_.append(f"no pairs slowed each other beyond {SLOWER:.0%} (up to {max(pairs)} pairs):"
                               f" the node's bandwidth is at least {float(aggregate[many].max()):.0f} MB/s")
            self.params_ = None
            return self
        predicted = np.maximum(pair, k * (c + gn * n))
        rel = (predicted - t) / t
        if held:
            self.notes_.append("the node's terms were held to one pair's own (c_node <= a, G_node <= G):"
                               " the points at several pairs are slower than sharing the node explains"
                               " (time-shared cores?); rel_rms shows how far")
        self.params_ = {
            "B_node": 1.0 / gn,
            "G_node": gn,
            "c_node": c,
            "pair": {"a": a, "G": g},
            "pairs": pairs,
            "p_range": [int(min(pt["p"] for pt in pts)), int(max(pt["p"] for pt in pts))],
            "n_range": [int(n.min()), int(n.max())],
            "points": len(pts),
            "node_bound_points": int(bound.sum()),
            "peak_aggregate_MB_s": float(aggregate.max()),
            "rel_rms": float(np.sqrt(np.mean(rel * rel))),
            "rel_max": float(np.max(np.abs(rel))),
        }
        return self

    def predict(self, n: Any, p: Any) -> np.ndarray:
        """t(n, p // 2) in us; needs params_."""
        if self.params_ is None:
            raise InputError("the node's bandwidth was not determined")
        prm = self.params_
        n = np.asarray(n, dtype=float)
        k = np.asarray(p, dtype=int) // 2
        return np.maximum(prm["pair"]["a"] + prm["pair"]["G"] * n, k * (prm["c_node"] + prm["G_node"] * n))


def _node_fit(n: np.ndarray, y: np.ndarray, a: float, g: float) -> tuple[float, float, bool]:
    """c, G_node with y ~ c + G_node n in relative errors, held to 0 <= c <= a and
    0 <= G_node <= g: one pair alone is never slower than its own a + g n (it would
    contradict the one-pair points, and a simulated pair alone would slow down).
    The third value: whether a bound held the fit."""
    scale = max(float(n.max()), 1.0)
    design = np.column_stack([np.ones_like(n), n / scale]) / y[:, None]
    upper = np.array([a, g * scale])
    if len(set(n.tolist())) < 2:  # one size: no intercept to separate
        design, upper = design[:, 1:], upper[1:]
    fit = lsq_linear(design, np.ones_like(y), bounds=(np.zeros_like(upper), upper), method="bvls")
    x = np.concatenate([[0.0], fit.x]) if fit.x.size == 1 else fit.x
    held = bool(np.any(np.isclose(x[-upper.size:], upper, rtol=1e-9, atol=0.0)))
    return float(x[0]), float(x[1]) / scale, held


def concurrency_section(points: list[dict], library: str, skipped: list[str]) -> dict[str, Any] | None:
    """The model file's `concurrency` section of one library from its mbw points, or None
    with the reason appended to `skipped`."""
    try:
        model = ConcurrencyModel().fit(points)
    except InputError as exc:
        skipped.append(f"{library} mbw: {exc}")
        return None
    if model.params_ is None:
        skipped.append(f"{library} mbw: {'; '.join(model.notes_)}")
        return None
    return model.params_ | {"notes": model.notes_}
