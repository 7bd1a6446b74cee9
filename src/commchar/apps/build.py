"""Build the applications (apps/) once per MPI library, again only when their
sources or the kernel sources they share change."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from commchar.errors import MeasurementError
from commchar.measure.build import _fingerprint, build_root, source_dir
from commchar.measure.libraries import Library

APPS = ("jacobi", "gauss")


def apps_source_dir() -> Path:
    """$COMMCHAR_APPS_SRC, else `apps/` beside the kernel sources."""
    configured = os.environ.get("COMMCHAR_APPS_SRC")
    path = Path(configured) if configured else source_dir().parent / "apps"
    if not (path / "Makefile").is_file():
        raise MeasurementError(f"application sources not found at {path} (set COMMCHAR_APPS_SRC)")
    return path


def ensure_apps(library: Library) -> dict[str, Path]:
    """The application binaries for this library by name, built if missing or stale."""
    sources = apps_source_dir()
    target_dir = build_root().parent / "apps" / library.name
    targets = {name: target_dir / name for name in APPS}
    stamp = target_dir / "apps.fingerprint"
    # the applications link the kernel's error, JSON and timer code
    fingerprint = _fingerprint(sources, library) + _fingerprint(source_dir(), library)
    if all(t.is_file() for t in targets.values()) and stamp.is_file() \
            and stamp.read_text() == fingerprint:
        return targets
    target_dir.mkdir(parents=True, exist_ok=True)
    argv = ["make", "-s", "-C", str(sources), f"MPICC={library.mpicc}", f"BUILD={target_dir}"]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MeasurementError(f"building the applications for {library.name} failed: {exc}") from None
    if result.returncode != 0 or not all(t.is_file() for t in targets.values()):
        last = (result.stderr.strip() or result.stdout.strip() or "no output").splitlines()[-1]
        raise MeasurementError(f"building the applications for {library.name} failed: {last}")
    stamp.write_text(fingerprint)
    return targets
