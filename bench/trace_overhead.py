#!/usr/bin/env python3
"""What the PMPI tracer costs: per call (ns) and in a program's wall time (ratio).

    python bench/trace_overhead.py [--library openmpi,mpich] [--pairs 5] [--count 1000000]
    python bench/trace_overhead.py --program ./app ARGS...   # (b) for your own program

(a) bench/trace_overhead.c runs COUNT MPI_Iprobe calls, and COUNT 0-byte
Irecv+Isend+Waitall rounds to itself, untraced and traced alternately (A B A B
... in one invocation, so slow drifts of a shared machine hit both); the
per-call delta is traced minus untraced ns per call, and the ratio traced over
untraced, each the median over the pairs; beside it the difference of the
least disturbed runs (minimum traced minus minimum untraced), the robust figure
on a shared machine. The traced runs include writing the
trace (64 bytes a record, streamed to a temporary directory).
(b) The total wall-time ratio of an application-like loop (computation, 64 KiB
neighbour exchanges, an Allreduce every 10 iterations) or of --program: the
loop's own time as the program reports it (`loop_s`), and the job's wall time
from launch to exit.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from commchar.measure.build import ensure_tracer, source_root
from commchar.measure.launch import LaunchSpec, program_command
from commchar.measure.libraries import Library, select

SOURCE = Path(__file__).resolve().parent / "trace_overhead.c"


def compile_program(library: Library, directory: Path) -> Path:
    binary = directory / f"trace_overhead-{library.name}"
    # MPICH's header makes gcc misread MPI_STATUSES_IGNORE as a zero-length array
    subprocess.run([library.mpicc, "-std=c11", "-O2", "-Wno-stringop-overflow",
                    f"-I{source_root() / 'kernels'}", "-o", str(binary), str(SOURCE)],
                   check=True, timeout=300)
    return binary


def run(library: Library, program: list[str], p: int, traced: bool,
        trace_dir: Path) -> tuple[float, dict[str, float]]:
    """(job wall seconds, the numbers the program printed)."""
    rank_env = {}
    if traced:
        for old in trace_dir.glob("rank-*.cctrace"):
            old.unlink()
        rank_env = {"LD_PRELOAD": str(ensure_tracer(library)), "COMMCHAR_TRACE_DIR": str(trace_dir)}
    job = program_command(library, LaunchSpec(), p, program, rank_env)
    start = time.monotonic()
    out = subprocess.run(job.argv, capture_output=True, text=True, timeout=600,
                         env={**os.environ, **job.env_added})
    wall = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"trace_overhead: {' '.join(program)} failed with {library.name}: "
                 f"{out.stderr.strip()[-300:]}")
    values = {k: float(v) for k, v in re.findall(r"^(\w+) ([-\d.e+]+)$", out.stdout, re.M)}
    return wall, values


def alternate(library: Library, program: list[str], p: int, pairs: int,
              trace_dir: Path) -> list[tuple[tuple[float, dict], tuple[float, dict]]]:
    results = []
    for _ in range(pairs):
        untraced = run(library, program, p, False, trace_dir)
        traced = run(library, program, p, True, trace_dir)
        results.append((untraced, traced))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=5, help="untraced/traced pairs per case")
    parser.add_argument("--count", type=int, default=1_000_000, help="calls for (a)")
    parser.add_argument("--iterations", type=int, default=2000, help="loop iterations for (b)")
    parser.add_argument("--program", nargs=argparse.REMAINDER,
                        help="(b) only, for this program and its arguments")
    args = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    libraries = select(args.library.split(",") if args.library else None)
    print(f"trace overhead, p = {args.np}, {args.pairs} untraced/traced pairs, "
          f"medians (machine load affects both sides of a pair alike)")
    with tempfile.TemporaryDirectory(prefix="commchar-overhead-") as tmp:
        work = Path(tmp)
        for library in libraries:
            binary = str(compile_program(library, work))
            trace_dir = work / f"trace-{library.name}"
            trace_dir.mkdir()
            if not args.program:
                for mode in ("iprobe", "selfsend"):
                    pairs = alternate(library, [binary, mode, str(args.count)], args.np,
                                      args.pairs, trace_dir)
                    base = [u[1]["ns_per_call"] for u, _ in pairs]
                    with_trace = [t[1]["ns_per_call"] for _, t in pairs]
                    delta = statistics.median(t - u for u, t in zip(base, with_trace))
                    ratio = statistics.median(t / u for u, t in zip(base, with_trace))
                    print(f"{library.name:8s} (a) {mode:9s} untraced {statistics.median(base):8.1f}"
                          f" ns/call  traced {statistics.median(with_trace):8.1f} ns/call  "
                          f"delta {delta:7.1f} ns/call  ratio {ratio:.3f}  "
                          f"(least disturbed: delta {min(with_trace) - min(base):.1f} ns/call)")
            program = args.program or [binary, "app", str(args.iterations)]
            pairs = alternate(library, program, args.np, args.pairs, trace_dir)
            # the ratio of the least disturbed runs is the robust one on a shared machine
            wall_ratio = statistics.median(t[0] / u[0] for u, t in pairs)
            wall_min = min(t[0] for _, t in pairs) / min(u[0] for u, _ in pairs)
            line = f"{library.name:8s} (b) {' '.join(Path(program[0]).name.split())}: job wall " \
                   f"ratio {wall_ratio:.4f} (least disturbed {wall_min:.4f})"
            if all("loop_s" in u[1] and "loop_s" in t[1] for u, t in pairs):
                loop_ratio = statistics.median(t[1]["loop_s"] / u[1]["loop_s"] for u, t in pairs)
                loop_min = min(t[1]["loop_s"] for _, t in pairs) / min(u[1]["loop_s"] for u, _ in pairs)
                untraced_s = min(u[1]["loop_s"] for u, _ in pairs)
                line += (f"  loop ratio {loop_ratio:.4f} (least disturbed {loop_min:.4f}, "
                         f"untraced loop {untraced_s:.3f} s)")
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
