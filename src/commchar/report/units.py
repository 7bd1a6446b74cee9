"""How the report writes sizes, times and rates: SI by default, binary on request."""

from __future__ import annotations

import math

import numpy as np

from commchar.models.metrics import UNITS

_BINARY_SIZES = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def size_label(n: float) -> str:
    """Message sizes are powers of two, so they read best in binary units: 64 KiB."""
    n = float(n)
    for factor, unit in _BINARY_SIZES:
        if n >= factor:
            value = n / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.3g} {unit}"
    return f"{n:.0f} B"


def time_label(us: float | None) -> str:
    if us is None or not math.isfinite(us):
        return "–"
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3g} s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def number(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}g}"


def fit_units(units: str) -> str:
    """The report's unit system ("si" or "binary") in commchar.models.metrics' terms ("si", "iec")."""
    return "iec" if units == "binary" else units


class Rates:
    """Bandwidth and message-rate units: SI (MB/s, 10^6) or binary (MiB/s, 2^20), as the fit's
    metrics define them (commchar.models.metrics.UNITS)."""

    def __init__(self, units: str = "si") -> None:
        table = UNITS[fit_units(units)]
        self.bw_unit, self.mega = table["bandwidth"]
        self.kilo = table["specific"][1]
        self.pi_unit = "Ki/s" if units == "binary" else "k/s"

    def bandwidth(self, bytes_per_s: float | None) -> str:
        """MB/s (or MiB/s) with 4 significant digits."""
        if bytes_per_s is None or not math.isfinite(bytes_per_s):
            return "–"
        return f"{bytes_per_s / self.mega:.4g}"

    def bw_from_us(self, n_bytes: float | np.ndarray, t_us: float | np.ndarray) -> float | np.ndarray:
        """n bytes in t microseconds in the report's bandwidth unit (elementwise on arrays)."""
        return n_bytes / t_us * 1e6 / self.mega

    def specific(self, per_s: float | None) -> str:
        """pi_s = 1/t_s in thousands per second, as the published tables give it."""
        if per_s is None or not math.isfinite(per_s):
            return "–"
        return f"{per_s / self.kilo:.4g}"
