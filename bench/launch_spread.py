#!/usr/bin/env python3
"""How far a point moves from one launch to the next, against two passes of one launch.

Launches the kernel --launches times in a row with one plan that measures every
point twice (the plan's entries given twice: the second pass follows the first
in the same processes), and prints per library the relative difference of the
points' medians between the two passes of a launch, and between the first
passes of every two launches (median and 90th percentile over sizes and
pairs), and per launch the cores' round trip (the kernel's `core_rtt_ns`: a
launch faster or slower in the same state of the cores moved for another
reason). A fit, an adaptive round or a validation program is a launch of its
own, so the second figure is what a model can be held to across them, and the
first what one launch's points agree on.

    python3 bench/launch_spread.py [--library mpich,openmpi] [--launches 8]
        [--ops pingpong:send,bcast] [--sizes 64,256,1K,4K,16K,64K,256K] [--precision 0.01]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.measure.build import ensure_kernel  # noqa: E402
from commchar.measure.launch import LaunchSpec, job_command  # noqa: E402
from commchar.measure.libraries import discover  # noqa: E402
from commchar.measure.plan import parse_sizes  # noqa: E402

Key = tuple[str, str, int]


def one_launch(argv: list[str], env: dict[str, str]) -> tuple[dict[Key, list[float]], list[float]]:
    """Each point's medians in the order measured (two passes), and every core round trip."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env={**os.environ, **env})
    if done.returncode != 0:
        raise SystemExit(f"launch_spread: the kernel exited {done.returncode}: {done.stderr.strip()[-300:]}")
    medians: dict[Key, list[float]] = {}
    rtts: list[float] = []
    for line in done.stdout.splitlines():
        if not line.startswith("{"):
            continue
        message = json.loads(line)
        if message.get("type") != "point" or not message.get("samples_us"):
            continue
        key = (message["op"], message.get("variant", ""), int(message["n_bytes"]))
        medians.setdefault(key, []).append(statistics.median(message["samples_us"]))
        rtts += [float(v) for v in (message.get("extra") or {}).get("core_rtt_ns") or []]
    return medians, rtts


def relative(a: float, b: float) -> float:
    return abs(a - b) / min(a, b)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--launches", type=int, default=8)
    parser.add_argument("--ops", default="pingpong:send,bcast")
    parser.add_argument("--sizes", default="64,256,1K,4K,16K,64K,256K")
    parser.add_argument("--precision", type=float, default=0.01)
    args = parser.parse_args()
    if args.launches < 2:
        parser.error("--launches: at least 2")
    sizes = ",".join(str(n) for n in parse_sizes(args.sizes))
    entries = ";".join(f"{op}={sizes}" for op in args.ops.split(","))
    plan = f"{entries};{entries}"  # every point twice, in the same processes
    libraries = {lib.name: lib for lib in discover()}
    for name in args.library.split(","):
        library = libraries.get(name)
        if library is None:
            print(f"{name:8} not found: skipped")
            continue
        job = job_command(library, LaunchSpec(), 2, ensure_kernel(library),
                          ["--plan", plan, "--precision", repr(args.precision)])
        env = {**job.env_added, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        launches = [one_launch(job.argv, env) for _ in range(args.launches)]
        keys = sorted(set.intersection(*(set(k for k, v in m.items() if len(v) == 2) for m, _ in launches)))
        if not keys:
            print(f"{name:8} no point was measured twice in every launch: nothing to compare")
            continue
        within = [relative(*m[k]) for m, _ in launches for k in keys]
        across = [relative(a[k][0], b[k][0]) for (a, _), (b, _) in itertools.combinations(launches, 2)
                  for k in keys]
        print(f"{name:8} {args.launches} launches, {len(keys)} points twice each: between the two passes"
              f" of a launch {100 * statistics.median(within):.1f}% (median; p90"
              f" {100 * quantile(within, 0.9):.1f}%), between launches {100 * statistics.median(across):.1f}%"
              f" (p90 {100 * quantile(across, 0.9):.1f}%)")
        for i, (m, rtts) in enumerate(launches):
            # each launch against the median launch: one faster or slower everywhere shows here
            ratio = statistics.median(m[k][0] / statistics.median(x[k][0] for x, _ in launches) for k in keys)
            rtt = f"{statistics.median(rtts):.0f} ns ({min(rtts):.0f}-{max(rtts):.0f})" if rtts else "-"
            print(f"  launch {i + 1}: times x{ratio:.3f} of the median launch's (median over points),"
                  f" cores' round trip {rtt}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
