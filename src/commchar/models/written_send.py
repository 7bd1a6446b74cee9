"""What a message costs when its sender has just written it, from the kernel's `written`
points (cc_ops_p2p.c): per size, `written:ends` (each rank stores into the first and last
8 bytes of its send buffer before each round trip) and `written:whole` (into every 64-byte
line of it) less `written:clean` (nothing stored), their medians, each fitted by
models/excess.py. A sample is one round trip (a batch would send the lines clean after its
first), so a detour of the host lands whole in one sample and moves a point's mean by more
than the excess: the medians' difference is the message's own, and the detours are the
model's noise section's.

A store leaves its cache line modified in the writer's core. The ping-pong every benchmark
times sends the same clean buffer again and again, whose lines the receiver's core (or the
library's single copy) already shares; a program writes what it sends (a halo is packed, a
solver's rows change each sweep), and whoever reads the message must then pull each line it
wrote from the other core's cache. A library whose sender copies a small message into its
own buffers itself (eager) pays almost nothing; one whose receiver copies from the sender's
buffer pays per line written. `ends` is a message of which little changed, `whole` one
written throughout. The tracer records which messages their sender wrote
(docs/trace-format.md), and the replay charges the receiver of each (docs/simulator.md).
"""

from __future__ import annotations

from typing import Any

from commchar.models.excess import excess_section
from commchar.vocabulary import WRITTEN_EXCESSES

OP = "written"


def written_send_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `written_send` entry, {variant: its excess over its clean one} for
    each written variant that could be fitted (ends and whole over clean, exchange_ends and
    exchange_whole over exchange_clean), or None when none could (and why in skipped)."""
    entry = {variant: section for variant, clean in WRITTEN_EXCESSES
             if (section := excess_section(points, OP, variant, clean, skipped, library, "median"))
             is not None}
    return entry or None
