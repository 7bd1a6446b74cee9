"""The catalogue of equivalent ways to do one job (models.md section 2): what
`commchar advise` compares. Each side is a sequence of calls, with the
operation's own n written in terms of the job's n (docs/predict.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Step:
    """`count(p)` calls of `key` with message length `n_of(n, p)`, n being the job's n."""

    key: str
    label: str
    n_of: Callable[[float, float], float] = lambda n, p: n
    count: Callable[[float], float] = lambda p: 1.0


@dataclass(frozen=True)
class Equivalence:
    """Two ways to do one job; `job` says what n means (models.md section 2)."""

    name: str
    job: str
    left: tuple[Step, ...]
    right: tuple[Step, ...]

    @property
    def left_label(self) -> str:
        return " + ".join(s.label for s in self.left)

    @property
    def right_label(self) -> str:
        return " + ".join(s.label for s in self.right)


# The n conventions of each operation are converted into the job's n here
# (the conversions are written down in docs/predict.md).
CATALOGUE: tuple[Equivalence, ...] = (
    Equivalence("allgather", "n = total bytes of the gathered vector",
                (Step("allgather", "allgather(n)"),),
                (Step("gather", "gather(n)"), Step("bcast", "bcast(n)"))),
    Equivalence("allreduce", "n = bytes of the vector each process contributes",
                (Step("allreduce", "allreduce(n)"),),
                (Step("reduce", "reduce(n)"), Step("bcast", "bcast(n)"))),
    Equivalence("allreduce (Rabenseifner)", "n = bytes of the vector each process contributes",
                (Step("allreduce", "allreduce(n)"),),
                (Step("reduce_scatter", "reduce_scatter(n)"), Step("allgather", "allgather(n)"))),
    Equivalence("reduce_scatter", "n = bytes of the whole reduced vector",
                (Step("reduce_scatter", "reduce_scatter(n)"),),
                (Step("reduce", "reduce(n)"), Step("scatter", "scatter(n)"))),
    Equivalence("bcast", "n = bytes sent from the root",
                (Step("bcast", "bcast(n)"),),
                (Step("scatter", "scatter(n)"), Step("allgather", "allgather(n)"))),
    Equivalence("alltoall", "n = bytes each process sends to each other",
                (Step("alltoall", "alltoall(n)"),),
                (Step("scatter", "p x scatter(n*p)", n_of=lambda n, p: n * p, count=lambda p: p),)),
    Equivalence("allgather by bcasts", "n = total bytes of the gathered vector",
                (Step("allgather", "allgather(n)"),),
                (Step("bcast", "p x bcast(n/p)", n_of=lambda n, p: n / p, count=lambda p: p),)),
)
