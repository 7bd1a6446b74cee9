"""Shared by the corpus tests (tests/test_corpus_*.py): Debian's MPI applications,
traced at p = 2 through `commchar trace`, replayed without flags and predicted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# a LogGP model of both libraries (the replay's prediction needs one; its figures are not
# this machine's: the tests check that the program is followed, not how well it is predicted)
LOGGP = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001, "S": 65536}


def require(path: str) -> Path:
    """An installed program of the corpus; `make setup` installs them (scripts/ensure-deps.sh corpus)."""
    found = shutil.which(path) if "/" not in path else (path if Path(path).exists() else None)
    if not found:
        pytest.fail(f"{path} is not installed: `make setup` installs the corpus (scripts/ensure-deps.sh corpus)")
    return Path(found)


def write_model(path: Path, loggp: dict | None = None, operations: dict | None = None,
                libraries: tuple[str, ...] = ("openmpi", "mpich")) -> Path:
    """A model file of `libraries`, each with the LogGP parameters and collective operations given
    (default: LOGGP, none)."""
    entry = {"operations": operations or {}, "loggp": loggp or LOGGP}
    path.write_text(json.dumps({"format": "commchar-model", "version": 1,
                                "libraries": {lib: entry for lib in libraries}}))
    return path


def commchar(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def trace(db: Path, library: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`commchar trace` of the program at p = 2; the run must succeed."""
    result = commchar("trace", "--db", str(db), "--library", library, "--np", "2", "--timeout", "240",
                      "--", *argv, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result


def replay(db: Path, model: Path, library: str) -> dict:
    """`commchar replay --json` of the stored trace, without --other-as-compute."""
    result = commchar("replay", "--db", str(db), "--trace", "1", "--model", str(model),
                      "--library", library, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def check_predicted(doc: dict) -> None:
    """Every rank predicted, its parts adding up to it, nothing left as OTHER."""
    assert doc["trace"]["p"] == 2
    for key in ("loggps", "loggp"):
        prediction = doc["predictions"][key]
        assert prediction["makespan"] > 0
        for rank in prediction["ranks"]:
            assert rank["compute"] + rank["communication"] + rank["sync_wait"] == pytest.approx(
                rank["predicted"])
