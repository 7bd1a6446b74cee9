"""What a message costs when its sender has just written it, from the kernel's `written`
points (cc_ops_p2p.c): per size, `written:ends` (each rank stores into the first and last 8
bytes of its send buffer before each round trip) and `written:whole` (into every 64-byte
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
own buffers itself (eager) pays almost nothing, and the fit keeps only the sizes from the
model's rendezvous threshold S up, where the receiver (or a single copy) reads the sender's
buffer: below S the probe's difference is its own stores' cost, which a program's trace
already shows as computation (MPICH's ping-pong and master-worker of 256 B, 0.04 to 0.05 us
over clean, came out 5 to 7 points over in validations that charged it).
`ends` is a message of which little changed, `whole` one written throughout, and
`exchange_ends` (`written:exchange_ends` less `written:exchange_clean`, a loop of 16
exchanges a sample whose ranks write their ends before each, or the same stores elsewhere)
what an exchange pays for its ends written: the replay charges a message received in an
exchange that where it is less than `ends` (docs/models.md). The tracer records which
messages their sender wrote (docs/trace-format.md), and the replay charges the receiver of
each (docs/simulator.md).
"""

from __future__ import annotations

from typing import Any

from commchar.models.excess import excess_section
from commchar.vocabulary import WRITTEN_EXCESSES

OP = "written"


def written_send_section(points: list[dict], skipped: list[str], library: str,
                         rendezvous_min: float | None = None) -> dict[str, Any] | None:
    """The loggp section's `written_send` entry, {variant: its excess over its clean one} for
    each written variant that could be fitted (WRITTEN_EXCESSES: ends and whole over clean,
    exchange_ends over exchange_clean) from the sizes of rendezvous_min (the model's S) and
    up, every size where the model has no S; or None when none could (and why in skipped)."""
    if rendezvous_min is not None:
        eager = sorted({pt["n_bytes"] for pt in points if pt.get("n_bytes", 0) < rendezvous_min})
        points = [pt for pt in points if pt.get("n_bytes", 0) >= rendezvous_min]
        if eager:
            skipped.append(f"{library} {OP}: sizes below S = {rendezvous_min:g} B left out "
                           f"(eager: the sender copies its own lines): {', '.join(map(str, eager))}")
    entry = {variant: section for variant, clean in WRITTEN_EXCESSES
             if (section := excess_section(points, OP, variant, clean, skipped, library, "median"))
             is not None}
    return entry or None
