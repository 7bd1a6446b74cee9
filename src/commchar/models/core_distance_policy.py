"""The fit's core-distance policy: a library's points measured while the host held ranks 0 and 1
in another state than most of them (commchar.core_distance) describe another machine, and are left
out of its fit wherever the same operation keeps points of the main state."""

from __future__ import annotations

from collections import Counter
from typing import Any

from commchar.core_distance import group_label, point_pairs, split

# an operation (library, op, variant, p) keeps its points of the other state when fewer than
# this many of the main state would remain: too few to fit
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

        remaining = Counter(group(pt) for pt in mine if pt["valid"] and states.in_main(pt.get("extra")))
        left: Counter[str] = Counter()
        for pt in mine:
            if (pt["valid"] and pt["op"] not in EXEMPT and not states.in_main(pt.get("extra"))
                    and remaining[group(pt)] >= MIN_KEPT):
                left[group_label(*group(pt))] += 1
                continue
            kept.append(pt)
        entry.update(left_out=sum(left.values()), left_out_by_operation=dict(sorted(left.items())))
        record[library] = entry
    return kept, record
