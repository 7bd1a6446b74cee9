"""What a message costs when it lands elsewhere in its cache line than it left, from the
kernel's `skew` points (cc_ops_p2p.c): per size, `skew:ahead` (receive buffers 16 bytes
further into their 64-byte line than the send buffers) less `skew:aligned` (at the
same place), their means, fitted by models/excess.py.

A copy's speed may depend on where its destination lies relative to its source: on
this machine (AMD EPYC) a destination 1 to 31 bytes ahead of its source modulo 64
costs 3 to 7 times as much from 32 KiB, where both libraries copy a message once,
straight from the sender's buffer into the receiver's (docs/validation.md, "Where a
buffer lies in its page"). The probe measures one such place; which others are slow
is the processor's (`bench/buffer_offset.py --move recv` maps them). The section says
what a program with its buffers so placed pays; the replay does not charge it, since a
trace records no buffer address.
"""

from __future__ import annotations

from typing import Any

from commchar.models.excess import mean_excess_section

OP = "skew"
SLOW, FAST = "ahead", "aligned"
SKEW_BYTES = 16  # how much further into its line the receive buffer starts (cc_ops_p2p.c)


def misaligned_copy_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `misaligned_copy` entry, or None (and why in skipped)."""
    section = mean_excess_section(points, OP, SLOW, FAST, skipped, library)
    return None if section is None else section | {"skew_bytes": SKEW_BYTES}
