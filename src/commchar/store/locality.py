"""The name a library's measurements go by once on-node and off-node are told apart.

A run on several hosts stores each point with its locality (on-node: the ranks
involved shared a host; off-node: they did not). Fits, the model file and the
report keep the two apart by naming them as two libraries side by side,
"mpich on-node" and "mpich off-node"; a run on one host keeps the bare name.
"""

from __future__ import annotations

LOCALITIES = ("on-node", "off-node")


def library_label(library: str, locality: str | None) -> str:
    return f"{library} {locality}" if locality else library


def split_label(label: str) -> tuple[str, str | None]:
    """("mpich", "off-node") from "mpich off-node"; ("mpich", None) from "mpich"."""
    library, _, locality = label.rpartition(" ")
    if library and locality in LOCALITIES:
        return library, locality
    return label, None
