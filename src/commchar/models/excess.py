"""What one variant of a probe costs beyond another, per size: the fit shared by
the first-touch cost (`touch:fresh` over `touch:resident`, models/first_touch.py),
the copy of MPI_Sendrecv_replace (`exchange:replace` over `exchange:sendrecv`,
models/replace_copy.py) and a message landing elsewhere in its page
(`skew:ahead` over `skew:aligned`, models/misaligned_copy.py).

Per size measured in both variants, excess = slow - fast (clamped at 0), fitted as

    excess(n) = c + per_byte * n        (c, per_byte >= 0; least squares in relative error)

weighted by 1/excess so that small sizes count as much as large ones. The cost
per byte is rarely one number (caches), so `steps` keeps each measured size's
own [n, excess / n]; the simulator charges n bytes at the step of the largest
measured size <= n (the smallest size's below it), per_byte where no step
exists.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from commchar.errors import InputError

# the point field each statistic of a model section is read from
TIME_KEYS = {"mean": "t_mean_us", "median": "t_us"}


def point_time(pt: dict, time_key: str = "t_us") -> float | None:
    """A valid point's time_key (else its t_us, the median) when that is a number > 0, else None."""
    if not pt.get("valid", True):
        return None
    t = pt.get(time_key)
    if not isinstance(t, (int, float)) or not np.isfinite(t):
        t = pt.get("t_us")
    return float(t) if isinstance(t, (int, float)) and np.isfinite(t) and t > 0 else None


def paired_points(points: list[dict], op: str, slow: str, fast: str, time_key: str = "t_us"
                  ) -> dict[int, dict[str, tuple[float, dict]]]:
    """{n: {variant: (time, point)}} of the valid points of `op` in the two variants (time:
    time_key, else t_us), sizes > 0 only."""
    by_size: dict[int, dict[str, tuple[float, dict]]] = {}
    for pt in points:
        if pt.get("op") != op or pt.get("variant") not in (slow, fast):
            continue
        t, n = point_time(pt, time_key), pt.get("n_bytes")
        if t is None or not isinstance(n, int) or n <= 0:
            continue
        by_size.setdefault(n, {})[pt["variant"]] = (t, pt)
    return by_size


def paired_times(points: list[dict], op: str, slow: str, fast: str, time_key: str = "t_us"
                 ) -> dict[int, dict[str, float]]:
    """{n: {variant: time}} of paired_points."""
    return {n: {variant: t for variant, (t, _) in pair.items()}
            for n, pair in paired_points(points, op, slow, fast, time_key).items()}


def fit_excess(by_size: dict[int, dict[str, float]], op: str, slow: str, fast: str
               ) -> tuple[dict[str, Any], list[dict[str, float]], list[str]]:
    """(params {per_byte (us/B), c (us), max_bytes, steps}, per-size table, notes)."""
    sizes = sorted(n for n, v in by_size.items() if len(v) == 2)
    if not sizes:
        raise InputError(f"no size with both a valid '{op}:{slow}' and '{op}:{fast}' point")
    n = np.array(sizes, dtype=float)
    slow_t = np.array([by_size[s][slow] for s in sizes])
    fast_t = np.array([by_size[s][fast] for s in sizes])
    excess = slow_t - fast_t
    notes: list[str] = []
    if np.any(excess <= 0):
        notes.append(f"sizes where {slow} was not slower than {fast}: "
                     + ", ".join(str(s) for s, e in zip(sizes, excess) if e <= 0))
    y = np.maximum(excess, 0.0)
    w = 1.0 / np.maximum(y, 1e-3)
    if n.size > 1:
        # scipy.optimize takes most of a second to import: only when a fit needs it, not in
        # every `commchar run` that pairs points to choose its sizes
        from scipy.optimize import nnls
        (c, per_byte), _ = nnls(np.column_stack([np.ones_like(n), n]) * w[:, None], y * w)
    else:
        c, per_byte = 0.0, float(y[0] / n[0])
    params: dict[str, Any] = {
        "per_byte": float(f"{per_byte:.6g}"), "c": round(float(c), 4), "max_bytes": int(n.max()),
        "steps": [[s, float(f"{e / s:.6g}")] for s, e in zip(sizes, y)]}
    table = [{"n": s, f"{slow}_us": round(a, 3), f"{fast}_us": round(b, 3), "excess_us": round(e, 3)}
             for s, a, b, e in zip(sizes, slow_t, fast_t, excess)]
    return params, table, notes


def excess_section(points: list[dict], op: str, slow: str, fast: str, skipped: list[str],
                   library: str, statistic: str = "mean") -> dict[str, Any] | None:
    """A model-file entry of what `op:slow` costs beyond `op:fast` from their means (a program
    pays the mean of its calls; statistic "median": from their medians, where single samples
    carry the host's detours, which the model's noise section charges, in their means): the
    fit's params with the statistic and the per-size table, or None (and why in skipped)."""
    time_key = TIME_KEYS[statistic]
    try:
        params, table, notes = fit_excess(paired_times(points, op, slow, fast, time_key), op, slow, fast)
    except InputError as exc:
        skipped.append(f"{library} {op}: {exc}")
        return None
    return params | {"statistic": statistic, "sizes": table} | ({"notes": notes} if notes else {})
