"""The fit's core-distance policy: a library's points measured while the host held ranks 0 and 1
in another state than most of them (commchar.core_distance) describe another machine, and are left
out of its fit wherever the same operation keeps points of the main state.

An operation is fitted in one state: the library's main state where at least half of its own
points lie there, else the state most of its points lie in. A run whose first job fell in the
far state and whose refinement in the near one (MPICH's ping-pong: 24 points 0 B to 4 MiB at
330 ns, the 6 sizes that bisect S at 68 ns, the library's main state) would otherwise be fitted
from the 6 refined sizes alone, one segment from 8555 to 13777 B standing for every size.

A point measured while the host slowed the core of rank 0 or 1 (commchar.core_distance.slowed:
the slower rank's copy within L1 beyond 1.10 times the floor of the library's copies) describes
another machine too: on a 2-vCPU AMD EPYC guest such points took a median 1.18 (MPICH) and 1.21
(Open MPI) times the full-speed points of the same operation and size (`bench/core_distance.py
--from-db`). They are left out of an operation, in the state it is fitted in, that keeps at least
MIN_KEPT points and at least half of its own on full-speed cores."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from commchar.core_distance import States, group_label, point_pairs, point_slowed, points_copy_floor, rtt_pair, split

# an operation (library, op, variant, p) keeps its points of every state when fewer than this
# many of the state it would be fitted in would remain: too few to fit
MIN_KEPT = 4
# operations whose answer no core distance moves, kept whole: rndv's points tell a send that
# returns in microseconds from one that waits for a receiver 200 us late, and its refinement
# bisects the threshold, so every point carries a size no other point has
EXEMPT = frozenset({"rndv"})


def keep_one_state(points: list[dict]) -> tuple[list[dict], dict[str, Any]]:
    """The points to fit (checked points, as models/assemble.py normalises them) and, per library
    whose points carry the kernel's round trips or copies, what was found: the states
    (core_distance.States's dict: `main` is the one kept), how many points per operation were
    left out, and `slowed` (_full_speed), where a slowed core measured any."""
    kept: list[dict] = []
    record: dict[str, Any] = {}
    for library in sorted({pt["library"] for pt in points}):
        mine, entry = _one_state(points, library)
        mine, slow = _full_speed(mine)
        if slow is not None:
            entry = (entry or {}) | {"slowed": slow}
        if entry is not None:
            record[library] = entry
        kept += mine
    return kept, record


def _group(pt: dict) -> tuple:
    return pt["op"], pt.get("variant") or "", pt["p"]


def _one_state(points: list[dict], library: str) -> tuple[list[dict], dict[str, Any] | None]:
    """A library's points of the states its operations are fitted in, and the record of its
    states (None where no point carries round trips)."""
    mine = [pt for pt in points if pt["library"] == library]
    states = split(point_pairs(pt for pt in mine if pt["valid"]))
    if states is None:
        return mine, None
    entry = states.to_dict()
    if not states.mixed:
        return mine, entry
    kept: list[dict] = []
    fitted_in = _fitted_states(mine, states, _group)
    left: Counter[str] = Counter()
    for pt in mine:
        state = fitted_in.get(_group(pt))
        if (state is not None and pt["valid"] and pt["op"] not in EXEMPT
                and _state(states, pt) != state):
            left[group_label(*_group(pt))] += 1
            continue
        kept.append(pt)
    entry.update(left_out=sum(left.values()), left_out_by_operation=dict(sorted(left.items())))
    own = {group_label(*g): {"state": s, "rtt_ns": round(statistics.median(states.members[s]), 1)}
           for g, s in sorted(fitted_in.items()) if s != states.main()}
    if own:
        entry["own_state_by_operation"] = own
    return kept, entry


def _full_speed(points: list[dict]) -> tuple[list[dict], dict[str, Any] | None]:
    """One library's points less those a slowed core measured, per operation that keeps at
    least MIN_KEPT and at least half of its valid points on full-speed cores, and the record
    (`copy_floor_ns`, `points` slowed, `left_out`, `left_out_by_operation`); the record is None
    where no point carries the ranks' copies or none was slowed."""
    floor = points_copy_floor(pt for pt in points if pt["valid"])
    if floor is None:
        return points, None

    def slow(pt: dict) -> bool:
        return bool(pt["valid"]) and pt["op"] not in EXEMPT and point_slowed(pt, floor)

    counts: dict[tuple, Counter[bool]] = {}
    for pt in points:
        if pt["valid"] and pt["op"] not in EXEMPT:
            counts.setdefault(_group(pt), Counter())[slow(pt)] += 1
    dropped = {g for g, c in counts.items() if c[True] and c[False] >= MIN_KEPT and 2 * c[False] >= c[True] + c[False]}
    hit = sum(c[True] for c in counts.values())
    if not hit:
        return points, None
    left: Counter[str] = Counter(group_label(*_group(pt)) for pt in points if _group(pt) in dropped and slow(pt))
    kept = [pt for pt in points if not (_group(pt) in dropped and slow(pt))]
    return kept, {"copy_floor_ns": round(floor, 2), "points": hit, "left_out": sum(left.values()),
                  "left_out_by_operation": dict(sorted(left.items()))}


def _state(states: States, pt: dict) -> int | None:
    """The state a point was measured in: the main one for a point without round trips, None for
    one the host moved the cores during."""
    pair = rtt_pair(pt.get("extra"))
    return states.main() if pair is None else states.state_of(pair)


def _fitted_states(points: list[dict], states: States, group: Callable[[dict], tuple]) -> dict[tuple, int]:
    """Per operation with points outside one state, the state it is fitted in: the library's main
    state where at least half its valid points lie there, else the state most of them lie in;
    none (every point kept) where that state holds fewer than MIN_KEPT of them."""
    by_group: dict[tuple, Counter[int | None]] = {}
    for pt in points:
        if pt["valid"] and pt["op"] not in EXEMPT:
            by_group.setdefault(group(pt), Counter())[_state(states, pt)] += 1
    fitted: dict[tuple, int] = {}
    main = states.main()
    for g, counts in by_group.items():
        total = sum(counts.values())
        if counts[main] == total:
            continue
        state = main if 2 * counts[main] >= total else max(
            (s for s in counts if s is not None), key=lambda s: (counts[s], s == main, -s), default=main)
        if counts[state] >= MIN_KEPT:
            fitted[g] = state
    return fitted
