"""What a message to oneself costs, from the kernel's `exchange:self` points
(cc_ops_exchange.c): each rank MPI_Sendrecv's n bytes to itself, the library's
self path (Open MPI's `self` BTL, MPICH's self send), as a halo's neighbour that
is the rank itself. Per measured size the mean time of one call (a program pays
the mean of its calls) is kept as `steps` ([n, us], n increasing); the simulator
interpolates linearly between them (beyond the largest size, along the last
segment) and charges half to the send and half to the receive.

Without it a self message pays the smallest messages' o_s and o_r and one copy at
O: about 0.34 us at 256 B with MPICH here, where the self path takes 0.05 us.
"""

from __future__ import annotations

from typing import Any

from commchar.models.call_means import call_means_section

OP, VARIANT = "exchange", "self"


def self_message_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `self_message` entry, or None (and why in skipped)."""
    return call_means_section(points, OP, VARIANT, skipped, library)
