"""The overlap a non-blocking collective allows, from its `pure` and `overlap` points
(kernels/mpi/cc_ops_nbc.c), as OSU and IMB-NBC define it:

    overlap = max(0, min(1, 1 - (t_overlap - t_compute) / t_pure))

1 when the whole communication hid behind the computation, 0 when none of it
did. t_compute is the computation the kernel ran (`extra.compute_us`), as long
as the pure time it measured at set-up.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from commchar.vocabulary import NONBLOCKING as NONBLOCKING_OPS


@dataclass(frozen=True)
class Overlap:
    library: str
    op: str
    p: int
    n_bytes: int
    t_pure_us: float
    t_overlap_us: float
    t_compute_us: float

    @property
    def fraction(self) -> float:
        if self.t_pure_us <= 0:
            return 0.0
        return max(0.0, min(1.0, 1.0 - (self.t_overlap_us - self.t_compute_us) / self.t_pure_us))


def overlaps(points: list[dict]) -> list[Overlap]:
    """Every (library, op, p, n) measured both pure and overlapped, valid, in order."""
    pairs: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for pt in points:
        if pt["op"] in NONBLOCKING_OPS and pt.get("valid", True):
            pairs[(pt["library"], pt["op"], pt["p"], pt["n_bytes"])][pt["variant"]] = pt
    out = []
    for (library, op, p, n), both in sorted(pairs.items()):
        pure, over = both.get("pure"), both.get("overlap")
        compute = ((over or {}).get("extra") or {}).get("compute_us")
        if pure is None or over is None or not isinstance(compute, (int, float)):
            continue
        out.append(Overlap(library, op, p, n, float(pure["t_us"]), float(over["t_us"]), float(compute)))
    return out
