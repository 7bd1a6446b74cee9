"""The name a library's measurements go by once on-node and off-node, and warm and
cold buffers, are told apart.

A run on several hosts stores each point with its locality (on-node: the ranks
involved shared a host; off-node: they did not). A run with `--cache cold`
stores each point as cache-cold (every repetition's buffers out of the
last-level cache). Fits, the model file and the report keep them apart by
naming them as libraries side by side, "mpich on-node", "mpich off-node",
"mpich cache-cold", "mpich off-node cache-cold"; warm points on one host keep
the bare name, so a cold fit never mixes with a warm one.
"""

from __future__ import annotations

LOCALITIES = ("on-node", "off-node")
CACHE_MODES = ("warm", "cold")
COLD_LABEL = "cache-cold"


def library_label(library: str, locality: str | None, cache: str | None = None) -> str:
    label = f"{library} {locality}" if locality else library
    return f"{label} {COLD_LABEL}" if cache == "cold" else label


def split_label(label: str) -> tuple[str, str | None]:
    """("mpich", "off-node") from "mpich off-node" or "mpich off-node cache-cold";
    ("mpich", None) from "mpich"."""
    label = label.removesuffix(f" {COLD_LABEL}")
    library, _, locality = label.rpartition(" ")
    if library and locality in LOCALITIES:
        return library, locality
    return label, None

