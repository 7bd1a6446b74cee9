"""OSU Micro-Benchmarks text output (5.x to 7.x) as commchar points.

Each program prints a title (`# OSU MPI Latency Test v7.4`), a header of
columns, and one line per size. Columns read: the size, the mean latency or
bandwidth, with `-f` the per-rank minimum and maximum and the iterations,
with `-z` (7.3 and later) the percentile columns (`P50 Tail Lat(us)`), and
`-c` validation. Sizes become commchar's n (kernel-protocol.md): OSU's
scatter, gather and allgather sizes are per rank, so n is size times p.
Bandwidths become the time of one message of the window (`bw`) or of one
message each way (`bibw`), the quantity commchar's `bw` and `bibw` measure.
Several outputs concatenated in one file are read one after another.
"""

from __future__ import annotations

import re
from pathlib import Path

from commchar.errors import InputError, UsageError
from commchar.interop.imported import ImportedPoint, ParsedFile
from commchar.interop.textfile import count, number, read_lines

_TITLE = re.compile(r"^#\s*OSU MPI(?:-\w+)?\s+(?P<name>.+?)\s+Test(?:\s+v(?P<version>[\d.]+))?\s*$")

# OSU title (without the accelerator tag) -> (commchar op, variant, how n follows from OSU's size)
_OPS: dict[str, tuple[str, str, str]] = {
    "Latency": ("pingpong", "send", "same"),
    "Bandwidth": ("bw", "", "same"),
    "Bi-Directional Bandwidth": ("bibw", "", "same"),
    "Barrier Latency": ("barrier", "", "zero"),
    "Broadcast Latency": ("bcast", "", "same"),
    "Scatter Latency": ("scatter", "", "times_p"),
    "Gather Latency": ("gather", "", "times_p"),
    "Allgather Latency": ("allgather", "", "times_p"),
    "All-to-All Personalized Exchange Latency": ("alltoall", "", "same"),
    "Reduce Latency": ("reduce", "sum", "same"),
    "Allreduce Latency": ("allreduce", "sum", "same"),
    "Reduce_scatter Latency": ("reduce_scatter", "sum", "same"),
}
STATISTIC_P2P = "OSU mean over iterations (not a median)"
STATISTIC_COLL = "OSU mean over iterations, averaged over ranks (not a median)"


def _columns(header: str) -> list[str]:
    """`# Size       Avg Latency(us)   P50 Tail Lat(us)` -> ['Size', 'Avg Latency(us)', 'P50 Tail Lat(us)']."""
    body = header.lstrip("#").strip()
    names: list[str] = []
    for name in re.split(r"\s{2,}", body):
        # a percentile column is printed right after a narrow padding: split "X(us)P50 Tail"
        names.extend(part for part in re.split(r"(?<=\))(?=P\d)", name) if part)
    return names


def _is_header(line: str) -> bool:
    text = line.lstrip("#").strip()
    return line.startswith("#") and (text.startswith("Size") or text.startswith("Avg Latency")
                                     or text.startswith("Latency") or text.startswith("Bandwidth"))


def parse(path: str | Path, p: int | None) -> ParsedFile:
    """The points of one OSU output file; `p` is the ranks its collectives ran on
    (OSU does not print it; point-to-point programs always use 2)."""
    lines = read_lines(path)
    points: list[ImportedPoint] = []
    skipped: list[str] = []
    versions: set[str] = set()
    current: tuple[str, str, str] | None = None
    title = ""
    columns: list[str] = []
    for number_, line in enumerate(lines, start=1):
        where = f"{path}: line {number_}"
        stripped = line.strip()
        if not stripped:
            continue
        match = _TITLE.match(stripped)
        if not match and re.match(r"^#\s*OSU\b", stripped):
            # a program commchar has no parser for (one-sided: "OSU MPI_Get latency Test"): its
            # lines must not be read as the previous program's
            title, current, columns = stripped.lstrip("# ").strip(), None, []
            if title not in skipped:
                skipped.append(title)
            continue
        if match:
            title = match["name"].removeprefix("%s").strip()
            if match["version"]:
                versions.add(match["version"])
            current = _OPS.get(title)
            columns = []
            if current is None and title not in skipped:
                skipped.append(title)
            continue
        if stripped.startswith("#"):
            if current is not None and _is_header(stripped):
                columns = _columns(stripped)
            continue
        if current is None:
            continue
        if not columns:
            raise InputError(f"{where}: a value line before the column header of OSU {title}")
        points.append(_point(stripped, columns, current, title, p, where, number_))
    if not points and not skipped:
        raise InputError(f"{path}: no OSU benchmark output found (no '# OSU MPI ... Test' title)")
    if len(versions) > 1:
        raise InputError(f"{path}: output of several OSU versions ({', '.join(sorted(versions))});"
                         " import each version's files on their own")
    return ParsedFile("osu", versions.pop() if versions else "", points, skipped)


def _point(line: str, columns: list[str], mapped: tuple[str, str, str], title: str, p: int | None,
           where: str, line_no: int) -> ImportedPoint:
    op, variant, size_rule = mapped
    values = line.split()
    if len(values) != len(columns):
        raise InputError(f"{where}: {len(values)} values under {len(columns)} column(s)"
                         f" ({', '.join(columns)}) in OSU {title}")
    row = dict(zip(columns, values))
    collective = op not in ("pingpong", "bw", "bibw")
    if collective and p is None:
        raise UsageError(f"{where}: OSU output does not say how many ranks ran {title}; give --np")
    ranks = p if collective and p is not None else 2
    size = count(row["Size"], "size", where) if "Size" in row else 0
    n_bytes = {"same": size, "zero": 0, "times_p": size * ranks}[size_rule]
    extra: dict = {"tool_size_bytes": size}
    bandwidth = next((k for k in columns if k.startswith("Bandwidth")), None)
    if bandwidth:
        mbps = number(row[bandwidth], "bandwidth", where)
        if mbps == 0 and size > 0:
            raise InputError(f"{where}: OSU {title}: a bandwidth of {row[bandwidth][:30]} at {size} B gives no"
                             " time (an infinite one); nothing was imported")
        # OSU's MB is 10^6 B; bibw counts both directions, so one message each way takes 2 size / bw
        t_us = (2 if op == "bibw" else 1) * size / mbps if mbps > 0 and size > 0 else 0.0
        extra["tool_bandwidth_MBps"] = mbps
    else:
        latency = next((k for k in columns if "Latency" in k and not k.startswith(("Min", "Max"))), None)
        if latency is None:
            raise InputError(f"{where}: OSU {title}: no latency or bandwidth column in the header")
        t_us = number(row[latency], "latency", where)
    for name in columns:
        value = row[name]
        if name.startswith(("Min Latency", "Max Latency")):
            extra["rank_" + name[:3].lower() + "_us"] = number(value, name, where)
        elif re.match(r"P\d+ Tail", name):
            extra.setdefault("percentiles", {})[name.split()[0].lower()] = number(value, name, where)
        elif name == "Validation":
            extra["validation"] = value
    reps = count(row["Iterations"], "iterations", where) if "Iterations" in row else 0
    if "percentiles" in extra:
        extra["percentiles_unit"] = "MB/s" if bandwidth else "us"
    point = ImportedPoint(op, variant, ranks, n_bytes, t_us, f"OSU {title}",
                          STATISTIC_COLL if collective else STATISTIC_P2P, line_no, reps, extra)
    if extra.get("validation", "Pass") not in ("Pass", "Success"):
        point.extra["invalid"] = f"OSU validation said {extra['validation']}"
    elif t_us <= 0:  # a latency rounded to 0.00: kept, left out of fits
        point.extra["invalid"] = "the tool printed no positive time"
    return point
