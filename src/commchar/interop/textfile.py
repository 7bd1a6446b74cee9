"""Reading a peer tool's text output: one InputError naming the file for anything unreadable."""

from __future__ import annotations

from pathlib import Path

from commchar.errors import InputError

# A peer's output for every size of every benchmark is a few hundred kB; a file far
# larger is not one (a binary, a log of something else) and is refused before it is read.
MAX_BYTES = 64 * 1024 * 1024
# The largest count (a size, iterations) read exactly, and the most ranks (an MPI rank is an int).
MAX_COUNT = 1 << 53
MAX_RANKS = 2**31 - 1


def read_lines(path: str | Path) -> list[str]:
    path = Path(path)
    try:
        if not path.is_file():
            raise InputError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"{path}: larger than {MAX_BYTES >> 20} MiB, not a benchmark's text output")
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"\x00" in data:
        raise InputError(f"{path}: a binary file, not a benchmark's text output")
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return data.decode("latin-1").splitlines()


def number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {what} {text[:30]!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        raise InputError(f"{where}: {what} {text[:30]!r} is not a finite non-negative number")
    return value


def count(text: str, what: str, where: str) -> int:
    value = number(text, what, where)
    if value != int(value):
        raise InputError(f"{where}: {what} {text[:30]!r} is not a whole number")
    if value > MAX_COUNT:
        raise InputError(f"{where}: {what} {text[:30]!r} is larger than {MAX_COUNT} (2^53)")
    return int(value)


def check_point(where: str, p: int, n_bytes: int, t_us: float) -> None:
    """Refuse a point a store cannot hold exactly: more than MAX_RANKS ranks, a size (after
    the tool's per-rank size is multiplied by p) over MAX_COUNT bytes, a time not finite."""
    if not 1 <= p <= MAX_RANKS:
        raise InputError(f"{where}: {p} ranks, more than {MAX_RANKS}")
    if not 0 <= n_bytes <= MAX_COUNT:
        raise InputError(f"{where}: {n_bytes} bytes (the tool's size times p), more than {MAX_COUNT} (2^53)")
    if not (t_us >= 0 and t_us != float("inf")):
        raise InputError(f"{where}: the time {t_us!r} us is not a finite number >= 0")
