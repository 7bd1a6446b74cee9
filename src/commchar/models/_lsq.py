"""Weighted affine least squares, vectorised: the arithmetic under every Hockney fit.

y ~ a + b x with weights w, solved from the weighted moments so that many
fits (bootstrap draws, every candidate segment of the dynamic programme) cost
one array operation each. Relative-error fitting is w = 1 / y^2.
"""

from __future__ import annotations

import numpy as np

Moments = tuple[np.ndarray, ...]  # S0, S1, S2, Sy, Sxy, Syy


def moments(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> Moments:
    """Weighted moments along the last axis (w may carry leading batch axes)."""
    return (w.sum(-1), (w * x).sum(-1), (w * x * x).sum(-1), (w * y).sum(-1),
            (w * x * y).sum(-1), (w * y * y).sum(-1))


def prefix_moments(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cumulative moments, shape (6, len+1): moments of [i, j) are P[:, j] - P[:, i]."""
    terms = np.vstack([w, w * x, w * x * x, w * y, w * x * y, w * y * y])
    return np.concatenate([np.zeros((6, 1)), np.cumsum(terms, axis=1)], axis=1)


def solve(m: Moments, nonneg: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, weighted RSS) from moments; with nonneg, a >= 0 and b >= 0 (active set).

    The constrained solution for two parameters is one of four cases, so the
    active-set method reduces to choosing among closed forms.
    """
    s0, s1, s2, sy, sxy, syy = (np.asarray(v, dtype=float) for v in m)
    with np.errstate(divide="ignore", invalid="ignore"):
        det = s0 * s2 - s1 * s1
        b = np.where(det > 1e-300 * np.maximum(s0 * s2, 1e-300), (s0 * sxy - s1 * sy) / det, 0.0)
        a = np.where(s0 > 0, (sy - b * s1) / s0, 0.0)
        if nonneg:
            # a < 0: fit through the origin; b < 0: a constant.
            b0 = np.where(s2 > 0, np.maximum(sxy / s2, 0.0), 0.0)
            a0 = np.where(s0 > 0, np.maximum(sy / s0, 0.0), 0.0)
            neg_a, neg_b = a < 0, b < 0
            a, b = np.where(neg_a, 0.0, np.where(neg_b, a0, a)), np.where(neg_a, b0, np.where(neg_b, 0.0, b))
        # RSS = sum w (y - a - b x)^2 expanded in the moments.
        rss = syy - 2 * a * sy - 2 * b * sxy + a * a * s0 + 2 * a * b * s1 + b * b * s2
    return a, b, np.maximum(rss, 0.0)


def relative_fit(x: np.ndarray, y: np.ndarray, nonneg: bool = True,
                 noise: np.ndarray | None = None) -> tuple[float, float]:
    """a, b minimising sum ((a + b x - y) / (y s))^2, s the relative noise (1 when None)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    scale = max(float(np.max(np.abs(x))), 1.0)
    w = 1.0 / (y * y) if noise is None else 1.0 / (y * y * noise * noise)
    a, b = solve_one(tuple(float(v) for v in moments(x / scale, y, w)), nonneg)
    return a, b / scale


def solve_one(m: tuple[float, ...], nonneg: bool = True) -> tuple[float, float]:
    """solve's (a, b) for one set of moments, in Python floats: the same closed forms and the
    same numbers, without the array machinery that costs a single fit 40 us (the adaptive
    rule fits a thousand segments between two measuring jobs)."""
    s0, s1, s2, sy, sxy, _ = m
    det = s0 * s2 - s1 * s1
    b = (s0 * sxy - s1 * sy) / det if det > 1e-300 * max(s0 * s2, 1e-300) else 0.0
    a = (sy - b * s1) / s0 if s0 > 0 else 0.0
    if nonneg:
        if a < 0:
            a, b = 0.0, (max(sxy / s2, 0.0) if s2 > 0 else 0.0)
        elif b < 0:
            a, b = (max(sy / s0, 0.0) if s0 > 0 else 0.0), 0.0
    return a, b
