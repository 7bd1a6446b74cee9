"""What a sweep measures: sizes, process counts and points per (library, p)."""

from __future__ import annotations

from dataclasses import dataclass, field

from commchar import ranges
from commchar.errors import UsageError
from commchar.measure.operations import OPERATIONS, OpVariant
from commchar.vocabulary import op_key, parse_size

MAX_SIZE = 1 << 31  # the kernel counts bytes in C ints
MAX_NP = (1 << 31) - 1  # ranks are C ints


def parse_message_size(text: str, flag: str = "--sizes") -> int:
    """One size the kernel can send (commchar.vocabulary's spellings, at most 2 GiB)."""
    return parse_size(text, flag, MAX_SIZE)


def parse_sizes(text: str) -> list[int]:
    """A list (`0,8,1K`), a range of powers of two with 0 kept (`0:4M`), or a
    range with a factor (`1K:1M:x4`) or a step (`0:64K:+4K`); items combine."""
    sizes: set[int] = set()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise UsageError(f"--sizes: empty item in '{text}'")
        fields = item.split(":")
        if len(fields) == 1:
            sizes.add(parse_message_size(item))
            continue
        if len(fields) not in (2, 3):
            raise UsageError(f"--sizes: '{item}' is not a range (use LO:HI, LO:HI:xF or LO:HI:+S)")
        lo, hi = parse_message_size(fields[0]), parse_message_size(fields[1])
        if lo > hi:
            raise UsageError(f"--sizes: range '{item}' goes down")
        step = fields[2].strip() if len(fields) == 3 else "x2"
        if step[:1] in ("x", "*"):
            factor = _positive_int(step[1:], item)
            if factor < 2:
                raise UsageError(f"--sizes: factor in '{item}' must be at least 2")
            if lo == 0:
                sizes.add(0)
            sizes.update(int(v) for v in ranges.geometric(max(lo, 1), hi, factor, f"--sizes: '{item}'"))
        elif step[:1] == "+":
            increment = parse_message_size(step[1:])
            if increment == 0:
                raise UsageError(f"--sizes: step in '{item}' must be positive")
            sizes.update(ranges.arithmetic(lo, hi, increment, f"--sizes: '{item}'"))
        else:
            raise UsageError(f"--sizes: step '{step}' in '{item}' must be xF or +S")
    return sorted(sizes)


def parse_np(text: str, smallest: int = 2) -> list[int]:
    """Process counts: `2,4`, `2:8`; an application may run on one (smallest=1)."""
    values: set[int] = set()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise UsageError(f"--np: empty item in '{text}'")
        if ":" in item:
            lo_s, _, hi_s = item.partition(":")
            lo, hi = _positive_int(lo_s, item), _positive_int(hi_s, item)
            if lo > hi:
                raise UsageError(f"--np: range '{item}' goes down")
            values.update(ranges.arithmetic(lo, hi, 1, f"--np: '{item}'"))
        else:
            values.add(_positive_int(item, item))
        ranges.check_count(len(values), "--np")
    if min(values) < smallest:
        raise UsageError(f"--np: communication needs at least {smallest} processes")
    if max(values) > MAX_NP:
        raise UsageError(f"--np: {max(values)} processes is more than MPI can address ({MAX_NP})")
    return sorted(values)


def _positive_int(text: str, context: str) -> int:
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or int(digits[:20]) < 1:
        raise UsageError(f"'{context}': '{text}' is not a positive integer")
    if len(digits) > 18:
        raise UsageError(f"'{context}': {digits[:12]}... is too large")
    return int(digits)


# the fewest samples a point may stop with (--min-reps) unless its rule chooses another (Point.min_reps)
DEFAULT_MIN_REPS = 10


@dataclass(frozen=True, order=True)
class Point:
    op: str
    variant: str
    n_bytes: int
    # the precision target it is measured to where not the run's (the kernel plan's @R); not
    # part of what the point is: the same size asked at another precision is the same point
    precision: float | None = field(default=None, compare=False)
    # the fewest samples it may stop with where not the run's --min-reps (the plan's /M)
    min_reps: int | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return op_key(self.op, self.variant)

    @property
    def operation_kind(self) -> str:
        return OPERATIONS[self.op].kind


def points_for(ops: list[OpVariant], sizes: list[int] | None, p: int) -> list[Point]:
    """The points one job at p measures, sizes rounded per operation and deduplicated.

    Point-to-point and LogGP operations involve ranks 0 and 1 only, so they are
    measured at p = 2 only.
    """
    planned: list[Point] = []
    for opv in ops:
        op = opv.operation
        if op.kind != "collective" and p != 2:
            continue
        if sizes is not None:
            requested = sizes
        else:
            requested = list(op.sizes) if op.sizes else default_sizes(op.default_max_bytes)
        if op.unit == "none":
            requested = [0]
        seen: set[int] = set()
        for n in requested:
            if sizes is None and op.sizes is None and n > op.default_max_bytes:
                continue
            effective = op.effective_size(n, p)
            if op.max_bytes is not None and effective > op.max_bytes:
                continue
            if effective not in seen:
                seen.add(effective)
                planned.append(Point(opv.op, opv.variant, effective))
    return planned


def default_sizes(max_bytes: int) -> list[int]:
    return [0] + [1 << k for k in range(max_bytes.bit_length()) if (1 << k) <= max_bytes]


# The size rules `--sizes` names instead of a list (docs/method.md "Which sizes"):
# adaptive (the default) starts from a coarse grid and adds sizes where the model
# being fitted needs them (measure/adaptive.py); grid is 0 and every power of two;
# dense adds the midpoints 3 * 2^(k-1) between them (the reference a fast run is
# compared with, bench/adaptive_accuracy.py).
ADAPTIVE, GRID, DENSE = "adaptive", "grid", "dense"
SIZE_RULES = (ADAPTIVE, GRID, DENSE)
# The coarse grid: 0, every COARSE_STEP-th power of two from 1 B, and the largest size.
COARSE_STEP = 4


def size_rule(text: str | None) -> str | None:
    """The rule `--sizes` names (None means grid), or None for an explicit list."""
    if text is None:
        return GRID
    word = text.strip().lower()
    return word if word in SIZE_RULES else None


def rule_sizes(max_bytes: int, rule: str) -> list[int]:
    """An operation's sizes up to `max_bytes` under a rule (adaptive: its coarse grid)."""
    powers = [1 << k for k in range(max_bytes.bit_length()) if (1 << k) <= max_bytes]
    if rule == GRID:
        return [0] + powers
    if rule == DENSE:
        return sorted({0, *powers, *(3 * (n // 2) for n in powers if n >= 2 and 3 * (n // 2) <= max_bytes)})
    coarse = {0, *powers[::COARSE_STEP], powers[-1]} if powers else {0}
    return sorted(coarse)


def points_by_rule(ops: list[OpVariant], rule: str, p: int) -> list[Point]:
    """The points a rule plans at p: an operation with sizes of its own (mbw, touch,
    coldstart) or none (barrier) keeps them under every rule, but for those the adaptive
    rule starts from a part of (touch: its largest sizes only while the model asks for them)."""
    planned: list[Point] = []
    for opv in ops:
        op = opv.operation
        if op.sizes is not None or op.unit == "none":
            first = list(op.adaptive_sizes) if rule == ADAPTIVE and op.adaptive_sizes else None
            planned += points_for([opv], first, p)
        else:
            planned += points_for([opv], rule_sizes(op.default_max_bytes, rule), p)
    return planned


def plan_argument(points: list[Point], kernel_names: dict[str, str] | None = None) -> str:
    """The kernel's --plan: `op[:variant][@R][/M]=n1,n2;...`, grouped in measuring order (@R:
    the points' own precision target, /M their own fewest samples). `kernel_names` maps a
    stored name to the kernel's where they differ (PVM's)."""
    names = kernel_names or {}
    groups: dict[str, list[int]] = {}
    for point in points:
        op = names.get(point.op, point.op)
        key = f"{op}:{point.variant}" if point.variant else op
        if point.precision is not None:
            key += f"@{point.precision:.6g}"
        if point.min_reps is not None:
            key += f"/{point.min_reps}"
        groups.setdefault(key, []).append(point.n_bytes)
    return ";".join(f"{key}={','.join(map(str, ns))}" for key, ns in groups.items())
