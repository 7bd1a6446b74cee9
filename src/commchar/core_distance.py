"""How far apart the cores of ranks 0 and 1 are: the state of a host that moves its vCPUs.

The kernel times a cache line's round trip between the cores of ranks 0 and 1
before and after every point, and a validation loop before and after its loop
(`core_rtt_ns`: [before, after], kernels/common/cc_core_distance.h). A virtual
machine's host may move the vCPUs between states: on the 2-core KVM guests
commchar is developed on, the two share a last-level cache for seconds at a time
(a round trip of 75-170 ns), and sit on different ones (400-520 ns) or further
apart still (800-870 ns) for seconds to tens of seconds, and an intra-node
message takes up to four times as long when they are apart. Two round
trips in different states (`split`) were measured on different machines, in effect: a time
measured in one says nothing of the other (docs/method.md, "Where the ranks'
cores are").

Beside the round trip each of the two ranks times a copy of 4 KiB within its own
L1 cache (`core_copy_ns`: [before, after], the slower rank's), which no distance
moves: it takes its least time while both cores run at full speed and longer
while the host slows one, as when it runs another guest's thread on the core's
other hyperthread. On a 2-vCPU guest of an AMD EPYC the copy took 42 ns or 46 to
144 ns, each for tens of milliseconds to seconds, the round trip 65 to 90 ns in
both, and the points a slowed core measured a median 1.18 (MPICH) and 1.21 (Open
MPI) times the others (`slowed`).
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Round trips within one state spread up to 2.2-fold (75-170 ns with the two vCPUs on one
# last-level cache); the states lie 1.7 (450 against 850 ns) to 6 times apart. Sorted, a state's
# round trips lie close together: a step of more than STATE_GAP between neighbours starts another.
STATE_GAP = 1.4

# A copy further than this over the least of its set (copy_floor) ran on a slowed core: the copy
# without a slowed core varied by 3% (41.8 to 42.9 ns over thirty launches), a slowed one took
# 9% to 3.4 times as long.
SLOWED = 1.10
# The least of a set: its lower decile, so that one short copy does not set it.
FLOOR_QUANTILE = 0.1


def _times(extra: Mapping[str, Any] | None, key: str) -> tuple[float, float] | None:
    """(before, after) in ns under `key` of a point's extra or a program's result: two positive
    finite times, else None."""
    value = (extra or {}).get(key)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    try:
        before, after = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(before) and math.isfinite(after)) or before <= 0 or after <= 0:
        return None
    return before, after


def rtt_pair(extra: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """(before, after) in ns from a point's extra or a program's result, None if not measured."""
    return _times(extra, "core_rtt_ns")


def copy_pair(extra: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """(before, after) in ns of the slower rank's L1 copy, from a point's extra or a program's
    result; None if not measured."""
    return _times(extra, "core_copy_ns")


def copy_floor(pairs: Iterable[tuple[float, float]]) -> float | None:
    """The copy's time on cores at full speed: the lower decile of every end of `pairs`; None
    when there are none."""
    ends = sorted(v for pair in pairs for v in pair)
    if not ends:
        return None
    return ends[min(len(ends) - 1, int(FLOOR_QUANTILE * len(ends)))]


def points_copy_floor(points: Iterable[Mapping[str, Any]]) -> float | None:
    """copy_floor of the copies `points` carry in their extra."""
    return copy_floor(pair for pt in points if (pair := copy_pair(pt.get("extra"))) is not None)


def point_slowed(point: Mapping[str, Any], floor: float | None) -> bool:
    """Whether a point (or a program's result: its extra) was measured on a slowed core."""
    return slowed(copy_pair(point.get("extra")), floor)


def slowed(pair: tuple[float, float] | None, floor: float | None) -> bool:
    """Whether a measurement's copy (before, after) took more than SLOWED times `floor` at either
    end: a rank's core ran slowed for part of it. False where either is unknown."""
    return pair is not None and floor is not None and max(pair) > SLOWED * floor


@dataclass(frozen=True)
class States:
    """The states a set of measurements fell into, nearest first: each a list of round trips
    (a measurement's larger one), split where the sorted round trips step by more than STATE_GAP."""

    bounds: tuple[float, ...]  # between state i and i + 1: the geometric middle of the step
    members: tuple[tuple[float, ...], ...]
    changed: int  # measurements whose before and after lie in different states

    @property
    def mixed(self) -> bool:
        return len(self.members) > 1

    def index(self, value: float) -> int:
        return bisect.bisect_right(self.bounds, value)

    def state_of(self, pair: tuple[float, float]) -> int | None:
        """The state both ends of a measurement lie in; None when it moved during it."""
        first, second = self.index(pair[0]), self.index(pair[1])
        return first if first == second else None

    def main(self) -> int:
        """The state most measurements lie in (the nearer one of a tie)."""
        return max(range(len(self.members)), key=lambda i: (len(self.members[i]), -i))

    def main_ns(self) -> float:
        return statistics.median(self.members[self.main()])

    def in_other_states(self) -> int:
        """Measurements that lie in a state other than the main one."""
        return sum(len(m) for m in self.members) - len(self.members[self.main()])

    def outside_main(self) -> int:
        """Measurements outside the main state, or made while the host moved the ranks."""
        return self.in_other_states() + self.changed

    def in_main(self, extra: Mapping[str, Any] | None) -> bool:
        """Whether a point (its extra) was measured in the main state; one without round trips is."""
        pair = rtt_pair(extra)
        return pair is None or self.state_of(pair) == self.main()

    def to_dict(self) -> dict[str, Any]:
        return {"mixed": self.mixed, "changed": self.changed,
                "states": [{"measurements": len(m), "rtt_ns": round(statistics.median(m), 1),
                            "range_ns": [round(min(m), 1), round(max(m), 1)]} for m in self.members],
                "main": self.main()}


def split(pairs: Iterable[tuple[float, float]]) -> States | None:
    """The states of a set of (before, after) round trips; None: no pairs. The states are split
    from the measurements whose two ends lie within a step of each other, and the ends of the
    others that lie beyond all of those. A measurement counts in
    the state of its larger round trip (the state it paid for at least in part); one whose ends lie
    in different states is also counted as `changed`."""
    pairs = list(pairs)
    if not pairs:
        return None
    # the states are where measurements stay: one whose ends lie more than a step apart may have
    # been made while the host moved the cores, and its ends inside the range of the steady ones
    # would bridge the two states it moved between (an end beyond them still shows a state)
    steady = [v for pair in pairs if max(pair) <= STATE_GAP * min(pair) for v in pair]
    low, high = (min(steady), max(steady)) if steady else (math.inf, -math.inf)
    ends = sorted(steady + [v for pair in pairs if max(pair) > STATE_GAP * min(pair)
                            for v in pair if not low <= v <= high])
    bounds = tuple(math.sqrt(lo * hi) for lo, hi in zip(ends, ends[1:]) if hi > STATE_GAP * lo)
    members: list[list[float]] = [[] for _ in range(len(bounds) + 1)]
    changed = 0
    for before, after in pairs:
        value = max(before, after)
        members[bisect.bisect_right(bounds, value)].append(value)
        changed += bisect.bisect_right(bounds, before) != bisect.bisect_right(bounds, after)
    # a state that only ever held the smaller end of a moving measurement has no members: merge it away
    keep = [i for i, m in enumerate(members) if m]
    bounds = tuple(bounds[i] for i in keep[:-1]) if len(keep) < len(members) else bounds
    return States(bounds, tuple(tuple(members[i]) for i in keep), changed)


def same_state(reference: Iterable[tuple[float, float]], pair: tuple[float, float]) -> bool:
    """Whether both ends of `pair` lie in the main state of the `reference` measurements, the
    states split from all of them together."""
    return in_main_state_of(reference, [pair])[0]


def in_main_state_of(reference: Iterable[tuple[float, float]], pairs: list[tuple[float, float]]
                     ) -> list[bool]:
    """For each of `pairs`, whether both its ends lie in the main state of the `reference`
    measurements, the states split from the reference and the pairs together (all True when
    the reference has no round trips)."""
    reference = list(reference)
    main = split(reference)
    states = split([*reference, *pairs])
    if main is None or states is None:
        return [True] * len(pairs)
    # the reference's main state, found again among the states of the whole
    target = states.index(main.main_ns())
    return [states.state_of(pair) == target for pair in pairs]


def in_recorded_main(record: Mapping[str, Any] | None, pair: tuple[float, float] | None) -> bool | None:
    """Whether both ends of `pair` lie in the main state of a recorded split (States.to_dict, as a
    model file's provenance.core_distance[library] keeps it); None when the record or the pair is
    missing or malformed. Each recorded state stands for its measurements: its median as many
    times as it had them, and the two ends of its range."""
    if pair is None or not isinstance(record, Mapping):
        return None
    states, main = record.get("states"), record.get("main")
    if not isinstance(states, list) or not isinstance(main, int) or not 0 <= main < len(states):
        return None
    reference: list[tuple[float, float]] = []
    try:
        for state in states:
            low, high = (float(v) for v in state["range_ns"])
            median, count = float(state["rtt_ns"]), int(state["measurements"])
            reference += [(low, low), (high, high)] + [(median, median)] * max(count, 1)
    except (TypeError, ValueError, KeyError):
        return None
    return same_state(reference, pair)


@dataclass(frozen=True)
class Cores:
    """What a model's points say of the ranks' cores, for a later measurement to be compared
    with: their round trips (split into states) and the floor of their copy."""

    pairs: tuple[tuple[float, float], ...] = ()
    floor_ns: float | None = None

    @classmethod
    def of(cls, points: Iterable[Mapping[str, Any]]) -> Cores:
        points = list(points)
        return cls(tuple(point_pairs(points)), points_copy_floor(points))

    def same_state(self, pair: tuple[float, float] | None) -> bool | None:
        """Whether a measurement's round trips lie in the main state of the points; None where
        either side has none."""
        if not self.pairs or pair is None:
            return None
        return same_state(self.pairs, pair)

    def slowed(self, copy: tuple[float, float] | None) -> bool:
        return slowed(copy, self.floor_ns)


def group_label(op: str, variant: str, p: int) -> str:
    """How the fit's record names an operation whose points outside the main state it left out
    (`provenance.core_distance[library].left_out_by_operation`)."""
    return f"{op}{':' + variant if variant else ''} p={p}"


def by_round_trip(fitted_ns: Mapping[str, float]) -> list[tuple[float, list[str]]]:
    """The operations a fit took from another state than the main one (label -> that state's
    round trip, ns), grouped by state: [(round trip, sorted labels)], nearest first."""
    return [(ns, sorted(label for label, at in fitted_ns.items() if at == ns))
            for ns in sorted(set(fitted_ns.values()))]


def point_pairs(points: Iterable[Mapping[str, Any]]) -> list[tuple[float, float]]:
    """The (before, after) round trips of the points that have them."""
    out = []
    for pt in points:
        pair = rtt_pair(pt.get("extra"))
        if pair is not None:
            out.append(pair)
    return out
