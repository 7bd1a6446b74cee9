#!/usr/bin/env python3
"""Per-point cost of the kernel's warm-up: `--warmup series` against `--warmup point`.

Runs the built kernel (build/kernels/LIBRARY/commchar-kernel, `commchar build`)
at p = 2 on one plan of size series below 32 KiB (ping-pong, bcast, allreduce,
alltoall, a fence put), at the adaptive rule's precision (3%, 0.1 s at most a
point), the two warm-up modes in turn, REPEAT times each. Prints per mode the
mean wall time of a point (everything the kernel spends on it: warm-up,
measurement, verification), of its warm-up, and how many warm-ups ended
steady; then the median over the alternated pairs of the ratio series / point
of the mean point time, and how far the two modes' medians lie apart (the
median over points of |t_series - t_point| / t_point, and of its signed
value, beside the same figure for two runs of one mode: what the noise alone
gives).

    chrt -f 10 python bench/warmup_series.py [--library mpich,openmpi] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = {"openmpi": ["mpirun.openmpi", "-np", "2"], "mpich": ["mpiexec.mpich", "-n", "2"]}
SMALL = [8 * 2 ** k for k in range(13)]  # 8 B .. 32 KiB
PLAN = ";".join([
    "pingpong:send=" + ",".join(map(str, [0, 1, *SMALL])),
    "bcast=" + ",".join(map(str, [1, *SMALL])),
    "allreduce:sum=" + ",".join(map(str, SMALL)),
    "alltoall=" + ",".join(map(str, SMALL)),
    "put:fence=" + ",".join(map(str, [1, *SMALL])),
])
OPTIONS = ["--precision", "0.03", "--max-time", "0.1"]


def run(library: str, mode: str) -> list[dict]:
    kernel = ROOT / "build" / "kernels" / library / "commchar-kernel"
    if not kernel.exists():
        raise SystemExit(f"warmup_series: no kernel at {kernel}: run `commchar build` first")
    done = subprocess.run([*LAUNCH[library], str(kernel), "--plan", PLAN, *OPTIONS, "--warmup", mode],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    if done.returncode != 0:
        raise SystemExit(f"warmup_series: the {library} kernel failed: {done.stderr.strip()[:300]}")
    return [r for r in map(json.loads, done.stdout.splitlines()) if r.get("type") == "point"]


def mean_ms(points: list[dict], get) -> float:
    return 1e3 * statistics.mean(get(p) for p in points)


def apart(a: list[dict], b: list[dict], signed: bool = False) -> float:
    """Median over points of the relative difference of two runs' medians (a's less b's;
    its absolute value unless `signed`)."""
    key = lambda p: (p["op"], p["variant"], p["n_bytes"])  # noqa: E731
    other = {key(p): statistics.median(p["samples_us"]) for p in b}
    rel = [(statistics.median(p["samples_us"]) - other[key(p)]) / other[key(p)]
           for p in a if other.get(key(p), 0) > 0]
    return statistics.median(rel if signed else map(abs, rel))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for library in args.library.split(","):
        runs: dict[str, list[list[dict]]] = {"point": [], "series": []}
        for _ in range(max(args.repeat, 1)):
            for mode in ("point", "series"):
                runs[mode].append(run(library, mode))
        for mode, results in runs.items():
            points = [p for r in results for p in r]
            steady = sum(p["extra"]["warmup_end"] == "steady" for p in points)
            print(f"{library:8} --warmup {mode:6} {len(results[0])} points a run: point {mean_ms(points, lambda p: p['wall_s']):.3f} ms,"
                  f" warm-up {mean_ms(points, lambda p: p['extra']['warmup_s']):.3f} ms"
                  f" ({steady} of {len(points)} ended steady)")
        ratios = [mean_ms(s, lambda p: p["wall_s"]) / mean_ms(p_, lambda p: p["wall_s"])
                  for p_, s in zip(runs["point"], runs["series"])]
        between = statistics.median(apart(s, p_) for p_, s in zip(runs["point"], runs["series"]))
        signed = statistics.median(apart(s, p_, True) for p_, s in zip(runs["point"], runs["series"]))
        within = statistics.median(apart(a, b) for a, b in zip(runs["point"][1:], runs["point"][:-1])) \
            if args.repeat > 1 else float("nan")
        print(f"{library:8} per-point time series / point: median of {len(ratios)} alternated pairs"
              f" {statistics.median(ratios):.2f} (each {', '.join(f'{r:.2f}' for r in ratios)});"
              f" medians apart between modes {100 * between:.1f}% (series less point {100 * signed:+.1f}%),"
              f" between runs of one mode {100 * within:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
