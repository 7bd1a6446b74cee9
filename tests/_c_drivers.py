"""Small C programs the tests compile against one of commchar's own C files, as it is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def compiler(*names: str) -> str:
    """The first of `names` on PATH; the test fails (never skips) without one."""
    found = next((shutil.which(name) for name in names if shutil.which(name)), None)
    if found is None:
        pytest.fail(f"no {' or '.join(names)} on PATH: `make setup` installs a C compiler with MPI")
    return found


def build(work: Path, name: str, driver: str, include: Path, sources: list[Path], cc: str,
          libs: tuple[str, ...] = ()) -> Path:
    """`driver` (C source) compiled with `sources` (and linked with `libs`), warnings as errors,
    into work/name."""
    source = work / f"{name}.c"
    source.write_text(driver)
    binary = work / name
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{include}", "-o", str(binary),
                    str(source), *map(str, sources), *libs], check=True, capture_output=True, timeout=120)
    return binary
