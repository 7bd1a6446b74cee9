"""Build the measurement kernel once per MPI library, again only when its sources change."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from commchar.errors import MeasurementError
from commchar.measure.libraries import Library

KERNEL_NAME = "commchar-kernel"


def source_dir() -> Path:
    """The kernel sources: $COMMCHAR_KERNEL_SRC, else `kernels/` of the source tree."""
    configured = os.environ.get("COMMCHAR_KERNEL_SRC")
    path = Path(configured) if configured else Path(__file__).resolve().parents[3] / "kernels"
    if not (path / "Makefile").is_file():
        raise MeasurementError(f"kernel sources not found at {path} (set COMMCHAR_KERNEL_SRC)")
    return path


def build_root() -> Path:
    configured = os.environ.get("COMMCHAR_BUILD_DIR")
    return Path(configured) if configured else source_dir().parent / "build" / "kernels"


def _fingerprint(sources: Path, library: Library) -> str:
    digest = hashlib.sha256(library.mpicc.encode())
    # the kernel links the active-message layer's sources (kernels/Makefile)
    for root in (sources, sources.parent / "am"):
        for path in sorted(root.rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(sources.parent).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def kernel_path(library: Library) -> Path:
    return build_root() / library.name / KERNEL_NAME


def ensure_kernel(library: Library) -> Path:
    """Return the kernel binary for this library, building it if missing or stale."""
    sources = source_dir()
    target = kernel_path(library)
    stamp = target.with_suffix(".fingerprint")
    fingerprint = _fingerprint(sources, library)
    if target.is_file() and stamp.is_file() and stamp.read_text() == fingerprint:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    argv = ["make", "-s", "-B", "-C", str(sources), f"MPICC={library.mpicc}",
            f"BUILD={target.parent}"]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MeasurementError(f"building the kernel for {library.name} failed: {exc}") from None
    if result.returncode != 0 or not target.is_file():
        last = (result.stderr.strip() or result.stdout.strip() or "no output").splitlines()[-1]
        raise MeasurementError(f"building the kernel for {library.name} failed: {last}")
    stamp.write_text(fingerprint)
    return target
