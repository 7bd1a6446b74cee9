"""Where a measured curve changes between two neighbouring sizes, and how tightly
that is known.

Two kinds of change:

- a jump: the `rndv` probe's send returns in its overhead below the rendezvous
  threshold S and waits for the late receiver from S on. Measuring sizes inside
  the gap pins S to the byte.
- a change of slope: a breakpoint between protocol regimes of the ping-pong
  latency (models/regimes.py). Sizes inside the gap pin it to a few percent
  (a slope is only known to the precision of the fits either side).

A change is bracketed by the last measured size on the old side (`before`) and
the first on the new side (`after`): the first size of the new side lies in
[before + 1, after], written as the half-open interval [before + 1, after + 1),
so a threshold pinned to the byte reads S in [12000, 12001).

`commchar run` measures the sizes `inside()` proposes until every change is
pinned (measure/refine.py); `commchar fit` reports the intervals.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from commchar.errors import InputError

JUMP = "jump"
SLOPE = "slope"
# A breakpoint is pinned when its bracket is this narrow (relative): the regimes'
# own fits are not more precise than a few percent on a shared machine.
SLOPE_TOLERANCE = 0.05
# The series whose regime breakpoints are refined: the standard send's latency,
# whose thresholds the report marks (refining every send mode would multiply the
# cost for thresholds the send modes share).
SLOPE_SERIES = (("pingpong", "send"),)
JUMP_OPS = ("rndv",)
# Fraction of the receiver's delay from which a send counts as waiting for it.
RNDV_WAIT_FRACTION = 0.5
# The delay of kernels old enough not to record it in their points (today's default is 200 us).
DEFAULT_DELAY_US = 2000.0


@dataclass(frozen=True)
class Change:
    """A change of the curve of (library, op, variant, p) between two measured sizes."""

    library: str
    op: str
    variant: str
    p: int
    kind: str  # JUMP or SLOPE
    before: int  # the last size measured on the old side
    after: int  # the first size measured on the new side

    @property
    def interval(self) -> tuple[int, int]:
        """[low, high): where the first size of the new side lies."""
        return self.before + 1, self.after + 1

    def pinned(self, tolerance: float = SLOPE_TOLERANCE) -> bool:
        return is_pinned(self.kind, self.before, self.after, tolerance)

    def inside(self, count: int) -> list[int]:
        """Up to `count` sizes strictly inside the gap: evenly spaced for a jump (so
        each round divides the gap by count + 1, bisection generalised), evenly in
        log for a slope (sizes span decades)."""
        lo, hi = self.before, self.after
        if self.kind == JUMP:
            raw = [lo + k * (hi - lo) / (count + 1) for k in range(1, count + 1)]
        else:
            start = max(lo, 1)  # from 0 the log spacing starts at 1 byte
            raw = [start * (hi / start) ** (k / (count + 1)) for k in range(1, count + 1)]
            raw += [1.0] if lo == 0 else []
        return sorted({int(round(x)) for x in raw if lo < int(round(x)) < hi})


def is_pinned(kind: str, before: int, after: int, tolerance: float = SLOPE_TOLERANCE) -> bool:
    """Whether a change between sizes `before` and `after` is known well enough: no size
    lies between them, or (a slope) they are within `tolerance` of each other."""
    if after - before <= 1:
        return True
    return kind == SLOPE and before > 0 and after <= before * (1 + tolerance)


def rendezvous_bracket(n: np.ndarray, t: np.ndarray, delay_us: float,
                       fraction: float = RNDV_WAIT_FRACTION) -> tuple[int | None, int] | None:
    """(last size that does not wait, S): S is the smallest size from which the send
    waits >= fraction * delay at every larger size; None when the largest does not
    wait. The first element is None when every size measured waits."""
    order = np.argsort(n, kind="stable")
    n, t = n[order], t[order]
    waits = t >= fraction * delay_us
    if not n.size or not waits[-1]:
        return None
    if waits.all():
        return None, int(n[0])
    first = n.size - int(np.argmin(waits[::-1]))
    return int(n[first - 1]), int(n[first])


def receiver_delay(points: list[dict]) -> float:
    """The receiver's delay the rndv points were measured with (the kernel records it)."""
    delays = [float(pt["extra"]["delay_us"]) for pt in points
              if isinstance(pt.get("extra"), dict) and isinstance(pt["extra"].get("delay_us"), (int, float))]
    return float(np.median(delays)) if delays else DEFAULT_DELAY_US


def find_changes(points: list[dict]) -> list[Change]:
    """Every jump and change of slope in `points` (store or fit point dicts; invalid
    and oversubscribed points are not looked at)."""
    series: dict[tuple[str, str, str, int], list[dict]] = defaultdict(list)
    for pt in points:
        if pt.get("valid", True) and not pt.get("oversubscribed") and _finite(pt.get("t_us")):
            series[(pt["library"], pt["op"], pt.get("variant") or "", int(pt["p"]))].append(pt)
    changes: list[Change] = []
    for (library, op, variant, p), pts in sorted(series.items()):
        n = np.array([float(pt["n_bytes"]) for pt in pts])
        t = np.array([float(pt["t_us"]) for pt in pts])
        if op in JUMP_OPS:
            bracket = rendezvous_bracket(n, t, receiver_delay(pts))
            if bracket is not None and bracket[0] is not None:
                changes.append(Change(library, op, variant, p, JUMP, bracket[0], bracket[1]))
        elif (op, variant) in SLOPE_SERIES:
            changes += [Change(library, op, variant, p, SLOPE, before, after)
                        for before, after in regime_breakpoints(n, t)]
    return changes


def regime_breakpoints(n: np.ndarray, t: np.ndarray) -> list[tuple[int, int]]:
    """(last size of a regime, first of the next) for the regimes the fit finds."""
    from commchar.models.regimes import SegmentedHockneyModel

    if np.unique(n).size < 6 or np.any(t <= 0):
        return []
    try:
        model = SegmentedHockneyModel(bootstrap=0).fit(n, t)
    except InputError:
        return []
    return [(int(b["after"]), int(b["at"])) for b in model.breakpoints_]


def describe(low: int, high: int) -> str:
    """An interval as the report and `fit` print it: [12000, 12001)."""
    return f"[{low}, {high})"


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
