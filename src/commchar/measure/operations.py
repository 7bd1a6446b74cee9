"""The catalogue of measurable operations and the meaning of n for each.

n follows models.md section 2. The runner rounds each requested size up to
the nearest size the operation can use at p (a multiple of p for scatter,
gather and allgather, of 8 bytes for reductions, of 8p for reduce_scatter), so
the kernel only ever sees sizes it can measure and stored points carry the
size actually moved.
"""

from __future__ import annotations

from dataclasses import dataclass

from commchar.errors import UsageError

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class Operation:
    name: str
    kind: str  # "p2p" (ranks 0 and 1), "collective", "loggp"
    variants: tuple[str, ...] = ("",)
    unit: str = "byte"  # byte | per_rank | double | double_per_rank | none
    default_max_bytes: int = MiB
    in_default: bool = True

    def size_quantum(self, p: int) -> int:
        return {"byte": 1, "per_rank": p, "double": 8, "double_per_rank": 8 * p, "none": 0}[self.unit]

    def effective_size(self, n: int, p: int) -> int:
        quantum = self.size_quantum(p)
        if quantum == 0:
            return 0
        return -(-n // quantum) * quantum


_REDUCTION_VARIANTS = ("sum", "nop")

OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("pingpong", "p2p", ("send", "bsend", "ssend", "rsend", "isend"),
                  default_max_bytes=4 * MiB),
        Operation("bw", "p2p", default_max_bytes=4 * MiB),
        Operation("bibw", "p2p", default_max_bytes=4 * MiB),
        Operation("barrier", "collective", unit="none"),
        Operation("bcast", "collective"),
        Operation("scatter", "collective", unit="per_rank"),
        Operation("gather", "collective", unit="per_rank"),
        Operation("allgather", "collective", unit="per_rank"),
        Operation("alltoall", "collective"),
        Operation("reduce", "collective", _REDUCTION_VARIANTS, unit="double"),
        Operation("allreduce", "collective", _REDUCTION_VARIANTS, unit="double"),
        Operation("reduce_scatter", "collective", _REDUCTION_VARIANTS, unit="double_per_rank"),
        Operation("scan", "collective", _REDUCTION_VARIANTS, unit="double"),
        Operation("loggp", "loggp", default_max_bytes=4 * MiB),
        Operation("rndv", "loggp", default_max_bytes=4 * MiB),
    )
}


@dataclass(frozen=True, order=True)
class OpVariant:
    op: str
    variant: str

    @property
    def operation(self) -> Operation:
        return OPERATIONS[self.op]

    def __str__(self) -> str:
        return f"{self.op}:{self.variant}" if self.variant else self.op


def parse_ops(text: str | None) -> list[OpVariant]:
    """`pingpong` means every send mode, `pingpong:ssend` one; None means the defaults."""
    if text is None:
        names = [name for name, op in OPERATIONS.items() if op.in_default]
        return [OpVariant(n, v) for n in names for v in OPERATIONS[n].variants]
    chosen: list[OpVariant] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise UsageError(f"--ops: empty operation name in '{text}'")
        name, _, variant = item.partition(":")
        op = OPERATIONS.get(name)
        if op is None:
            raise UsageError(f"--ops: unknown operation '{name}' (known: {', '.join(OPERATIONS)})")
        if variant and variant not in op.variants:
            known = ", ".join(v for v in op.variants if v) or "none"
            raise UsageError(f"--ops: '{name}' has no variant '{variant}' (variants: {known})")
        for v in ([variant] if variant else list(op.variants)):
            if OpVariant(name, v) not in chosen:
                chosen.append(OpVariant(name, v))
    return chosen
