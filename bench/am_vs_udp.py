#!/usr/bin/env python3
"""The active-message layer against bare UDP on the same sockets, side by side in one run.

Three ratios, each the median over rounds of one A/B pair run back to back
(the order alternates from round to round, as these machines are noisy):

- round trip: cc_am one-word request + reply / a minimal UDP ping-pong of
  8-byte datagrams (bar: at most 1.10);
- bulk bandwidth: cc_am blocking stores of --burst KiB (default 2048) / a
  minimal UDP stream sending the same bytes in datagrams of cc_am's packet
  size, back to back, in bursts the receiver times (bar: at least 0.90);
- throughput under loss: the same stores with 1% of datagrams dropped / without,
  as means over 100 stores (most stores see no loss, so here the mean, not a
  quartile) (bar: at least 0.50).

Each program reports the median of single round trips, or the upper quartile
of per-store or per-burst rates: on a loaded machine a long mean measures the
scheduler, and a bulk transfer loses its core often enough to move even the
median (the same statistic on both sides).
Both sides of a pair run pinned one process per core, as mpirun binds two
ranks, and poll the same way (busy; after CC_AM_YIELD_AFTER_US, default
1000, without a datagram they give the core away once). The programs are
am/bench/*.c, built here with make. `--sweep` also measures bandwidth with and
without loss for several chunk sizes (how the defaults were chosen).

    python bench/am_vs_udp.py [--rounds 9] [--burst 2048] [--sweep 4,8,16,32]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "am" / "bench"
PROGRAMS = ("am-bench", "udp-pingpong", "udp-stream")
BARS = {"round trip": ("<=", 1.10), "bandwidth": (">=", 0.90), "1% loss": (">=", 0.50)}


def build() -> None:
    targets = [str(BUILD / name) for name in PROGRAMS]
    subprocess.run(["make", "-s", "-C", str(ROOT / "am"), f"BUILD={BUILD}", *targets], check=True)


def measure(program: str, *args: str, env: dict[str, str] | None = None, field: int = 1) -> float:
    """The program's figure: its first number, or another (am-bench bw prints the upper
    quartile of per-store rates, then their mean)."""
    out = subprocess.run([str(BUILD / program), *args], capture_output=True, text=True, check=True,
                         timeout=600, env={**os.environ, **(env or {})}).stdout
    return float(out.split()[field])


def pair(a, b, flip: bool) -> tuple[float, float]:
    if flip:
        vb = b()
        return a(), vb
    va = a()
    return va, b()


def compare(rounds: int, burst: int) -> dict:
    kib = str(burst)
    series: dict[str, list[tuple[float, float]]] = {name: [] for name in BARS}
    for r in range(rounds):
        flip = r % 2 == 1
        series["round trip"].append(pair(lambda: measure("am-bench", "rtt", "15", "1000"),
                                         lambda: measure("udp-pingpong", "15", "1000"), flip))
        series["bandwidth"].append(pair(lambda: measure("am-bench", "bw", "40", kib),
                                        lambda: measure("udp-stream", "40", kib), flip))
        series["1% loss"].append(pair(
            lambda: measure("am-bench", "bw", "100", kib, env={"CC_AM_LOSS": "0.01"}, field=2),
            lambda: measure("am-bench", "bw", "100", kib, field=2), flip))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    return {name: {"ratio": statistics.median(a / b for a, b in values),
                   "a": statistics.median(a for a, _ in values),
                   "b": statistics.median(b for _, b in values)}
            for name, values in series.items()}


def sweep(chunks: list[int], rounds: int, burst: int) -> dict[int, tuple[float, float]]:
    results: dict[int, tuple[list[float], list[float]]] = {c: ([], []) for c in chunks}
    for _ in range(rounds):
        for c in chunks:
            env = {"CC_AM_CHUNK_PACKETS": str(c)}
            results[c][0].append(measure("am-bench", "bw", "40", str(burst), env=env))
            results[c][1].append(measure("am-bench", "bw", "100", str(burst),
                                         env={**env, "CC_AM_LOSS": "0.01"}, field=2))
    return {c: (statistics.median(a), statistics.median(b)) for c, (a, b) in results.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--burst", type=int, default=2048, help="KiB per store and per UDP burst")
    parser.add_argument("--sweep", help="chunk sizes in packets, e.g. 8,16,32,64")
    args = parser.parse_args()
    if args.rounds < 1 or args.burst < 64:
        parser.error("--rounds must be positive and --burst at least 64 (KiB)")
    build()
    units = {"round trip": "us", "bandwidth": "MB/s", "1% loss": "MB/s"}
    labels = {"round trip": ("cc_am rtt", "udp rtt"), "bandwidth": ("cc_am bw", "udp stream"),
              "1% loss": ("cc_am bw at 1% loss", "cc_am bw")}
    worst = 0
    for name, value in compare(args.rounds, args.burst).items():
        op, bar = BARS[name]
        ok = value["ratio"] <= bar if op == "<=" else value["ratio"] >= bar
        worst |= not ok
        a, b = labels[name]
        print(f"{name:10s} ratio {value['ratio']:.3f} (bar {op} {bar:.2f}: {'met' if ok else 'MISSED'})"
              f"   {a} {value['a']:.2f} {units[name]}, {b} {value['b']:.2f} {units[name]}")
    if args.sweep:
        chunks = [int(c) for c in args.sweep.split(",")]
        print("chunk packets   bw MB/s (upper quartile)   mean bw at 1% loss MB/s   (medians over rounds)")
        for c, (bw, lossy) in sweep(chunks, args.rounds, args.burst).items():
            print(f"{c:13d} {bw:24.1f} {lossy:25.1f}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
