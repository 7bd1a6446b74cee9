"""Peer tools' output files into the store: one run, one job per (library, p), one point per line.

Imported points are ordinary points to fit, report and predict, marked so
nobody mistakes them for commchar's: the library is stored as
`<library>-<tool>` (a model never mixes a peer's means with commchar's
medians of the same library), every point's `extra.source` names the tool,
its version, the program, the file and line, and the statistic (a mean), and
the job's library version says the same. There are no samples and so no
confidence interval; precision is recorded as not met.
"""

from __future__ import annotations

import math
import platform
import socket
from dataclasses import dataclass
from pathlib import Path

from commchar.provenance import build_identity
from commchar.errors import InputError, UsageError
from commchar.interop import imb, osu
from commchar.interop.imported import ImportedPoint, ParsedFile
from commchar.interop.textfile import check_point
from commchar.store import Store

TOOLS = ("osu", "imb")
TOOL_NAMES = {"osu": "OSU Micro-Benchmarks", "imb": "Intel MPI Benchmarks"}
MEANS_NOTE = "times are the tool's means, not medians; no samples, no confidence intervals"


@dataclass
class ImportResult:
    run_id: int
    label: str
    tool: str
    version: str
    points: int
    invalid: int
    skipped: list[str]  # benchmarks the files hold that commchar has no operation for


def parse_files(tool: str, paths: list[str], p: int | None) -> list[tuple[str, ParsedFile]]:
    if tool not in TOOLS:
        raise UsageError(f"unknown tool '{tool}' (known: {', '.join(TOOLS)})")
    if not paths:
        raise UsageError("give at least one output file to import")
    return [(path, osu.parse(path, p) if tool == "osu" else imb.parse(path)) for path in paths]


def _check_unique(parsed: list[tuple[str, ParsedFile]]) -> None:
    seen: dict[tuple, str] = {}
    for path, result in parsed:
        for pt in result.points:
            key = (pt.op, pt.variant, pt.p, pt.n_bytes)
            where = f"{path}: line {pt.line}"
            if key in seen:
                raise InputError(f"{where}: {pt.program} at {pt.n_bytes} B, p={pt.p} was already read at"
                                 f" {seen[key]}; import repeated runs as separate imports")
            seen[key] = where


def import_files(db: str | Path, tool: str, paths: list[str], library: str, p: int | None = None,
                 label: str | None = None) -> ImportResult:
    """Parse every file first (a bad file stores nothing), then write one run."""
    library = library.strip()
    if not library or any(c.isspace() for c in library):
        raise UsageError(f"--library {library!r}: give the MPI library's name, one word (e.g. openmpi)")
    if p is not None and not 1 <= p <= 2**31 - 1:
        raise UsageError(f"--np {p}: must be a positive number of ranks")
    parsed = parse_files(tool, paths, p)
    caches = {pt.cache for _, r in parsed for pt in r.points}
    if len(caches) > 1:
        cold = sorted({path for path, r in parsed if any(pt.cache == "cold" for pt in r.points)})
        raise InputError(f"{', '.join(cold)} ran with buffers out of cache and the other files did not;"
                         " import the cache-cold files on their own")
    for path, result in parsed:
        for pt in result.points:
            check_point(f"{path}: line {pt.line}", pt.p, pt.n_bytes, pt.t_us)
    _check_unique(parsed)
    versions = sorted({r.version for _, r in parsed if r.version})
    if len(versions) > 1:
        raise InputError(f"the files come from several {tool.upper()} versions ({', '.join(versions)});"
                         " import each version on its own")
    version = versions[0] if versions else "unknown version"
    skipped = sorted({name for _, r in parsed for name in r.skipped})
    points = [(path, pt) for path, r in parsed for pt in r.points]
    if not points:
        raise InputError(f"no benchmark in {', '.join(paths)} maps to a commchar operation"
                         f" (found: {', '.join(skipped)})")
    label = label or f"{library}-{tool}"
    source = {"tool": tool, "tool_name": TOOL_NAMES[tool], "version": version, "library": library,
              "files": [str(Path(x).resolve()) for x in paths], "statistic": "mean", "note": MEANS_NOTE}
    host = {"hostname": socket.gethostname(), "os": platform.platform(), "imported": True}
    with Store(db) as store:
        run_id = store.create_run(build_identity(), host, {"libraries": [label], "np": sorted({pt.p for _, pt in points}),
                                                      "import": source})
        try:
            jobs = {}
            for q in sorted({pt.p for _, pt in points}):
                jobs[q] = store.create_job(run_id, label, q, [], {}, oversubscribed=False)
                store.record_job_header(jobs[q], {
                    "mpi_library_version": f"{library}: imported {TOOL_NAMES[tool]} {version} output ({MEANS_NOTE})",
                    "options": {"import": source}})
            for path, pt in points:
                store.add_point(run_id, jobs[pt.p], label, _point_dict(pt, path, tool, version), _summary(pt),
                                oversubscribed=False, ci_rel=math.nan)
            for job_id in jobs.values():
                store.finish_job(job_id, 0)
        except BaseException:
            store.set_run_status(run_id, "failed")
            raise
        store.set_run_status(run_id, "complete")
    invalid = sum(1 for _, pt in points if "invalid" in pt.extra)
    return ImportResult(run_id, label, tool, version, len(points), invalid, skipped)


def _point_dict(pt: ImportedPoint, path: str, tool: str, version: str) -> dict:
    extra = {k: v for k, v in pt.extra.items() if k != "invalid"}
    extra["source"] = {"tool": tool, "version": version, "program": pt.program, "file": str(path),
                       "line": pt.line, "statistic": pt.statistic}
    return {
        "op": pt.op, "variant": pt.variant, "p": pt.p, "n_bytes": pt.n_bytes, "batch": 1,
        "precision_target": None, "precision_met": False, "stop_reason": f"imported from {tool}",
        "valid": "invalid" not in pt.extra, "error": pt.extra.get("invalid"),
        "sync": _sync(pt, tool), "samples_us": [], "extra": extra, "cache": pt.cache,
    }


def _sync(pt: ImportedPoint, tool: str) -> str | None:
    if pt.op in ("pingpong", "bw", "bibw"):
        return None
    # OSU puts a barrier after each timed call; IMB times a loop of back-to-back calls
    return f"{tool}: barrier between calls" if tool == "osu" else f"{tool}: none (loop average)"


def _summary(pt: ImportedPoint) -> dict:
    return {"reps": pt.reps, "t_us": pt.t_us, "t_mean_us": pt.t_us,
            **{k: None for k in ("t_min_us", "t_p25_us", "t_p75_us", "t_p95_us", "t_max_us", "t_std_us",
                                 "ci_lo_us", "ci_hi_us", "outliers")},
            "outlier_rule": None}
