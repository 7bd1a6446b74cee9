"""What a message costs when its destination lies elsewhere in its page than its source,
from the kernel's `skew` points (cc_ops_p2p.c): per size, `skew:ahead` (receive buffers 16
bytes further into their page than the send buffers) less `skew:aligned` (at the same
place), their means, fitted by models/excess.py.

A copy's speed may depend on where its destination lies relative to its source: on an AMD
EPYC a destination 1 to 31 bytes ahead of its source modulo 4096 costs 1.3 to 7 times as
much from 32 KiB by the host's state (its loads alias its own recent stores,
docs/models.md), where both libraries copy a message once, straight from the sender's buffer
into the receiver's (docs/validation.md, "Where a buffer lies in its page"). The probe
measures one such distance; `slow_ahead` is the class the replay charges at its excess, the
distances `bench/buffer_offset.py --move recv` found slow on that processor (1 to 31 bytes
ahead; 32 and more ahead, behind and aligned as fast as each other). The tracer records
where each message buffer lay in its page, so the replay charges each receive whose distance
from the send it matched falls in the class (sim/src/placement.rs). A message to oneself is
copied by the library within one process, by another copy than its messages between two:
`skew:self_ahead` less `skew:self_aligned` (each rank MPI_Sendrecv to itself), kept as
`self`, is what the replay charges such a message in the class (Open MPI's copy to itself of
32 KiB paid nothing for it where its messages between ranks paid 1.4 us, docs/models.md).
"""

from __future__ import annotations

from typing import Any

from commchar.models.excess import excess_section
from commchar.vocabulary import SKEW_VARIANTS

OP = "skew"
# the probe's places (vocabulary.SKEW_VARIANTS): aligned and ahead, the same to oneself
FAST, SLOW, SELF_FAST, SELF_SLOW = SKEW_VARIANTS
SKEW_BYTES = 16  # how much further into its page the receive buffer starts (cc_ops_p2p.c)
# the distances (destination ahead of source, modulo a page) charged at the probe's excess
SLOW_AHEAD = (1, 31)


def misaligned_copy_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `misaligned_copy` entry, or None (and why in skipped); its `self`,
    the same of a message to oneself, where `skew:self_ahead` and `skew:self_aligned` were
    measured."""
    section = excess_section(points, OP, SLOW, FAST, skipped, library)
    if section is None:
        return None
    section |= {"skew_bytes": SKEW_BYTES, "slow_ahead": list(SLOW_AHEAD)}
    if any(pt.get("op") == OP and pt.get("variant") in (SELF_SLOW, SELF_FAST) for pt in points):
        own = excess_section(points, OP, SELF_SLOW, SELF_FAST, skipped, library)
        if own is not None:
            section["self"] = own
    return section
