#!/usr/bin/env python3
"""Does the commchar harness add time?  A fidelity benchmark (a script, not a test).

For each MPI library found, build commchar-kernel (the make contract of
`commchar build`) and bench/simple_pingpong.c with the same mpicc, then
alternate, several times within one run:

  A  commchar-kernel --plan pingpong:send=SIZES   -> the median sample per size
  B  simple_pingpong (MPI_Send/MPI_Recv, N round trips timed as one loop with
     MPI_Wtime, 31 loops of about 1 ms)           -> the median of its loop means

and print, per size, the median over rounds of the ratio A/B.  A ratio of 1.03
means the harness reports 3% more than the hand-written loop.  The order of A
and B flips every round so a slow drift of the machine cancels out.

    .venv/bin/python bench/fidelity.py [--rounds 7] [--library openmpi]
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
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SIZES = [0, 8, 1024, 65536, 1048576]
# Round trips per loop of B: about a millisecond each, so on a shared machine
# most loops escape preemption and their median is the undisturbed loop.
ITERATIONS = {0: 2000, 8: 2000, 1024: 1000, 65536: 100, 1048576: 10}
B_LOOPS = 31

LIBRARIES = {
    "openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "-np", "2", "--oversubscribe"]),
    "mpich": ("mpicc.mpich", ["mpirun.mpich", "-n", "2"]),
}


def build(library: str, mpicc: str, where: Path) -> tuple[Path, Path]:
    kernel_dir = where / library
    subprocess.run(
        ["make", "-s", "-C", str(ROOT / "kernels"), f"MPICC={mpicc}", f"BUILD={kernel_dir}"],
        check=True,
    )
    simple = where / f"simple_pingpong-{library}"
    subprocess.run(
        [mpicc, "-O2", "-o", str(simple), str(ROOT / "bench" / "simple_pingpong.c")], check=True
    )
    return kernel_dir / "commchar-kernel", simple


def run_kernel(launcher: list[str], kernel: Path, env: dict[str, str]) -> dict[int, float]:
    plan = "pingpong:send=" + ",".join(str(n) for n in SIZES)
    out = subprocess.run(
        [*launcher, str(kernel), "--plan", plan],
        check=True, capture_output=True, text=True, env=env, timeout=600,
    ).stdout
    medians = {}
    for line in out.splitlines():
        record = json.loads(line)
        if record["type"] == "point":
            medians[record["n_bytes"]] = statistics.median(record["samples_us"])
    return medians


def run_simple(launcher: list[str], simple: Path, env: dict[str, str]) -> dict[int, float]:
    args = [f"{n}:{ITERATIONS[n]}" for n in SIZES]
    out = subprocess.run(
        [*launcher, str(simple), str(B_LOOPS), *args],
        check=True, capture_output=True, text=True, env=env, timeout=600,
    ).stdout
    loops: dict[int, list[float]] = {}
    for line in out.splitlines():
        size, half_rtt = line.split()
        loops.setdefault(int(size), []).append(float(half_rtt))
    return {size: statistics.median(values) for size, values in loops.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="A/B alternations per library")
    parser.add_argument("--library", choices=sorted(LIBRARIES), action="append",
                        help="only this library (repeatable); default: every one installed")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    console = Console(highlight=False)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    chosen = [
        name for name in args.library or LIBRARIES
        if shutil.which(LIBRARIES[name][0]) and shutil.which(LIBRARIES[name][1][0])
    ]
    if not chosen:
        console.print("no MPI library found (mpicc.openmpi or mpicc.mpich)")
        return 1

    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="commchar-fidelity-") as tmp:
        for library in chosen:
            mpicc, launcher = LIBRARIES[library]
            kernel, simple = build(library, mpicc, Path(tmp))
            ratios: dict[int, list[float]] = {n: [] for n in SIZES}
            a_all: dict[int, list[float]] = {n: [] for n in SIZES}
            b_all: dict[int, list[float]] = {n: [] for n in SIZES}
            with Progress(TextColumn(f"{library}: round {{task.completed}}/{{task.total}}"),
                          BarColumn(), TimeRemainingColumn(), console=console) as progress:
                task = progress.add_task(library, total=args.rounds)
                for round_ in range(args.rounds):
                    if round_ % 2 == 0:
                        a = run_kernel(launcher, kernel, env)
                        b = run_simple(launcher, simple, env)
                    else:
                        b = run_simple(launcher, simple, env)
                        a = run_kernel(launcher, kernel, env)
                    for n in SIZES:
                        ratios[n].append(a[n] / b[n])
                        a_all[n].append(a[n])
                        b_all[n].append(b[n])
                    progress.advance(task)
            table = Table(title=f"{library}: commchar (A) / simple loop (B), {args.rounds} rounds")
            for column in ("bytes", "median A/B", "min A/B", "max A/B", "A median us", "B median us"):
                table.add_column(column, justify="right")
            for n in SIZES:
                median_ratio = statistics.median(ratios[n])
                worst = max(worst, median_ratio)
                table.add_row(
                    str(n), f"{median_ratio:.3f}", f"{min(ratios[n]):.3f}", f"{max(ratios[n]):.3f}",
                    f"{statistics.median(a_all[n]):.4g}", f"{statistics.median(b_all[n]):.4g}",
                )
            console.print(table)
    console.print(f"largest median ratio: {worst:.3f} (target: at most 1.03)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
