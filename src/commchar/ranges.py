"""Bounded ranges: the one place a range a user typed becomes a list of values.

A range is counted before anything is built, and refused when it holds more
values than the limit the caller derives from what the user asked for; so
`--p 2:1000000000000` is one line of error, never gigabytes of list. Where a
whole interval must be examined (the peak of a law in p, the p at which a
model file is checked), `sample` picks a bounded set of points of it
instead of every integer.
"""

from __future__ import annotations

import math
from typing import Iterator

from commchar.errors import UsageError

# The most values one range or list may produce: a table of 10000 rows is
# already more than anyone reads, and building it stays cheap.
MAX_VALUES = 10000


def arithmetic_count(low: float, high: float, step: float) -> int:
    """How many values low, low + step, ... <= high there are (step > 0)."""
    if high < low:
        return 0
    if all(isinstance(v, int) for v in (low, high, step)):
        return int((high - low) // step) + 1
    return int(math.floor((high - low) / step * (1 + 1e-12))) + 1


def geometric_count(low: float, high: float, factor: float) -> int:
    """How many values low, low * factor, ... <= high there are (low > 0, factor > 1)."""
    if high < low:
        return 0
    return int(math.floor(math.log(high / low) / math.log(factor) * (1 + 1e-12))) + 1


def check_count(count: int, what: str, limit: int = MAX_VALUES) -> None:
    """UsageError naming `what` when `count` values exceed `limit`."""
    if count > limit:
        raise UsageError(f"{what} has {_count(count)} values (more than {limit} values are refused)")


def arithmetic(low: int, high: int, step: int, what: str, limit: int = MAX_VALUES) -> Iterator[int]:
    """low, low + step, ..., <= high, counted against `limit` before the first value."""
    if step <= 0:
        raise UsageError(f"{what}: the step must be positive")
    check_count(arithmetic_count(low, high, step), what, limit)
    return iter(range(low, high + 1, step))


def geometric(low: float, high: float, factor: float, what: str,
              limit: int = MAX_VALUES) -> Iterator[float]:
    """low, low * factor, ..., <= high (with a relative tolerance), counted first."""
    if low <= 0 or factor <= 1:
        raise UsageError(f"{what}: needs a start > 0 and a factor > 1")
    check_count(geometric_count(low, high, factor), what, limit)
    value = low
    while value <= high * (1 + 1e-12):
        yield value
        value *= factor


def sample(low: float, high: float, every_up_to: int = 512, extra: tuple[float, ...] = ()) -> list[int]:
    """Integers of [low, high] to evaluate a function of p at: every one when the
    interval holds at most `every_up_to`, else both ends, the powers of two
    between and `extra` (values that must be included, such as measured p)."""
    lo, hi = int(math.ceil(low)), int(math.floor(high))
    if hi < lo:
        return []
    if hi - lo < every_up_to:
        return list(range(lo, hi + 1))
    powers = (1 << k for k in range(min(hi.bit_length(), 1100) + 1))
    chosen = {lo, hi, *(q for q in powers if lo <= q <= hi),
              *(int(q) for q in extra if lo <= q <= hi and float(q).is_integer())}
    return sorted(chosen)


def _count(count: int) -> str:
    return f"{count:,}" if count < 10**15 else f"about 1e{int(math.log10(count))}"
