#!/usr/bin/env python3
"""Speed and memory of the simulator's trace replay (the target: traces of a million
calls replay in seconds; memory stays bounded).

Writes a synthetic trace (commchar.trace.synthetic: pairs of ranks computing and
exchanging 1 KiB eager and 256 KiB rendezvous messages, an Allreduce every 100
iterations, a Pcontrol phase mark), then runs `commchar-sim --replay` on it and
prints the calls, the simulator's events, the wall time of the whole run (parsing
the trace included), the CPU time of the child (resource.getrusage) and its
peak resident memory (the simulator's own VmHWM, as the kernel counts it).

    python3 bench/replay_bench.py                   # 1 M calls, p = 2
    python3 bench/replay_bench.py --calls 4000000 --p 8
    python3 bench/replay_bench.py --baseline path/to/old/commchar-sim [--rounds 5]

It runs the build commchar runs (the newer of the plain and the
profile-optimized one; COMMCHAR_SIM=path picks another). With --baseline, each
mode runs the baseline and this build in turn --rounds times and prints the
median of the baseline/this CPU-time ratios (bench/build_compare.py); a
makespan that differs between the two is a failure (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from build_compare import alternate  # noqa: E402  (bench/, the script's own directory)
from commchar.simulate.binary import default_binary  # noqa: E402  (the path above first)
from commchar.trace.synthetic import exchange_program, write_allreduce_costs  # noqa: E402

BINARY = Path(os.environ.get("COMMCHAR_SIM") or default_binary())


def run(trace: Path, extra: list[str], binary: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(binary), "--replay", str(trace), "--json", "--unit", "us", "--S", "65535",
                           *extra], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"replay_bench: the replay failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        # the simulator's own VmHWM (RUSAGE_CHILDREN's maxrss is the largest child so far)
        "peak_rss_mib": (result["performance"]["peak_rss_bytes"] or 0) / 2**20,
        "events": result["events"],
        "messages": result["messages"],
        "rendezvous": result["rendezvous_messages"],
        "sim_wall_s": result["performance"]["wall_s"],
        "makespan": result["makespan"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000, help="MPI calls in the trace (default 1M)")
    parser.add_argument("--p", type=int, default=2, help="ranks, even (default 2)")
    parser.add_argument("--baseline", type=Path, help="another build to run in turn with this one")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: runs of each (default 3)")
    args = parser.parse_args()
    if args.calls < 1 or args.p < 2 or args.p % 2 or args.rounds < 1:
        parser.error("--calls and --rounds must be >= 1 and --p an even number >= 2")
    for binary in (BINARY, args.baseline):
        if binary is not None and not binary.is_file():
            print(f"replay_bench: {binary} is missing{': run `make sim`' if binary == BINARY else ''}",
                  file=sys.stderr)
            return 2
    failures = []
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
                costs = write_allreduce_costs(Path(tmp) / "costs.json", args.p)
                extra += ["--replay-costs", str(costs)]
            versus = ""
            if args.baseline is None:
                r = run(trace, extra, BINARY)
            else:
                compared = alternate(lambda binary: run(trace, extra, binary), BINARY, args.baseline, args.rounds)
                r, versus = compared.ours, compared.describe("peak_rss_mib", "MiB")
                if not compared.same_makespan:
                    failures.append(f"collectives {mode}: the makespan differs from the baseline's")
            print(f"collectives {mode:8}  wall {r['wall_s']:.2f} s (simulator's own {r['sim_wall_s']:.2f} s, "
                  f"parsing included)  cpu {r['cpu_s']:.2f} s  peak memory {r['peak_rss_mib']:.0f} MiB  "
                  f"events {r['events']}  messages {r['messages']} ({r['rendezvous']} rendezvous)  "
                  f"{calls / r['wall_s'] / 1e6:.2f} M calls/s{versus}", flush=True)
    for failure in failures:
        print(f"FAILED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
