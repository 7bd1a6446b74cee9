"""What a copy costs when a rank's message buffers outgrow its caches, from the kernel's
`footprint` points (cc_ops_exchange.c): the `exchange:sendrecv` exchange with each rank
cycling through 4, 16 or 64 pairs of buffers, the next pair each call, against the same
exchange over one pair, whose buffers stay in cache: the `exchange:sendrecv` probe the
model's own cost of the exchange is fitted from (`footprint:x1`, the same loop measured
beside them, where a run lacks it).

A program that sends from and receives into many buffers (a 2-D halo's four
neighbours, a solver's blocks) copies each message from and into memory a whole cycle
of its traffic away: on this guest's AMD EPYC (1 MiB of L2 a core, 32 MiB of L3) an
exchange of 256 KiB costs about 8% more when each rank cycles through 2 MiB, about 20%
more through 8 MiB and 2.7 times as much through 32 MiB, where the buffers of both
ranks no longer fit the L3 (docs/models.md, "When the buffers outgrow the caches").

Per probe size n, the model keeps what a copy of n bytes costs per byte beyond the
one-pair exchange's when a rank's buffers span F bytes (the point's
`cache_region_bytes`), its mean:

    c_n(F) = (t_footprint(n, F) - t_one_pair(n)) / n,   c_n(2n) = 0

(the one pair's two buffers span 2n). The one pair is the probe the model charges a
message whose buffers stay in cache by, so that the replay's charge at F, that cost and
c_n(F) n, is what the probe measured at F. A loop over one pair of 256 KiB is bimodal on
this guest (MPICH: 20.3 or 24 to 27 us, by where its buffers fall; a loop over four
pairs 22 to 23.5), and a baseline of its own would hide the footprint whenever it fell
high and the model's exchange did not. Each size keeps its own curve: the probe's sizes
meet different footprints, and nothing is assumed of how the size moves the cost of
one. Per size, the steps are the increasing least-squares fit (scipy's isotonic
regression) of its points, 0 at 2n held: more memory never copies faster, and one noisy point is pooled
with its neighbour instead of raising every larger footprint. The tracer records the
bytes of distinct message buffers each rank used (the trace header's buffer_bytes); the
simulator charges each message of s bytes a rank of footprint F receives c_s(F) s, c_s
linear in log2 F between a size's steps (nothing below 2s, the last step's above them)
and linear in log2 s between the two sizes measured around s (the nearest one's beyond
them; sim/src/copy_footprint.rs). The model's own cost of s bytes, fitted from probes
whose buffers span 2s, is where c_s is 0.

A cache holds a rank's buffers up to its size and lets them go past it: the cost is a
step in F, not a line from 2n. Each size's own points lie a factor of 4 apart in F, so
a curve drawn from 0 at 2n to its first point charges the footprints between them a
share of what only the footprints past the cache pay. The other sizes' points fill
those gaps: the footprint up to which every point of the path, whatever its size, took
within two run-to-run noise levels of its one pair (`held_bytes`, `self_held_bytes`;
NOISE) is one the caches held, and every curve is 0 up to it (its steps there set to 0,
a step of 0 added at it). On the Intel Xeon guest (2 MiB of L2 a core) the exchanges of
128 KiB over four pairs, 1 MiB a rank, took -0.3 to +3.1% over one pair, those of 256 KiB
over four, 2 MiB, 35 to 45% more, and an exchange of 256 KiB cycling through two pairs
took what one pair did (docs/models.md, "When the buffers outgrow the caches").

A message a rank sends itself takes the library's self path, a copy within one process
that meets the footprint otherwise: the probe's self variants (`self_x4` ... `self_x64`,
each rank sending to itself) against `exchange:self` (`loggp.self_message`'s probe;
`self_x1` where a run lacks it) give the same curves for it (`self_by_size`), and the
replay charges self messages by those where the model has them, by the others' where it
does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from commchar.models.excess import point_time
from commchar.models.regimes import DEFAULT_NOISE_FLOOR

OP = "footprint"
SELF = "self_"  # the variants whose ranks send to themselves (the library's self path)
# per path: the variants' prefix, the model key, footprint's own loop over one pair of
# buffers (where a run lacks the exchange) and the exchange variant the model's own cost
# of a message in cache is fitted from
PATHS = (("", "by_size", "x1", "sendrecv"), (SELF, "self_by_size", SELF + "x1", "self"))
HELD = {"by_size": "held_bytes", "self_by_size": "self_held_bytes"}  # each path's held_bytes()
BASE_OP = "exchange"
# A footprint at which a probe took no more than this over its one pair costs nothing the
# host's own moves do not: two run-to-run noise levels (models/regimes.py)
NOISE = 2 * DEFAULT_NOISE_FLOOR


def _baseline(points: list[dict], exchange_points: list[dict], one_pair: str, exchange: str) -> dict[int, list[float]]:
    """Per size, the one-pair exchange's means: the exchange probe's where measured, else
    footprint's own loop over one pair."""
    base: dict[int, list[float]] = {}
    for wanted, candidates in ((exchange, exchange_points), (one_pair, points)):
        found: dict[int, list[float]] = {}
        for pt in candidates:
            t = point_time(pt, "t_mean_us")
            if pt.get("variant") == wanted and t is not None and isinstance(pt.get("n_bytes"), int):
                found.setdefault(pt["n_bytes"], []).append(t)
        for size, times in found.items():
            base.setdefault(size, times)
    return base


def _curves(points: list[dict], exchange_points: list[dict], prefix: str, one_pair: str,
            exchange: str) -> tuple[list[dict], list[dict], int | None]:
    """One path's curves (by_size), the rows they were fitted from and its held_bytes."""
    base = _baseline(points, exchange_points, one_pair, exchange)
    rows: list[dict[str, Any]] = []
    by_size: dict[int, dict[int, list[float]]] = {}  # n -> footprint -> us per byte beyond
    for pt in points:
        t, n, footprint = point_time(pt, "t_mean_us"), pt.get("n_bytes"), pt.get("cache_region_bytes")
        variant = str(pt.get("variant") or "")
        if pt.get("op") != OP or variant == one_pair or variant.startswith(SELF) != bool(prefix):
            continue
        if t is None or not isinstance(n, int) or n <= 0 or n not in base:
            continue
        if not isinstance(footprint, int) or footprint <= 2 * n:
            continue
        one_pair_us = float(np.median(base[n]))
        by_size.setdefault(n, {}).setdefault(footprint, []).append((t - one_pair_us) / n)
        rows.append({"n": n, "variant": variant, "footprint_bytes": footprint,
                     "footprint_us": round(t, 3), "one_pair_us": round(one_pair_us, 3)})
    if not by_size:
        return [], rows, None
    from scipy.optimize import isotonic_regression  # scipy takes a while to import: only here

    held = held_bytes(rows)
    sizes = []
    for n, found in sorted(by_size.items()):
        footprints = sorted(found)
        # the one-pair exchange's own buffers first, held at 0 by its weight
        values = np.array([0.0] + [float(np.median(found[f])) for f in footprints])
        weights = np.array([1e9] + [1.0] * len(footprints))
        fitted = np.maximum(isotonic_regression(values, weights=weights, increasing=True).x, 0.0)
        steps = [[2 * n, 0.0]] + [[f, float(f"{v:.6g}")] for f, v in zip(footprints, fitted[1:])]
        sizes.append({"n": n, "steps": held_in_cache(steps, held)})
    return sizes, rows, held


def held_bytes(rows: list[dict[str, Any]]) -> int | None:
    """The largest footprint up to which every row (any size of one path) took within NOISE
    of its one pair; None where the smallest footprint measured already took more."""
    by_footprint: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_footprint.setdefault(int(row["footprint_bytes"]), []).append(row)
    held = None
    for footprint in sorted(by_footprint):
        if any(row["footprint_us"] > row["one_pair_us"] * (1 + NOISE) for row in by_footprint[footprint]):
            break
        held = footprint
    return held


def held_in_cache(steps: list[list[float]], held: int | None) -> list[list[float]]:
    """A size's steps ([F, us per byte], F increasing from 2n) 0 up to `held` (held_bytes),
    with a step of 0 at it where it lies between two of them."""
    if held is None or held <= steps[0][0]:
        return steps
    out = [[f, 0.0 if f <= held else v] for f, v in steps]
    if held < steps[-1][0] and all(f != held for f, _ in steps):
        out.append([held, 0.0])
        out.sort(key=lambda step: step[0])
    return out


def copy_footprint_section(points: list[dict], exchange_points: list[dict], skipped: list[str],
                           library: str) -> dict[str, Any] | None:
    """The loggp section's `copy_footprint` entry, or None (and why in skipped)."""
    section: dict[str, Any] = {"statistic": "mean"}
    rows: list[dict[str, Any]] = []
    for prefix, key, one_pair, exchange in PATHS:
        sizes, found, held = _curves(points, exchange_points, prefix, one_pair, exchange)
        if sizes:
            section[key] = sizes
            rows += found
            if held is not None:
                section[HELD[key]] = held
    if "by_size" not in section:
        skipped.append(f"{library} footprint: no valid point beside a valid footprint:x1 or exchange:sendrecv of"
                       " its size")
        return None
    section["sizes"] = sorted(rows, key=lambda r: (r["variant"].startswith(SELF), r["n"], r["footprint_bytes"]))
    return section
