"""Reading and writing JSON that came from, or goes to, outside commchar.

Reading is bounded by the text, never by the numbers in it: an integer of
thousands of digits becomes a float (infinite when too large, which every
validator refuses as not finite) instead of an error from Python's digit
limit, and nesting deeper than MAX_DEPTH is refused before anything walks the
value recursively. Writing never produces `NaN` or `Infinity`, which are not
JSON: a non-finite number is written as null.
"""

from __future__ import annotations

import json
import math
from typing import Any

from commchar.errors import CommcharError, InputError

# Deeper than any file commchar writes or documents (a model file is about 6 levels).
MAX_DEPTH = 64
# Longer integers are read as floats: 2^63 has 19 digits.
MAX_INT_DIGITS = 19


def _integer(text: str) -> int | float:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else float(text)


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def loads(text: str, what: str, error: type[CommcharError] = InputError) -> Any:
    """The value of JSON `text`; `error` naming `what` when it is not valid, bounded JSON."""
    try:
        value = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise error(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise error(f"{what}: JSON nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # a number Python cannot hold
        raise error(f"{what} is not valid JSON ({str(exc)[:80]})") from None
    if _depth_exceeds(value, MAX_DEPTH):
        raise error(f"{what}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
    return value


def finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (for JSON output)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """Strict JSON text of `value`: non-finite numbers become null."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
