"""How sizes and times are written in tables: one convention for terminal and HTML."""

from __future__ import annotations


def size(n: float) -> str:
    """Bytes with a binary unit where exact: 1024 -> '1 KiB', 8276.2 -> '8276 B'."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and (n / scale).is_integer():
            return f"{int(n / scale)} {unit}"
    return f"{n:.0f} B" if n >= 10 else f"{n:.3g} B"


def us(t: float) -> str:
    """A time in us: one decimal from 100 us up, three significant digits below."""
    return f"{t:.1f}" if abs(t) >= 100 else f"{t:.3g}"
