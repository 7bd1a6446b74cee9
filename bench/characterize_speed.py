#!/usr/bin/env python3
"""Wall time of a full p = 2 characterization, beside the peer suites on the same machine.

For each MPI library: `commchar run --np 2` with default operations (every
send mode, bw, bibw, every collective and reduction variant, one-sided,
LogGP and its probes) and the default sizes (`grid`: every power of two at
1%; `--sizes adaptive` times a coarse grid and the sizes its model still
needs, each point to 3% for a model known to 3%; docs/method.md "Which
sizes"), then, where you have built them, the OSU micro-benchmarks
(point-to-point latency, bw, bibw and the blocking collectives) and IMB-MPI1
with its defaults, all at p = 2. Prints seconds per tool, and for commchar how
many points met the precision target and where its time went: each
operation's points, their wall time (warm-up, measurement, verification, as
the kernel stores it per point) and how many stopped without meeting the
precision; the rest of the run is job launches and the runner. Peers are not
part of commchar: build them yourself and pass their locations.

    python bench/characterize_speed.py [--library openmpi,mpich]
        [--osu-openmpi DIR] [--osu-mpich DIR]   # DIR: OSU's c/mpi (7.x) or mpi (5.x) build directory
        [--imb-openmpi FILE] [--imb-mpich FILE] [--repeat 1] [--by-operation] [--peer-operations]
        [--sizes adaptive|grid|dense]

With --repeat N, commchar and the peers run in turn N times and the median of
the N ratios is printed: on a shared machine one run moves by tens of percent.

Each commchar run also prints the time an ideal stopping rule would still
have spent measuring its points: every point stopped at exactly the
precision target (the CI's half-width taken to shrink as one over the
square root of the samples), with no warm-up, job launch or runner. No
method that gives every point's median to that precision can measure the
same points in less; where it exceeds a peer's time, a ratio of 1.0 needs
fewer points, not a better method. With --peer-operations, commchar also
runs on the OSU suite's own operations alone (standard-mode ping-pong, bw,
bibw and the nine blocking collectives, reductions summing doubles), its
own default sizes, for a like-for-like ratio.
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
# what the OSU programs above measure, as commchar operations
OSU_OPERATIONS = ("pingpong:send,bw,bibw,barrier,bcast,scatter,gather,allgather,alltoall,"
                  "reduce:sum,allreduce:sum,reduce_scatter:sum")
LAUNCH = {"openmpi": ["mpirun.openmpi", "-np", "2"], "mpich": ["mpiexec.mpich", "-n", "2"]}


def timed(argv: list[str], env: dict | None = None) -> float:
    started = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})}, timeout=3600)
    return time.monotonic() - started


def commchar_time(library: str, ops: str | None = None, sizes: str | None = None) -> tuple[float, list[dict]]:
    """Seconds of a default run (of `ops` only, under the size rule `sizes`, if given), and its
    points' operation, wall time, stop reason, precision (target, met, reached) and warm-up time."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "speed.db"
        seconds = timed([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library",
                         library, "--np", "2", *(["--ops", ops] if ops else []),
                         *(["--sizes", sizes] if sizes else [])])
        # read-only, straight from the table: the store's point dicts leave out the kernel's
        # wall time per point and its stop reason
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            con.row_factory = sqlite3.Row
            rows = con.execute("SELECT op, wall_s, stop_reason, precision_met, precision_target, "
                               "ci_rel, json_extract(extra_json, '$.warmup_s') AS warmup_s "
                               "FROM points").fetchall()
        return seconds, [dict(r) for r in rows]


def ideal_stop_seconds(points: list[dict]) -> float:
    """The measuring time of `points` had each stopped at exactly its precision target: its wall
    time less its warm-up, cut by (reached / target)^2 where it went beyond (a CI's half-width
    shrinks as one over the square root of the samples), whole where it fell short."""
    total = 0.0
    for point in points:
        measuring = max(0.0, (point["wall_s"] or 0.0) - (point["warmup_s"] or 0.0))
        reached, target = point["ci_rel"], point["precision_target"]
        if reached is not None and target and reached < target:
            measuring *= (reached / target) ** 2
        total += measuring
    return total


def commchar_line(library: str, tool: str, seconds: float, points: list[dict]) -> str:
    met = sum(p["precision_met"] for p in points)
    # an adaptive run's added points may each have a target of their own (half their series'
    # noise floor): the range
    held = sorted({p["precision_target"] for p in points if p["precision_target"]})
    targets = (f"{100 * held[0]:g}%" if len(held) == 1 else f"{100 * held[0]:.3g}-{100 * held[-1]:.3g}%"
               if held else "none")
    return (f"{library:8} {tool:10} {seconds:8.1f}  {len(points)} points, precision {targets} met at {met} "
            f"({100 * met / max(len(points), 1):.1f}%, target >= 99%), medians with 95% CIs, every "
            f"sample kept; an ideal stop would still measure {ideal_stop_seconds(points):.1f} s")


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
    parser.add_argument("--peer-operations", action="store_true",
                        help="also time commchar on the OSU suite's own operations alone")
    parser.add_argument("--sizes", help="commchar's size rule (default: its default, grid)")
    args = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    print(f"{'library':8} {'tool':10} {'wall s':>8}  notes")
    for library in args.library.split(","):
        ratios: dict[str, list[float]] = {"OSU": [], "IMB-MPI1": [], "OSU on its own operations": []}
        for _ in range(args.repeat):
            seconds, points = commchar_time(library, sizes=args.sizes)
            print(commchar_line(library, "commchar", seconds, points))
            if args.by_operation:
                print("\n".join(by_operation(points, seconds)))
            like = commchar_time(library, OSU_OPERATIONS, args.sizes) if args.peer_operations else None
            if like:
                print(commchar_line(library, "commchar", like[0], like[1]) + "; the OSU suite's operations")
            osu = getattr(args, f"osu_{library}")
            if osu:
                peer = osu_time(library, osu)
                ratios["OSU"].append(seconds / peer)
                print(f"{library:8} {'OSU':10} {peer:8.1f}  "
                      f"{len(OSU_PT2PT) + len(OSU_COLLECTIVES)} programs, means only;"
                      f" commchar/OSU ratio {seconds / peer:.2f}"
                      + (f", on OSU's operations {like[0] / peer:.2f}" if like else ""))
                if like:
                    ratios["OSU on its own operations"].append(like[0] / peer)
            imb = getattr(args, f"imb_{library}")
            if imb:
                peer = timed(LAUNCH[library] + [str(imb)])
                ratios["IMB-MPI1"].append(seconds / peer)
                print(f"{library:8} {'IMB-MPI1':10} {peer:8.1f}  "
                      f"defaults, t_min/t_max/t_avg only; commchar/IMB ratio {seconds / peer:.2f}")
        for name, values in ratios.items():
            if len(values) > 1:  # the machine's load moves single runs by tens of percent
                print(f"{library:8} commchar/{name} median of {len(values)} alternated runs: "
                      f"{statistics.median(values):.2f} (target <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
