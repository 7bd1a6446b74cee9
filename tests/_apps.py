"""Running a program built by `commchar build` (apps/) under a library's launcher, untraced."""

from __future__ import annotations

import os

from commchar.apps.sweep import run_once
from commchar.measure.launch import LaunchSpec, program_command


def run_app(library, p: int, argv: list[str], env: dict[str, str] | None = None) -> dict:
    """The program's result line, or CaseFailed."""
    job = program_command(library, LaunchSpec(), p, argv)
    return run_once(job.argv, {**os.environ, **job.env_added, **(env or {})}, timeout=120)
