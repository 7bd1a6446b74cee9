"""Where a size falls among a fit's segments, and what a size between two of them costs.

A fit's segments each cover the sizes they were fitted on ([n_min, n_max], in size
order, disjoint; the first open below, the last above). A size between two of them
lies where the library switches from one protocol to the next at a threshold no
measured size pinned. It takes the line of the segment with the nearer bound (ties:
the lower), held inside the band of the two segments' times at the gap's ends: a
communication time does not dip or peak between two sizes (measure/adaptive.py asks
for a size where a model's line does), so a one-size segment's guessed slope, or a
segment's line carried across a step, is not charged beyond either end. Nothing
better is known of the threshold: interpolating between the ends instead charges a
step's share to sizes that lie wholly on one side of it (MPICH's message to oneself,
0.235 us at 5793 B and 1.98 at 8192 B, would cost 0.49 us at 6144 B, where it took
0.25; docs/models.md, "Between two segments").

Where the library's rendezvous threshold S is known (the rndv probe's bracket of its
first waiting size), a gap that holds it is no unknown: `close_at` ends the lower
segment at S - 1 and starts the upper at S. The fit applies it to the series whose
messages are n bytes (vocabulary.switches_at_threshold).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Sequence

Bounds = Sequence[tuple[float, float | None]]
Threshold = tuple[int, int]  # [low, high]: the sizes the first waiting size may be


def by_rendezvous(n: float, S: float | None) -> bool:
    """Whether a message of n bytes waits for its receiver: S is the library's first such
    size (the rndv probe's; the simulator sends up to S - 1 bytes eagerly); False without S."""
    return S is not None and n >= S


def is_threshold(value: Any) -> bool:
    """None, or [low, high]: whole sizes with 1 <= low <= high (an estimator's `threshold`)."""
    if value is None:
        return True
    return (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value) and 1 <= value[0] <= value[1])


def close_at(segments: list[dict[str, Any]], threshold: Threshold) -> tuple[int, int, int] | None:
    """Close the first gap between two of `segments` ({"n_min", "n_max"} dicts in size order)
    that overlaps `threshold`: the switch is the threshold's high end, or the upper segment's
    first size where that is lower; the lower segment then covers up to the switch - 1 and the
    upper from it. (index of the lower segment, last size known below the switch, the
    switch), or None where no gap overlaps it."""
    low, high = threshold
    for k in range(len(segments) - 1):
        below, above = segments[k]["n_max"], segments[k + 1]["n_min"]
        if below < high and above >= low and above > below + 1:
            switch = int(min(high, above))
            segments[k]["n_max"], segments[k + 1]["n_min"] = float(switch - 1), float(switch)
            return k, int(max(below, low - 1)), switch
    return None


def locate(bounds: Bounds, n: float) -> tuple[int, int, float]:
    """(lower, upper, weight) of size n among segments bounded by `bounds` ((n_min, n_max)
    each, n_max None for an open last one): (k, k, 0.0) where segment k covers n, or n lies
    below the first (k = 0) or beyond the last (the last); in the gap between segments k and
    k + 1, (k, k + 1, w), w = (n - n_max of k) / (n_min of k + 1 - n_max of k), in (0, 1)."""
    for k, (low, high) in enumerate(bounds):
        if n < low:
            if k == 0:
                return 0, 0, 0.0
            below = bounds[k - 1][1]
            assert below is not None  # only the last segment is open above
            return k - 1, k, (n - below) / (low - below)
        if high is None or n <= high:
            return k, k, 0.0
    last = len(bounds) - 1
    return last, last, 0.0


def nearest(lower: int, upper: int, weight: float) -> int:
    """The segment with the nearer bound to a size `locate` placed (ties: the lower)."""
    return lower if weight <= 0.5 else upper


def price(bounds: Bounds, n: float, time_at: Callable[[int, float], float]) -> float:
    """The time at size n of segments bounded by `bounds`, `time_at(k, size)` being segment
    k's line: the covering segment's, or the nearer bound's held within the two segments'
    times at the ends of the gap n lies in."""
    lower, upper, weight = locate(bounds, n)
    t = time_at(nearest(lower, upper, weight), n)
    if lower == upper:
        return t
    below, above = time_at(lower, bounds[lower][1]), time_at(upper, bounds[upper][0])  # type: ignore[arg-type]
    return min(max(t, min(below, above)), max(below, above))
