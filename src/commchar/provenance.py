"""Which code measured: the project's commit and the kernel binary's hash, recorded
with every run and every job (ReproMPI's provenance lines), so a stored result can
be traced to the exact source and kernel that produced it."""

from __future__ import annotations

import hashlib
import subprocess
from functools import lru_cache
from pathlib import Path

from commchar import __version__

_REPO = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def source_commit() -> str | None:
    """The git commit of the commchar source tree, `+dirty` when it has uncommitted
    changes; None for an installed copy without its repository (or without git)."""
    if not (_REPO / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(_REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def build_identity() -> str:
    """The version with the commit as a PEP 440 local label: `0.1.0+g1a2b3c4d5e6f` (`.dirty`
    appended for a modified tree); the plain version when the commit is unknown."""
    commit = source_commit()
    if commit is None:
        return __version__
    sha, _, dirty = commit.partition("+")
    return f"{__version__}+g{sha[:12]}" + (".dirty" if dirty else "")


@lru_cache(maxsize=16)
def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file (the kernel binary a job ran)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
