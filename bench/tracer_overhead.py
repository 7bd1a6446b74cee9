#!/usr/bin/env python3
"""What the tracer costs a chatty program: HPCC (Debian's hpcc, 4 M MPI_Testany calls at
N = 1000, p = 2) and optionally a program of apps/, run untraced and traced alternately.

    python bench/tracer_overhead.py [--runs 5] [--np 2] [--hpcc-input FILE] [--model M.json]
                                    [--app jacobi ARGS...]

Each pair is an untraced then a traced run of the whole job (mpirun to exit) with the
same launcher; the tracer is preloaded as `commchar trace` does, writing to a temporary
directory. Printed per program: the median untraced and traced job wall time, the median
of the per-pair ratios traced / untraced, the MPI calls the trace holds (a TEST_RUN record
counted as the calls it stands for), the records and bytes it took, and the overhead per
call: (median traced - median untraced) / calls. An empty MPI job (Init, Finalize) is run
alongside so the program's own Init-to-Finalize time, untraced, can be read off as its
job wall time minus the empty job's. First, a polling loop alone (one rank, a million
unsuccessful MPI_Testany a round) gives the tracer's cost per unsuccessful test. With --model, the last traced run is replayed
(`commchar replay --dir`, no other flags) and its LogGPS and LogGP predictions are set
against that untraced Init-to-Finalize time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from commchar.measure.build import APPS, ensure_built, ensure_tracer
from commchar.measure.launch import LaunchSpec, program_command
from commchar.measure.libraries import Library, linked_family, select
from commchar.trace import read_trace

ROOT = Path(__file__).resolve().parent.parent
HPCC_INPUT = ROOT / "tests" / "fixtures" / "hpcc" / "hpccinf.txt"
EMPTY = "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n"
# A polling loop alone: MPI_Testany on a receive nothing matches, the best of 5 rounds.
POLL = r"""#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int x = 0, index, flag, n = atoi(argv[1]);
    MPI_Request r;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_SELF, &r);
    double best = 1e9;
    for (int round = 0; round < 5; round++) {
        double t0 = now();
        for (int i = 0; i < n; i++) MPI_Testany(1, &r, &index, &flag, MPI_STATUS_IGNORE);
        double ns = 1e9 * (now() - t0) / n;
        if (ns < best) best = ns;
    }
    MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_SELF);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    printf("%.2f\n", best);
    MPI_Finalize();
    return 0;
}
"""


def run(library: Library, program: list[str], p: int, cwd: Path, trace_dir: Path | None,
        output: list[str] | None = None) -> float:
    """The job's wall seconds, launch to exit (its stdout appended to `output`)."""
    rank_env = {}
    if trace_dir is not None:
        for old in trace_dir.glob("rank-*.cctrace"):
            old.unlink()
        rank_env = {"LD_PRELOAD": str(ensure_tracer(library)), "COMMCHAR_TRACE_DIR": str(trace_dir)}
    job = program_command(library, LaunchSpec(), p, program, rank_env)
    start = time.monotonic()
    out = subprocess.run(job.argv, capture_output=True, text=True, timeout=600, cwd=cwd,
                         env={**os.environ, **job.env_added})
    wall = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"tracer_overhead: {' '.join(program)} failed: {out.stderr.strip()[-300:]}")
    if output is not None:
        output.append(out.stdout)
    return wall


def polling(library: Library, binary: Path, calls: int, runs: int, cwd: Path, trace_dir: Path) -> None:
    untraced: list[str] = []
    traced: list[str] = []
    for _ in range(runs):
        run(library, [str(binary), str(calls)], 1, cwd, None, untraced)
        run(library, [str(binary), str(calls)], 1, cwd, trace_dir, traced)
    u = statistics.median(float(x) for x in untraced)
    t = statistics.median(float(x) for x in traced)
    size = sum(path.stat().st_size for path in trace_dir.glob("rank-*.cctrace"))
    print(f"polling loop ({library.name}, {runs} runs of 5 x {calls} unsuccessful MPI_Testany, best round):"
          f" untraced {u:.1f} ns a call, traced {t:.1f} ns a call, +{t - u:.1f} ns; its trace file "
          f"{size} bytes", flush=True)


def calls_and_records(trace_dir: Path) -> tuple[int, int, int]:
    trace = read_trace(trace_dir)
    summary = trace.summary()
    calls = sum(v["count"] for v in summary.calls.values())
    records = sum(summary.records)
    size = sum(path.stat().st_size for path in trace_dir.glob("rank-*.cctrace"))
    return calls, records, size


def predict(model: str, library: Library, trace_dir: Path, untraced_s: float) -> str:
    out = subprocess.run([sys.executable, "-m", "commchar", "replay", "--dir", str(trace_dir),
                          "--model", model, "--library", library.name, "--json"],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return f"  replay failed: {out.stderr.strip()[-300:]}"
    doc = json.loads(out.stdout)
    traced_s = doc["measured"]["makespan"] / 1e6
    line = f"  Init-to-Finalize: untraced {untraced_s:.3f} s, traced {traced_s:.3f} s"
    for key, name in (("loggps", "LogGPS"), ("loggp", "LogGP")):
        predicted = doc["predictions"][key]["makespan"] / 1e6
        line += f"; {name} {predicted:.3f} s ({100 * (predicted / untraced_s - 1):+.1f}%)"
    return line


def measure(name: str, library: Library, program: list[str], p: int, runs: int, cwd: Path,
            trace_dir: Path, empty: list[str], model: str | None) -> None:
    untraced, traced, bare = [], [], []
    for _ in range(runs):
        bare.append(run(library, empty, p, cwd, None))
        untraced.append(run(library, program, p, cwd, None))
        traced.append(run(library, program, p, cwd, trace_dir))
    calls, records, size = calls_and_records(trace_dir)
    ratio = statistics.median(t / u for u, t in zip(untraced, traced))
    u, t, e = statistics.median(untraced), statistics.median(traced), statistics.median(bare)
    print(f"{name} ({library.name}, p = {p}, {runs} pairs): untraced {u:.3f} s, traced {t:.3f} s, "
          f"median ratio {ratio:.4f} ({100 * (ratio - 1):+.1f}%); empty MPI job {e:.3f} s, so "
          f"Init-to-Finalize untraced {u - e:.3f} s")
    print(f"  {calls} MPI calls in {records} records ({size / 1e6:.2f} MB, "
          f"{size / max(calls, 1):.2f} B a call); overhead per call "
          f"{1e9 * (t - u) / max(calls, 1):.1f} ns (median traced - median untraced)", flush=True)
    if model:
        print(predict(model, library, trace_dir, u - e), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5, help="untraced/traced pairs per program")
    parser.add_argument("--hpcc-input", default=str(HPCC_INPUT), help="the hpccinf.txt to run with")
    parser.add_argument("--model", help="a model file: also replay the last traced run and predict")
    parser.add_argument("--app", nargs=argparse.REMAINDER,
                        help="also a program of apps/ (built for the library) and its arguments")
    args = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    hpcc = shutil.which("hpcc")
    if hpcc is None:
        sys.exit("tracer_overhead: hpcc is not installed (apt-get install hpcc, or make setup)")
    family = linked_family(hpcc)
    (library,) = [lib for lib in select(None) if lib.family == family][:1] or [None]
    if library is None:
        sys.exit(f"tracer_overhead: no commchar library for hpcc's MPI ({family})")
    with tempfile.TemporaryDirectory(prefix="commchar-overhead-") as tmp:
        work = Path(tmp)
        shutil.copy(args.hpcc_input, work / "hpccinf.txt")
        (work / "empty.c").write_text(EMPTY)
        subprocess.run([library.mpicc, "-o", str(work / "empty"), str(work / "empty.c")], check=True)
        (work / "poll.c").write_text(POLL)
        subprocess.run([library.mpicc, "-O2", "-o", str(work / "poll"), str(work / "poll.c")], check=True)
        trace_dir = work / "trace"
        trace_dir.mkdir()
        polling(library, work / "poll", 1_000_000, args.runs, work, trace_dir)
        empty = [str(work / "empty")]
        measure("hpcc", library, [hpcc], args.np, args.runs, work, trace_dir, empty, args.model)
        if args.app:
            binary = ensure_built(APPS, library) / args.app[0]
            measure(args.app[0], library, [str(binary), *args.app[1:]], args.np, args.runs, work,
                    trace_dir, empty, args.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
