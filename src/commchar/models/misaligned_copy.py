"""What a message costs when its destination lies elsewhere in its page than its source,
from the kernel's `skew` points (cc_ops_p2p.c): per size, `skew:ahead` (receive buffers 16
bytes further into their page than the send buffers) less `skew:aligned` (at the same
place), their means, fitted by models/excess.py.

A copy's speed may depend on where its destination lies relative to its source: on an AMD EPYC
a destination 1 to 31 bytes ahead of its source modulo 4096 costs 1.3 to 7 times as much from
32 KiB by the host's state (its loads alias its own recent stores, docs/models.md), where both
libraries copy a message once, straight from the sender's buffer into the receiver's
(docs/validation.md, "Where a buffer lies in its page"). The probe measures one such distance;
`slow_ahead` (with `line_bytes`) is the class the replay charges at its excess. Which distances
copy slowly is the processor's: `bench/buffer_offset.py --move recv` found 1 to 31 bytes ahead
slow on the AMD EPYC, 32 and more ahead, behind and aligned as fast as each other; on an Intel
Xeon guest (bench/place_pingpong.c), the ranks' copies of 32 KiB paid 4 to 16% at 16, 48, 80,
96 and 144 bytes ahead, 2 to 6% at 1040, -1.5 to +2.2% at 64, 1024 and 2048 ahead (whole lines)
and 1 to 8% behind (docs/models.md). The probe's `ahead80` variant, 80 bytes ahead (16 ahead's
place in the next line), tells them apart: where it pays at least half of what 16 ahead does
from 32 KiB, the class is every distance within 255 bytes ahead that is no whole number of
64-byte lines, else 1 to 31 bytes ahead. In a class by the line both places are in it, and each
size's step is the mean of their two excesses per byte. The tracer records where each message
buffer lay in its page, so the replay charges each receive whose distance from the send it
matched falls in the class (sim/src/placement.rs). A message to oneself is copied by the
library within one process, by another copy than its messages between two: `skew:self_ahead`
less `skew:self_aligned` (each rank MPI_Sendrecv to itself), kept as `self`, is what the replay
charges such a message in the class (Open MPI's copy to itself of 32 KiB paid nothing for it
where its messages between ranks paid 1.4 us, docs/models.md).
"""

from __future__ import annotations

from typing import Any

from commchar.models.excess import TIME_KEYS, excess_section, paired_times
from commchar.vocabulary import SKEW_VARIANTS

OP = "skew"
# the probe's places (vocabulary.SKEW_VARIANTS): aligned and 16 bytes ahead, the same to
# oneself, and 80 bytes ahead (the same place in the next 64-byte line)
FAST, SLOW, SELF_FAST, SELF_SLOW, NEXT_LINE = SKEW_VARIANTS
SKEW_BYTES = 16  # how much further into its page the receive buffer starts (cc_ops_p2p.c)
LINE_BYTES = 64
# the distances (destination ahead of source, modulo a page) charged at the probe's excess:
# where 80 ahead copies as fast as aligned, those within 31 bytes ahead (the AMD EPYC's map);
# where it pays as 16 ahead does, those within 255 bytes ahead that are no whole number of
# lines (an Intel Xeon's, `bench/buffer_offset.py --move recv`)
SLOW_AHEAD = (1, 31)
SLOW_AHEAD_BY_LINE = (1, 255)
# the share of 16 ahead's excess 80 ahead must pay for the class by the line
LINE_SHARE = 0.5
# the sizes the class is told from: where the libraries copy a message once, from its sender's
# buffer into its receiver's
CLASS_FROM_BYTES = 32 * 1024


def misaligned_copy_section(points: list[dict], skipped: list[str], library: str) -> dict[str, Any] | None:
    """The loggp section's `misaligned_copy` entry, or None (and why in skipped); its `self`,
    the same of a message to oneself, where `skew:self_ahead` and `skew:self_aligned` were
    measured; its slow class chosen by `skew:ahead80` where that was measured (slow_class),
    and in a class by the line each step the mean of 16 and 80 ahead's (_both_places)."""
    section = excess_section(points, OP, SLOW, FAST, skipped, library)
    if section is None:
        return None
    key = TIME_KEYS[section["statistic"]]
    next_line = paired_times(points, OP, NEXT_LINE, FAST, key)
    section |= {"skew_bytes": SKEW_BYTES} | slow_class(paired_times(points, OP, SLOW, FAST, key), next_line)
    if section.get("line_bytes"):
        section["steps"] = _both_places(section["steps"], next_line)
    if any(pt.get("op") == OP and pt.get("variant") in (SELF_SLOW, SELF_FAST) for pt in points):
        own = excess_section(points, OP, SELF_SLOW, SELF_FAST, skipped, library)
        if own is not None:
            section["self"] = own
    return section


def slow_class(ahead: dict[int, dict[str, float]], line: dict[int, dict[str, float]]) -> dict[str, Any]:
    """{slow_ahead, line_bytes (the class by the line only), next_line (the evidence)} from the
    paired times (excess.paired_times) of 16 ahead and of 80 ahead with aligned: the class by
    the line where, over the sizes from CLASS_FROM_BYTES measured in all three places, 80
    ahead took at least LINE_SHARE of what 16 ahead took beyond aligned (each clamped at 0);
    else, or without `skew:ahead80`, the class within 31 bytes ahead."""
    sizes = sorted(n for n in ahead.keys() & line.keys()
                   if n >= CLASS_FROM_BYTES and len(ahead[n]) == 2 and len(line[n]) == 2)
    if not sizes:
        return {"slow_ahead": list(SLOW_AHEAD)}
    rows = [{"n": n, "ahead_excess_us": round(ahead[n][SLOW] - ahead[n][FAST], 3),
             "ahead80_excess_us": round(line[n][NEXT_LINE] - line[n][FAST], 3)} for n in sizes]
    paid = sum(max(r["ahead_excess_us"], 0.0) for r in rows)
    by_line = paid > 0 and sum(max(r["ahead80_excess_us"], 0.0) for r in rows) >= LINE_SHARE * paid
    evidence = {"next_line": rows}
    if by_line:
        return {"slow_ahead": list(SLOW_AHEAD_BY_LINE), "line_bytes": LINE_BYTES} | evidence
    return {"slow_ahead": list(SLOW_AHEAD)} | evidence


def _both_places(steps: list[list[float]], line: dict[int, dict[str, float]]) -> list[list[float]]:
    """The steps of a class by the line: at each size where 80 ahead was measured too (`line`,
    its paired times with aligned), the mean of what 16 and 80 ahead cost a byte beyond
    aligned (each at least 0): two places of the class, two draws of its cost."""
    out = []
    for n, per_byte in steps:
        pair = line.get(int(n), {})
        if len(pair) == 2:
            per_byte = float(f"{(per_byte + max(pair[NEXT_LINE] - pair[FAST], 0.0) / n) / 2:.6g}")
        out.append([n, per_byte])
    return out
