"""Intel MPI Benchmarks (IMB-MPI1) text output as commchar points.

IMB prints a block per benchmark and process count (`# Benchmarking Bcast`,
`# #processes = 2`), a column header (`#bytes #repetitions t_min[usec]
t_max[usec] t_avg[usec]`) and a line per size. Each rank's time is its loop
average; IMB prints the minimum, maximum and average over ranks. The point's
time is t_max, the slowest rank's mean, nearest commchar's collective time
(the slowest rank per repetition); t_min and t_avg are kept. PingPong's
t[usec] is half a round trip, as commchar's ping-pong. Sizes become
commchar's n: IMB's Scatter, Gather and Allgather sizes are per rank.
A run with `-off_cache` (IMB says so only in its "Calling sequence") rotated
its buffers out of cache: its points are cache-cold, as commchar's
`--cache cold`, and keep IMB's option in `extra.tool_cache`.
"""

from __future__ import annotations

import re
from pathlib import Path

from commchar.errors import InputError
from commchar.interop.imported import ImportedPoint, ParsedFile
from commchar.interop.textfile import MAX_RANKS, count, number, read_lines

_VERSION = re.compile(r"Intel\s*\(R\)\s*MPI\s+Benchmarks?(?:\s+Suite)?\s+V?(?P<version>\d[\w.]*(?:\s+Update\s+\d+)?)")
_BENCHMARK = re.compile(r"^#\s*Benchmarking\s+(?P<name>\S+)")
_PROCESSES = re.compile(r"^#\s*#processes\s*=\s*(?P<p>\d+)")
_OFF_CACHE = re.compile(r"(?:^|\s)-off_cache\s+(?P<size>-?\d+(?:\.\d+)?(?:,\d+)?)(?:\s|$)")

# IMB benchmark -> (commchar op, variant, how n follows from IMB's #bytes)
_OPS: dict[str, tuple[str, str, str]] = {
    "PingPong": ("pingpong", "send", "same"),
    "Barrier": ("barrier", "", "zero"),
    "Bcast": ("bcast", "", "same"),
    "Scatter": ("scatter", "", "times_p"),
    "Gather": ("gather", "", "times_p"),
    "Allgather": ("allgather", "", "times_p"),
    "Alltoall": ("alltoall", "", "same"),
    "Reduce": ("reduce", "sum", "same"),
    "Allreduce": ("allreduce", "sum", "same"),
    "Reduce_scatter": ("reduce_scatter", "sum", "same"),
}
STATISTIC_P2P = "IMB mean over repetitions (not a median)"
STATISTIC_COLL = "IMB t_max: the slowest rank's mean over repetitions (not a median)"


def parse(path: str | Path) -> ParsedFile:
    lines = read_lines(path)
    points: list[ImportedPoint] = []
    skipped: list[str] = []
    version = ""
    name = ""
    mapped: tuple[str, str, str] | None = None
    p: int | None = None
    columns: list[str] = []
    off_cache: str | None = None  # IMB's -off_cache argument (cache MiB[,line bytes])
    for line_no, line in enumerate(lines, start=1):
        where = f"{path}: line {line_no}"
        stripped = line.strip()
        if not stripped:
            continue
        if not version and (match := _VERSION.search(stripped)):
            version = match["version"]
        if not points and stripped.startswith("#") and (match := _OFF_CACHE.search(stripped)):
            off_cache = match["size"]
            continue
        if match := _BENCHMARK.match(stripped):
            name, p, columns = match["name"], None, []
            mapped = _OPS.get(name)
            if mapped is None and name not in skipped:
                skipped.append(name)
            continue
        if match := _PROCESSES.match(stripped):
            digits = match["p"].lstrip("0") or "0"
            p = int(digits) if len(digits) <= 10 else MAX_RANKS + 1  # no int of thousands of digits
            if not 1 <= p <= MAX_RANKS:
                raise InputError(f"{where}: #processes must be from 1 to {MAX_RANKS}, not {match['p'][:30]}")
            continue
        if stripped.startswith("#") and ("#repetitions" in stripped):
            columns = stripped.split()
            continue
        if stripped.startswith("#") or mapped is None or not columns:
            continue
        if not re.match(r"^\d", stripped):
            continue  # IMB's notes between blocks ("All processes entering MPI_Finalize")
        if p is None:
            raise InputError(f"{where}: IMB {name} values before its '#processes' line")
        points.append(_point(stripped, columns, mapped, name, p, where, line_no, off_cache))
    if not points and not skipped:
        raise InputError(f"{path}: no IMB benchmark output found (no '# Benchmarking' block)")
    return ParsedFile("imb", version, points, skipped)


def _point(line: str, columns: list[str], mapped: tuple[str, str, str], name: str, p: int,
           where: str, line_no: int, off_cache: str | None) -> ImportedPoint:
    op, variant, size_rule = mapped
    values = line.split()
    if len(values) < len(columns):
        raise InputError(f"{where}: {len(values)} values under {len(columns)} columns in IMB {name}")
    row = dict(zip(columns, values))
    size = count(row["#bytes"], "#bytes", where) if "#bytes" in row else 0
    reps = count(row["#repetitions"], "#repetitions", where)
    n_bytes = {"same": size, "zero": 0, "times_p": size * p}[size_rule]
    extra: dict = {"tool_size_bytes": size}
    if off_cache is not None:
        extra["tool_cache"] = f"-off_cache {off_cache}"
    if "t_max[usec]" in row:
        t_us = number(row["t_max[usec]"], "t_max", where)
        extra["rank_min_us"] = number(row["t_min[usec]"], "t_min", where) if "t_min[usec]" in row else None
        extra["rank_avg_us"] = number(row["t_avg[usec]"], "t_avg", where) if "t_avg[usec]" in row else None
        statistic = STATISTIC_COLL
    elif "t[usec]" in row:
        t_us = number(row["t[usec]"], "t[usec]", where)
        statistic = STATISTIC_P2P
    else:
        raise InputError(f"{where}: IMB {name}: no t[usec] or t_max[usec] column in the header")
    if t_us <= 0:  # a rounded 0.00: kept, left out of fits
        extra["invalid"] = "the tool printed no positive time"
    return ImportedPoint(op, variant, p, n_bytes, t_us, f"IMB {name}", statistic, line_no, reps, extra,
                         cache="warm" if off_cache is None else "cold")
