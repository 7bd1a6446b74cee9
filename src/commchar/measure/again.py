"""Points measured with the cores of ranks 0 and 1 in another state than most of their library's
(commchar.core_distance) describe another machine: the fit leaves them out, or fits their operation
in that state where most of its points lie there (models/core_distance_policy.py), and a model of
a state the programs do not run in predicts them wrong (one run's MPICH point-to-point operations,
measured with the cores 327 ns apart while its applications ran 66 ns apart: its Gaussian
elimination of N = 256 predicted +31%). A sweep measures such points once more after its jobs and
before its refinement, each library at each p in one job (measure/runner.py, `measure_moved`): a
point measured again replaces the first in the store, which keeps the first's times and round
trips in the new point's `extra.superseded`, whatever state the second finds."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from commchar.core_distance import point_pairs, split
from commchar.measure.plan import Point
from commchar.measure.refine import MeasureJob
from commchar.models.core_distance_policy import EXEMPT
from commchar.store import Store


@dataclass
class AgainResult:
    points: int = 0  # points measured again (stored or failed)
    still: int = 0  # points outside their library's main state after that


def elsewhere(points: list[dict]) -> dict[tuple[str, int], list[Point]]:
    """Per (library, p), the valid points measured outside their library's main state of the
    cores, or while the host moved them (operations whose answer no distance moves aside)."""
    todo: dict[tuple[str, int], list[Point]] = defaultdict(list)
    for library in sorted({pt["library"] for pt in points}):
        mine = [pt for pt in points if pt["library"] == library and pt["valid"] and pt["op"] not in EXEMPT]
        states = split(point_pairs(mine))
        if states is None:
            continue
        for pt in mine:
            if not states.in_main(pt.get("extra")):
                floor = (pt.get("extra") or {}).get("min_reps")
                todo[(library, pt["p"])].append(Point(
                    pt["op"], pt.get("variant") or "", pt["n_bytes"], precision=pt.get("precision_target"),
                    min_reps=floor if isinstance(floor, int) and not isinstance(floor, bool) else None))
    return {key: sorted(todo[key], key=lambda pt: (pt.op, pt.variant, pt.n_bytes)) for key in sorted(todo)}


def measure_again(store: Store, run_id: int, libraries: list[str], measure: MeasureJob,
                  on_start: Callable[[int], None] | None = None) -> AgainResult:
    """Measure once more the points of `libraries` in run `run_id` that lie outside their
    library's main state (`measure` stores each in place of the first; `on_start` is told how
    many, where there are any)."""
    def mine() -> list[dict]:
        return [pt for pt in store.points([run_id]) if pt["library"] in libraries and not pt["locality"]]

    todo = elsewhere(mine())
    result = AgainResult(points=sum(len(points) for points in todo.values()))
    if todo and on_start is not None:
        on_start(result.points)
    for (library, p), points in todo.items():
        measure(library, p, points)
    if todo:
        result.still = sum(len(points) for points in elsewhere(mine()).values())
    return result
