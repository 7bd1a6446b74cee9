"""The fit's core-distance policy: a library's points measured while the host held ranks 0 and 1
in another state than most of them (commchar.core_distance) describe another machine, and are left
out of its fit wherever the same operation keeps points of the main state.

An operation is fitted in one state: the library's main state where at least half of its own
points lie there, else the state most of its points lie in. A run whose first job fell in the
far state and whose refinement in the near one (MPICH's ping-pong: 24 points 0 B to 4 MiB at
330 ns, the 6 sizes that bisect S at 68 ns, the library's main state) would otherwise be fitted
from the 6 refined sizes alone, one segment from 8555 to 13777 B standing for every size."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from commchar.core_distance import States, group_label, point_pairs, rtt_pair, split

# an operation (library, op, variant, p) keeps its points of every state when fewer than this
# many of the state it would be fitted in would remain: too few to fit
MIN_KEPT = 4
# operations whose answer no core distance moves, kept whole: rndv's points tell a send that
# returns in microseconds from one that waits for a receiver 200 us late, and its refinement
# bisects the threshold, so every point carries a size no other point has
EXEMPT = frozenset({"rndv"})


def keep_one_state(points: list[dict]) -> tuple[list[dict], dict[str, Any]]:
    """The points to fit (checked points, as models/assemble.py normalises them) and, per library
    whose points carry the kernel's round trips, what was found: the states (core_distance.States's
    dict: `main` is the one kept) and how many points per operation were left out."""
    kept: list[dict] = []
    record: dict[str, Any] = {}
    for library in sorted({pt["library"] for pt in points}):
        mine = [pt for pt in points if pt["library"] == library]
        states = split(point_pairs(pt for pt in mine if pt["valid"]))
        if states is None:
            kept += mine
            continue
        entry = states.to_dict()
        if not states.mixed:
            record[library] = entry
            kept += mine
            continue
        def group(pt: dict) -> tuple:
            return pt["op"], pt.get("variant") or "", pt["p"]

        fitted_in = _fitted_states(mine, states, group)
        left: Counter[str] = Counter()
        for pt in mine:
            state = fitted_in.get(group(pt))
            if (state is not None and pt["valid"] and pt["op"] not in EXEMPT
                    and _state(states, pt) != state):
                left[group_label(*group(pt))] += 1
                continue
            kept.append(pt)
        entry.update(left_out=sum(left.values()), left_out_by_operation=dict(sorted(left.items())))
        own = {group_label(*g): {"state": s, "rtt_ns": round(statistics.median(states.members[s]), 1)}
               for g, s in sorted(fitted_in.items()) if s != states.main()}
        if own:
            entry["own_state_by_operation"] = own
        record[library] = entry
    return kept, record


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
