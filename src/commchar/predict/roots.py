"""Where a difference of two cost functions changes sign: the crossovers of `advise`."""

from __future__ import annotations

from typing import Callable, Sequence


def roots(f: Callable[[float], float], grid: Sequence[float]) -> list[float]:
    """Every sign change of f over a sorted grid, refined with brentq."""
    from scipy.optimize import brentq  # scipy.optimize takes 0.3 s to import: only when advising
    values = [f(x) for x in grid]
    found: list[float] = []
    for (a, fa), (b, fb) in zip(zip(grid, values), zip(grid[1:], values[1:])):
        if fa == 0.0 and (not found or found[-1] != a):
            found.append(a)
        elif fa * fb < 0:
            found.append(float(brentq(f, a, b, xtol=1e-9 * max(1.0, abs(b)), maxiter=200)))
    return found


def winner_after(difference: Callable[[float], float], root: float, end: float) -> str:
    """The side that is cheaper just after a crossing (difference = left - right)."""
    x = min(root + max(abs(root) * 1e-6, 1e-9), end)
    return "left" if difference(x) < 0 else "right"
