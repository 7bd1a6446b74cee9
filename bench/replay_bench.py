#!/usr/bin/env python3
"""Speed and memory of the simulator's trace replay (issue 9: "traces of a million
calls replay in seconds; memory stays bounded").

Writes a synthetic trace (commchar.trace.synthetic: pairs of ranks computing and
exchanging 1 KiB eager and 256 KiB rendezvous messages, an Allreduce every 100
iterations, a Pcontrol phase mark), then runs `commchar-sim --replay` on it and
prints the calls, the simulator's events, the wall time of the whole run (parsing
the trace included), the CPU time and the peak resident memory of the child
(kernel-measured, resource.getrusage of the children).

    python3 bench/replay_bench.py                   # 1 M calls, p = 2
    python3 bench/replay_bench.py --calls 4000000 --p 8
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINARY = ROOT / "sim" / "target" / "release" / "commchar-sim"
sys.path.insert(0, str(ROOT / "src"))

from commchar.trace.synthetic import exchange_program  # noqa: E402


def run(trace: Path, extra: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(BINARY), "--replay", str(trace), "--json", "--unit", "us", "--S", "65535",
                           *extra], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"replay_bench: the replay failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_rss_mib": after.ru_maxrss / 1024,  # the largest child so far, KiB on Linux
        "events": result["events"],
        "messages": result["messages"],
        "rendezvous": result["rendezvous_messages"],
        "sim_wall_s": result["performance"]["wall_s"],
        "makespan_us": result["makespan"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000, help="MPI calls in the trace (default 1M)")
    parser.add_argument("--p", type=int, default=2, help="ranks, even (default 2)")
    args = parser.parse_args()
    if args.calls < 1 or args.p < 2 or args.p % 2:
        parser.error("--calls must be >= 1 and --p an even number >= 2")
    if not BINARY.is_file():
        raise SystemExit(f"replay_bench: {BINARY} not found: run `make sim`")
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
        trace = Path(tmp) / "trace"
        per_iteration = 2.01  # two point-to-point calls per rank, an Allreduce every 100 iterations
        iterations = max(1, round(args.calls / (args.p * per_iteration)))
        t0 = time.perf_counter()
        calls = exchange_program(trace, p=args.p, iterations=iterations, allreduce_every=100)
        written = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in trace.iterdir())
        print(f"trace: {calls} calls on {args.p} ranks, {size / 2**20:.1f} MiB, written in {written:.1f} s")
        for mode in ("expanded", "charged"):
            extra = ["--collectives", mode]
            if mode == "charged":
                costs = Path(tmp) / "costs.json"
                costs.write_text(json.dumps({"format": "commchar-replay-costs", "unit": "us", "collectives": [
                    {"call": "allreduce", "p": args.p, "n": 64, "cost": 5.0}]}))
                extra += ["--replay-costs", str(costs)]
            r = run(trace, extra)
            print(f"collectives {mode:8}  wall {r['wall_s']:.2f} s (simulator's own {r['sim_wall_s']:.2f} s, "
                  f"parsing included)  cpu {r['cpu_s']:.2f} s  peak memory {r['peak_rss_mib']:.0f} MiB  "
                  f"events {r['events']}  messages {r['messages']} ({r['rendezvous']} rendezvous)  "
                  f"{calls / r['wall_s'] / 1e6:.2f} M calls/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
