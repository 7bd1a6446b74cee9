"""Two simulator builds run in turn on one case, for the benches' --baseline.

One run on this shared machine moves by tens of percent; alternating the two
builds within one sitting and taking the median of the per-round CPU-time
ratios is what holds. A build that computes another makespan is not the same
simulator made faster: that is reported, and the bench fails on it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Comparison:
    ours: dict  # this build's median round (by CPU time)
    theirs: dict  # the baseline's median round
    ratio: float  # median over the rounds of baseline CPU / this build's CPU
    rounds: int
    same_makespan: bool

    def describe(self, memory_key: str, memory_unit: str) -> str:
        return (f"  | baseline {self.theirs['cpu_s']:.2f} s cpu, {self.theirs[memory_key]:.0f} {memory_unit}; "
                f"median ratio {self.ratio:.2f} over {self.rounds} rounds"
                f"{'' if self.same_makespan else ', makespan DIFFERS'}")


def alternate(measure: Callable[[Path], dict], ours: Path, baseline: Path, rounds: int) -> Comparison:
    """Runs `measure` on the baseline then on this build, `rounds` times. Each
    measurement holds at least `cpu_s` and `makespan`."""
    mine, theirs = [], []
    for _ in range(rounds):
        theirs.append(measure(baseline))
        mine.append(measure(ours))
    ratios = [b["cpu_s"] / max(m["cpu_s"], 1e-9) for b, m in zip(theirs, mine)]

    def median_round(runs: list[dict]) -> dict:
        return sorted(runs, key=lambda m: m["cpu_s"])[len(runs) // 2]

    same = {m["makespan"] for m in mine + theirs} == {mine[0]["makespan"]}
    return Comparison(median_round(mine), median_round(theirs), statistics.median(ratios), rounds, same)
