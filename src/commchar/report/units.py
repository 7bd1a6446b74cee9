"""How the report writes rates: SI by default, IEC binary on request (sizes and
times are written by commchar.vocabulary, as every verb writes them)."""

from __future__ import annotations

import math

import numpy as np

from commchar.report.adapters import UNITS
from commchar.vocabulary import unit_system


def number(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}g}"


class Rates:
    """Bandwidth and message-rate units: SI (MB/s, 10^6) or IEC (MiB/s, 2^20), as the fit's
    metrics define them (commchar.models.metrics.UNITS)."""

    def __init__(self, units: str = "si") -> None:
        units = unit_system(units)
        table = UNITS[units]
        self.bw_unit, self.mega = table["bandwidth"]
        self.kilo = table["specific"][1]
        self.pi_unit = "Ki/s" if units == "iec" else "k/s"

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
