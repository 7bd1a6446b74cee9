"""One benchmark result read from a peer tool's output, before it becomes a stored point.

Peers print a mean over iterations (OSU: averaged over ranks; IMB: min, max and
average over ranks of each rank's loop average), never every sample: the point
carries its tool, the tool's version and which statistic its time is, so every
place that shows it can say it is a mean and not commchar's median.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ImportedPoint:
    op: str  # commchar's operation name (operations.py)
    variant: str
    p: int
    n_bytes: int  # in commchar's meaning of n (kernel-protocol.md), converted from the tool's
    t_us: float  # the tool's mean
    program: str  # the tool's benchmark (osu_latency, IMB PingPong)
    statistic: str  # what t_us is, in words
    line: int  # where in the file, for messages
    reps: int = 0  # iterations per size, when the tool prints them
    extra: dict[str, Any] = field(default_factory=dict)  # per-rank min/max, percentiles, tool's size
    cache: str = "warm"  # "cold": the tool rotated its buffers out of cache (IMB -off_cache)


@dataclass
class ParsedFile:
    tool: str  # "osu" | "imb"
    version: str  # as the file states it ("7.4", "2021.10"); "" when it does not
    points: list[ImportedPoint]
    skipped: list[str]  # benchmarks the file holds that commchar has no operation for
