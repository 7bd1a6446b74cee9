"""Parse the --n and --p values of `commchar predict` and `commchar advise`.

Grammar (docs/predict.md):

- a value: a number as commchar.vocabulary spells sizes (1024, 1.5K, 4Mi, 1MiB;
  every suffix binary, the convention of `commchar run --sizes 0:4M`);
- a list: values separated by commas (`2,4,8,12`);
- a range `a:b`: for --n, a then every power of two above a and below b, then
  b (`1K:1M` = 1024, 2048, ..., 1048576; `0:8` = 0, 1, 2, 4, 8); for --p every
  integer from a to b. `a:b:s` steps by s instead, `a:b:*f` multiplies by f;
- for --n only, an expression in p (`8*p`: one 8-byte value per process).
"""

from __future__ import annotations

import math
import re

from commchar.errors import ModelError, UsageError
from commchar import ranges
from commchar.modelfile import Expr, parse_expr
from commchar.vocabulary import is_number, parse_number as parse_value

MAX_VALUES = ranges.MAX_VALUES

_RANGE_STEP = re.compile(r"^(\*)?(.+)$")


def split_top_level(text: str, separator: str) -> list[str]:
    """Split on `separator` outside parentheses, so `min(p, 8)` and
    `gather(8*p)+bcast(8*p)` split where a person would."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise UsageError(f"unbalanced ')' at column {i + 1} in {text!r}")
        elif ch == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise UsageError(f"unbalanced '(' in {text!r}")
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _range(text: str, flag: str, doubling: bool) -> list[float]:
    fields = text.split(":")
    if len(fields) not in (2, 3):
        raise UsageError(f"{flag}: range {text!r} must be a:b or a:b:step")
    low, high = parse_value(fields[0], flag), parse_value(fields[1], flag)
    if high < low:
        raise UsageError(f"{flag}: range {text!r} ends below its start")
    what = f"{flag}: range {text!r}"
    if len(fields) == 3:
        step_match = _RANGE_STEP.match(fields[2].strip())
        multiply = bool(step_match and step_match.group(1))
        step = parse_value(step_match.group(2) if step_match else fields[2], flag)
        if (multiply and step <= 1) or (not multiply and step <= 0):
            raise UsageError(f"{flag}: step of {text!r} must be > 0 (or *f with f > 1)")
        if multiply:
            return ([0.0] if low == 0 else []) + list(ranges.geometric(max(low, 1.0), high, step, what))
        count = ranges.arithmetic_count(low, high, step)
        ranges.check_count(count, what)
        return [low + k * step for k in range(count)]
    if doubling:
        # the powers of two strictly between low and high: at most about a thousand for any double
        first = 2.0 ** (math.floor(math.log2(low)) + 1) if low >= 1 else 1.0
        values = [low] + [v for v in ranges.geometric(first, high, 2.0, what) if v < high]
    else:
        first, last = int(math.floor(low)) + 1, int(math.floor(high))
        ranges.check_count(last - first + 2, what)
        values = [low] + [float(v) for v in range(first, last + 1)]
    if values[-1] != high:
        values.append(high)
    return values


def parse_n_values(text: str) -> list[float | Expr]:
    """--n: numbers (bytes) or expressions in p, in the order given, duplicates dropped."""
    flag = "--n"
    items: list[float | Expr] = []
    for part in split_top_level(text, ","):
        if not part:
            raise UsageError(f"{flag}: empty item in {text!r}")
        if is_number(part):
            items.append(parse_value(part, flag))
        elif ":" in part:
            items.extend(_range(part, flag, doubling=True))
        elif "p" in part or any(ch in "+-*/^()" for ch in part):
            try:
                items.append(parse_expr(part))
            except ModelError as exc:
                raise UsageError(f"{flag}: {exc}") from None
        else:
            items.append(parse_value(part, flag))
    if len(items) > MAX_VALUES:
        raise UsageError(f"{flag}: more than {MAX_VALUES} values")
    unique: list[float | Expr] = []
    for item in items:
        if item not in unique:
            unique.append(item)
    return unique


def parse_p_values(text: str) -> list[int]:
    """--p: process counts (integers >= 1), sorted, duplicates dropped."""
    flag = "--p"
    values: list[float] = []
    for part in split_top_level(text, ","):
        if not part:
            raise UsageError(f"{flag}: empty item in {text!r}")
        values.extend(_range(part, flag, doubling=False) if ":" in part else [parse_value(part, flag)])
    result = set()
    for value in values:
        if value < 1 or not float(value).is_integer():
            raise UsageError(f"{flag}: a process count must be an integer >= 1, found {value:g}")
        result.add(int(value))
    if len(result) > MAX_VALUES:
        raise UsageError(f"{flag}: more than {MAX_VALUES} values")
    return sorted(result)


def n_at(item: float | Expr, p: int) -> float:
    """The message length an --n item gives at p (an expression is evaluated at p)."""
    if isinstance(item, Expr):
        try:
            value = item.evaluate(p)
        except ModelError as exc:
            raise UsageError(f"--n: {exc}") from None
        if value < 0:
            raise UsageError(f"--n: '{item}' gives a negative length {value:g} at p={p}")
        return value
    return float(item)
