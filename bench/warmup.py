#!/usr/bin/env python3
"""Per-point cost of the kernel's warm-up, and whether it moves the medians: two settings in turn.

Runs the built kernel (build/kernels/LIBRARY/commchar-kernel, `commchar build`)
at p = 2 at the adaptive rule's precision (3%, 0.1 s at most a point), two
warm-up settings alternated, REPEAT times each:

- `--compare series` (default): `--warmup point` against `--warmup series`, on
  size series below 32 KiB (ping-pong, bcast, allreduce, alltoall, a fence
  put), where the least warm-up of every point is most of its cost;
- `--compare round`: `--warmup-round-time 0.00125` (a round of fewer than 8 calls
  compares only when it lasts a quarter of the 5 ms `--warmup-time`) against
  the default 0.00025, on series of 32 KiB to 4 MiB (ping-pong, bw, allreduce,
  a fence put, accumulate), where a call lasts tens of microseconds to
  milliseconds and 8 calls, or 1.25 ms, is the warm-up's least.

Prints per setting the mean wall time of a point (everything the kernel spends
on it: warm-up, measurement, verification), of its warm-up, and how many
warm-ups ended steady; then the median over the alternated pairs of the ratio
second / first of the mean point time, and how far the two settings' medians
lie apart (the median over points of |t_second - t_first| / t_first, and of its
signed value, beside the same figure for two runs of the first setting: what
the noise alone gives), and the point whose two medians lie farthest apart.

    chrt -f 10 python bench/warmup.py [--compare series|round] [--library mpich,openmpi] [--repeat 5]
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
LARGE = [2 ** k for k in range(15, 23)]  # 32 KiB .. 4 MiB
COLLECTIVE_LARGE = [n for n in LARGE if n <= 1 << 20]


def plan(entries: dict[str, list[int]]) -> str:
    return ";".join(f"{entry}={','.join(map(str, sizes))}" for entry, sizes in entries.items())


# per comparison: the plan, and the two settings (a name and the kernel's options), first against second
COMPARISONS = {
    "series": (plan({"pingpong:send": [0, 1, *SMALL], "bcast": [1, *SMALL], "allreduce:sum": SMALL,
                     "alltoall": SMALL, "put:fence": [1, *SMALL]}),
               (("--warmup point", ["--warmup", "point"]), ("--warmup series", ["--warmup", "series"]))),
    "round": (plan({"pingpong:send": LARGE, "bw": LARGE, "allreduce:sum": COLLECTIVE_LARGE,
                    "put:fence": LARGE, "acc:fence_bw": COLLECTIVE_LARGE}),
              (("--warmup-round-time 0.00125", ["--warmup-round-time", "0.00125"]),
               ("--warmup-round-time 0.00025", ["--warmup-round-time", "0.00025"]))),
}
OPTIONS = ["--precision", "0.03", "--max-time", "0.1"]


def run(library: str, plan_text: str, options: list[str]) -> list[dict]:
    kernel = ROOT / "build" / "kernels" / library / "commchar-kernel"
    if not kernel.exists():
        raise SystemExit(f"warmup: no kernel at {kernel}: run `commchar build` first")
    done = subprocess.run([*LAUNCH[library], str(kernel), "--plan", plan_text, *OPTIONS, *options],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    if done.returncode != 0:
        raise SystemExit(f"warmup: the {library} kernel failed: {done.stderr.strip()[:300]}")
    return [r for r in map(json.loads, done.stdout.splitlines()) if r.get("type") == "point"]


def mean_ms(points: list[dict], get) -> float:
    return 1e3 * statistics.mean(get(p) for p in points)


def differences(a: list[dict], b: list[dict]) -> dict[tuple, float]:
    """Per point, the relative difference of two runs' medians (a's less b's)."""
    key = lambda p: (p["op"], p["variant"], p["n_bytes"])  # noqa: E731
    other = {key(p): statistics.median(p["samples_us"]) for p in b}
    return {key(p): (statistics.median(p["samples_us"]) - other[key(p)]) / other[key(p)]
            for p in a if other.get(key(p), 0) > 0}


def apart(a: list[dict], b: list[dict], signed: bool = False) -> float:
    """Median over points of the relative difference of two runs' medians (a's less b's;
    its absolute value unless `signed`)."""
    rel = list(differences(a, b).values())
    return statistics.median(rel if signed else map(abs, rel))


def farthest(pairs: list[tuple[list[dict], list[dict]]]) -> tuple[tuple, float]:
    """The point whose two settings' medians lie farthest apart in the median pair (second less
    first), and that difference: a median over points hides one point's cold start."""
    per_point: dict[tuple, list[float]] = {}
    for a, b in pairs:
        for point, rel in differences(b, a).items():
            per_point.setdefault(point, []).append(rel)
    point = max(per_point, key=lambda k: abs(statistics.median(per_point[k])))
    return point, statistics.median(per_point[point])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compare", choices=sorted(COMPARISONS), default="series")
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plan_text, settings = COMPARISONS[args.compare]
    (first, _), (second, _) = settings
    for library in args.library.split(","):
        runs: dict[str, list[list[dict]]] = {name: [] for name, _ in settings}
        for _ in range(max(args.repeat, 1)):
            for name, options in settings:
                runs[name].append(run(library, plan_text, options))
        for name, results in runs.items():
            points = [p for r in results for p in r]
            steady = sum(p["extra"]["warmup_end"] == "steady" for p in points)
            print(f"{library:8} {name:22} {len(results[0])} points a run: point {mean_ms(points, lambda p: p['wall_s']):.3f} ms,"
                  f" warm-up {mean_ms(points, lambda p: p['extra']['warmup_s']):.3f} ms"
                  f" ({steady} of {len(points)} ended steady)")
        pairs = list(zip(runs[first], runs[second]))
        ratios = [mean_ms(b, lambda p: p["wall_s"]) / mean_ms(a, lambda p: p["wall_s"]) for a, b in pairs]
        between = statistics.median(apart(b, a) for a, b in pairs)
        signed = statistics.median(apart(b, a, True) for a, b in pairs)
        within = statistics.median(apart(a, b) for a, b in zip(runs[first][1:], runs[first][:-1])) \
            if args.repeat > 1 else float("nan")
        print(f"{library:8} per-point time {second} / {first}: median of {len(ratios)} alternated pairs"
              f" {statistics.median(ratios):.2f} (each {', '.join(f'{r:.2f}' for r in ratios)});"
              f" medians apart between settings {100 * between:.1f}% (second less first {100 * signed:+.1f}%),"
              f" between runs of the first {100 * within:.1f}%")
        (op, variant, n), worst = farthest(pairs)
        print(f"{library:8} farthest apart: {op}{':' + variant if variant else ''} at {n} B, second less first"
              f" {100 * worst:+.1f}% (median of the pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
