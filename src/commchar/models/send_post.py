"""What posting a non-blocking send costs its caller, from the kernel's `post` points
(cc_ops_p2p.c: rank 0 times bursts of MPI_Isend to rank 1, each call returning with
its request still open, as a program's Isends before their Waitall).

A blocking send's o_s holds more than the post: MPI_Send returns once its request is
complete, so it also pays the progress that completes it. MPICH's ch4 MPI_Send of
256 B is o_s 0.44 us + 255 O by the LogGP probe, where its post takes 0.36 us (as a
traced halo exchange's MPI_Isend did); Open MPI's posts in about its o_s.

`commchar replay --posted-sends measured` charges an eager message to another rank
that a non-blocking call started its post, interpolated between the measured sizes
(models/call_means.py), in place of o_s + (s-1)O, where the post holds that copy and
costs less than the blocking send; the default keeps the blocking cost, as the calls
that complete the requests pay what the posts save (docs/models.md, "Posting a
non-blocking send").
"""

from __future__ import annotations

from typing import Any

from commchar.models.call_means import call_means_section

OP = "post"


def send_post_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `send_post` entry, or None (and why in skipped)."""
    return call_means_section(points, OP, "", skipped, library)
