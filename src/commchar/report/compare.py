"""Side-by-side comparison: which library (or run) is faster where, and by how much.

The first entity is the reference; every other one is compared with it at the
sizes both measured, per operation, at the largest p both measured, in three
size bands. A band's ratio is the geometric mean of the per-size time ratios.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commchar.report.dataset import Entity
from commchar.vocabulary import LOGGP_OPS, format_size, is_collective, key_order
from commchar.tables import Table

BANDS = ((0, 1024, "n ≤ 1 KiB"), (1025, 64 * 1024, "1 KiB < n ≤ 64 KiB"),
         (64 * 1024 + 1, math.inf, "n > 64 KiB"))


@dataclass
class BandRatio:
    key: str
    p: int
    band: str
    ratio: float  # other / reference time, geometric mean over sizes
    sizes: int
    worst_n: int  # the size with the largest gap
    worst_ratio: float
    oversubscribed: bool = False


def _compare_key(ref: Entity, other: Entity, key: str) -> list[BandRatio]:
    ps = sorted(set(ref.ps(key)) & set(other.ps(key)))
    if not ps:
        return []
    # Time-shared (oversubscribed) processes measure the scheduler: compare at the
    # largest p both ran on dedicated cores, and fall back to the largest p only if none.
    dedicated = [p for p in ps if not (ref.series(key, p).oversubscribed.any()  # type: ignore[union-attr]
                                       or other.series(key, p).oversubscribed.any())]  # type: ignore[union-attr]
    p = 2 if not is_collective(key) and 2 in ps else (dedicated or ps)[-1]
    a, b = ref.series(key, p), other.series(key, p)
    assert a is not None and b is not None
    common, ia, ib = np.intersect1d(a.n, b.n, return_indices=True)
    ok = a.valid[ia] & b.valid[ib] & (a.t[ia] > 0) & (b.t[ib] > 0)
    common, ratio = common[ok], b.t[ib][ok] / a.t[ia][ok]
    out = []
    for lo, hi, name in BANDS:
        sel = (common >= lo) & (common <= hi)
        if not sel.any():
            continue
        r = ratio[sel]
        worst = int(np.argmax(np.abs(np.log(r))))
        out.append(BandRatio(key, p, name, float(np.exp(np.mean(np.log(r)))), int(sel.sum()),
                             int(common[sel][worst]), float(r[worst]),
                             bool(a.oversubscribed.any() or b.oversubscribed.any())))
    return out


def band_ratios(ref: Entity, other: Entity) -> list[BandRatio]:
    keys = sorted(set(ref.keys()) & set(other.keys()), key=key_order)
    return [br for key in keys if key.partition(":")[0] not in LOGGP_OPS for br in _compare_key(ref, other, key)]


def verdict(ref: Entity, other: Entity, ratio: float) -> str:
    if abs(math.log(ratio)) < math.log(1.05):
        return "same (within 5%)"
    if ratio < 1:
        return f"{other.label} {1 / ratio:.3g}× faster"
    return f"{ref.label} {ratio:.3g}× faster"


def comparison_table(ref: Entity, other: Entity) -> Table | None:
    ratios = band_ratios(ref, other)
    if not ratios:
        return None
    rows: dict[tuple[str, int, bool], dict[str, str]] = {}
    for br in ratios:
        rows.setdefault((br.key, br.p, br.oversubscribed), {})[br.band] = (
            f"{verdict(ref, other, br.ratio)} ({br.sizes} sizes; widest {br.worst_ratio:.3g} "
            f"at {format_size(br.worst_n)})")
    return Table(
        f"compare-{ref.label}-{other.label}",
        f"{other.label} against {ref.label} (the reference): which is faster where",
        ["operation", "p"] + [b[2] for b in BANDS],
        [[key, f"{p}{' (oversubscribed)' if over else ''}"] + [cells.get(b[2], "–") for b in BANDS]
         for (key, p, over), cells in rows.items()],
        [f"Geometric mean over the sizes both measured of t({other.label}) / t({ref.label}); "
         "'widest' is the single size with the largest ratio either way. Compared at the largest p "
         "both ran without oversubscription where there is one."],
    )
