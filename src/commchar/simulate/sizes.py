"""Byte counts as people write them: 1024, 64K, 1M, 1MiB, 2G."""

from __future__ import annotations

import re

from commchar.errors import UsageError

_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)(i?[bB])?\s*$")
_SCALE = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str) -> int:
    """Bytes in `text`; K, M, G (with or without iB/B) are binary multiples."""
    match = _SIZE.match(text)
    if not match:
        raise UsageError(f"size '{text}' is not a byte count (e.g. 1024, 64K, 1MiB)")
    return int(match.group(1)) * _SCALE[match.group(2).lower()]
