"""What MPI_Sendrecv_replace costs beyond MPI_Sendrecv, from the kernel's `exchange`
points (cc_ops_exchange.c): per size, `exchange:replace` less `exchange:sendrecv`
(their means: a program pays the mean of its calls), fitted by models/excess.py.

Both libraries copy the message once more through a temporary buffer (MPICH
packs it before it sends, Open MPI unpacks it after it receives), and that copy
runs at the speed of memory another core has just read or written, not at the
speed of a copy between cached buffers: on this machine's 2 cores 32 KiB cost
about 6 us more than the plain exchange, 5 us per 32 KiB at 256 KiB, where a
copy between warm buffers takes about 1. So the replay charges what was
measured (`loggp.replace_copy`), and the model's O only without it.
"""

from __future__ import annotations

from typing import Any

from commchar.models.excess import excess_section

OP = "exchange"
SLOW, FAST = "replace", "sendrecv"


def replace_copy_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `replace_copy` entry, or None (and why in skipped)."""
    return excess_section(points, OP, SLOW, FAST, skipped, library)
