#!/usr/bin/env python3
"""Wall time of a full p = 2 characterization, beside the peer suites on the same machine.

For each MPI library: `commchar run --np 2` with default operations, sizes and
1% precision (every send mode, bw, bibw, every collective and reduction
variant, LogGP), then, where you have built them, the OSU micro-benchmarks
(point-to-point latency, bw, bibw and the blocking collectives) and IMB-MPI1
with its defaults, all at p = 2. Prints seconds per tool, and for commchar how
many points met the precision target and where its time went: each
operation's points, their wall time (warm-up, measurement, verification, as
the kernel stores it per point) and how many stopped without meeting the
precision; the rest of the run is job launches and the runner. Peers are not
part of commchar: build them yourself and pass their locations.

    python bench/characterize_speed.py [--library openmpi,mpich]
        [--osu-openmpi DIR] [--osu-mpich DIR]   # DIR: OSU's c/mpi (7.x) or mpi (5.x) build directory
        [--imb-openmpi FILE] [--imb-mpich FILE] [--repeat 1] [--by-operation]

With --repeat N, commchar and the peers run in turn N times and the median of
the N ratios is printed: on a shared machine one run moves by tens of percent.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

OSU_PT2PT = ("osu_latency", "osu_bw", "osu_bibw")
OSU_COLLECTIVES = ("osu_barrier", "osu_bcast", "osu_scatter", "osu_gather", "osu_allgather",
                   "osu_alltoall", "osu_reduce", "osu_allreduce", "osu_reduce_scatter")
LAUNCH = {"openmpi": ["mpirun.openmpi", "-np", "2"], "mpich": ["mpiexec.mpich", "-n", "2"]}


def timed(argv: list[str], env: dict | None = None) -> float:
    started = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})}, timeout=3600)
    return time.monotonic() - started


def commchar_time(library: str) -> tuple[float, list[dict]]:
    """Seconds of a default run, and its points' operation, wall time, stop reason and precision."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "speed.db"
        seconds = timed([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library",
                         library, "--np", "2"])
        # read-only, straight from the table: the store's point dicts leave out the kernel's
        # wall time per point and its stop reason
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            con.row_factory = sqlite3.Row
            rows = con.execute("SELECT op, wall_s, stop_reason, precision_met FROM points").fetchall()
        return seconds, [dict(r) for r in rows]


def by_operation(points: list[dict], seconds: float) -> list[str]:
    """Lines of where a run's time went: per operation, slowest first, then what no point holds."""
    ops: dict[str, list[dict]] = {}
    for point in points:
        ops.setdefault(point["op"], []).append(point)
    lines = [f"  {'operation':20} {'points':>6} {'wall s':>7} {'unmet':>5}  stopped by"]
    for op, group in sorted(ops.items(), key=lambda kv: -sum(p["wall_s"] or 0 for p in kv[1])):
        reasons: dict[str, int] = {}
        for point in group:
            reasons[point["stop_reason"]] = reasons.get(point["stop_reason"], 0) + 1
        lines.append(f"  {op:20} {len(group):6d} {sum(p['wall_s'] or 0 for p in group):7.2f} "
                     f"{sum(not p['precision_met'] for p in group):5d}  "
                     + ", ".join(f"{r} {k}" for r, k in sorted(reasons.items())))
    measured = sum(p["wall_s"] or 0 for p in points)
    lines.append(f"  {'(launches, runner)':20} {'':6} {seconds - measured:7.2f}")
    return lines


def osu_program(root: Path, name: str) -> Path:
    """OSU 5.x keeps programs in pt2pt/ and collective/, 7.x in pt2pt/standard/ and
    collective/blocking/: the first executable of that name under root."""
    for path in sorted(root.rglob(name)):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise SystemExit(f"characterize_speed: no OSU program {name} under {root}")


def osu_time(library: str, root: Path) -> float:
    total = 0.0
    for name in OSU_PT2PT + OSU_COLLECTIVES:
        total += timed(LAUNCH[library] + [str(osu_program(root, name))])
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="openmpi,mpich")
    for lib in ("openmpi", "mpich"):
        parser.add_argument(f"--osu-{lib}", type=Path)
        parser.add_argument(f"--imb-{lib}", type=Path)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--by-operation", action="store_true",
                        help="also print where commchar's time went, per operation")
    args = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    print(f"{'library':8} {'tool':10} {'wall s':>8}  notes")
    for library in args.library.split(","):
        ratios: dict[str, list[float]] = {"OSU": [], "IMB-MPI1": []}
        for _ in range(args.repeat):
            seconds, points = commchar_time(library)
            met = sum(p["precision_met"] for p in points)
            print(f"{library:8} {'commchar':10} {seconds:8.1f}  {len(points)} points, precision 1% met "
                  f"at {met} ({100 * met / max(len(points), 1):.1f}%, target >= 99%), medians with "
                  f"95% CIs, every sample kept")
            if args.by_operation:
                print("\n".join(by_operation(points, seconds)))
            osu = getattr(args, f"osu_{library}")
            if osu:
                peer = osu_time(library, osu)
                ratios["OSU"].append(seconds / peer)
                print(f"{library:8} {'OSU':10} {peer:8.1f}  "
                      f"{len(OSU_PT2PT) + len(OSU_COLLECTIVES)} programs, means only;"
                      f" commchar/OSU ratio {seconds / peer:.2f}")
            imb = getattr(args, f"imb_{library}")
            if imb:
                peer = timed(LAUNCH[library] + [str(imb)])
                ratios["IMB-MPI1"].append(seconds / peer)
                print(f"{library:8} {'IMB-MPI1':10} {peer:8.1f}  "
                      f"defaults, t_min/t_max/t_avg only; commchar/IMB ratio {seconds / peer:.2f}")
        for peer, values in ratios.items():
            if len(values) > 1:  # the machine's load moves single runs by tens of percent
                print(f"{library:8} commchar/{peer} median of {len(values)} alternated runs: "
                      f"{statistics.median(values):.2f} (target <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
