#!/usr/bin/env python3
"""How much the distance of ranks 0 and 1's cores, and a core the host slows, move a time on this machine.

Runs `commchar run --ops pingpong:send` (or --ops) at a few sizes again and
again, the libraries alternated, for --rounds rounds; every point carries the
round trip of a cache line between the two ranks' cores before and after it
(the kernel's `core_rtt_ns`) and the slower rank's copy of 4 KiB within its
L1 cache (`core_copy_ns`). Splits the points into the host's states as
`commchar fit` does (commchar.core_distance) and prints, per state, the round
trip and, per library, operation and size, the median time and the ratio of
the states: what a model measured in one state makes of a program run in
another. Then, within the main state, the points whose copy ran on full-speed
cores against those on a slowed core (core_distance.slowed), and their ratio.

    python3 bench/core_distance.py [--library mpich,openmpi] [--rounds 20] [--sizes 256,4K,32K] [--ops pingpong:send]
    python3 bench/core_distance.py --from-db DB [--ops pingpong:send,alltoall]   (a store's points, nothing run)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.core_distance import SLOWED, copy_floor, copy_pair, rtt_pair, slowed, split  # noqa: E402
from commchar.store import Store  # noqa: E402


def measure(db: Path, libraries: list[str], rounds: int, sizes: str, ops: str) -> float:
    started = time.monotonic()
    for r in range(rounds):
        for library in libraries:
            subprocess.run([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", library,
                            "--np", "2", "--ops", ops, "--sizes", sizes, "--no-refine",
                            "--precision", "0.02", "--max-time", "0.1"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        print(f"round {r + 1}/{rounds}", file=sys.stderr, end="\r")
    return time.monotonic() - started


def _label(pt: dict) -> str:
    return f"{pt['op']}:{pt['variant']}" if pt.get("variant") else pt["op"]


def report(db: Path, ops: str) -> int:
    wanted = {o for o in ops.split(",") if o}
    points = [pt for pt in Store(db).points() if pt.get("valid", True) and (_label(pt) in wanted or pt["op"] in wanted)]
    pairs = [(pt, rtt_pair(pt.get("extra"))) for pt in points]
    pairs = [(pt, pair) for pt, pair in pairs if pair is not None]
    states = split(pair for _, pair in pairs)
    if states is None:
        print("no point carries the cores' round trip (ranks 0 and 1 on different hosts, or an older kernel)")
        return 1
    print(f"{len(pairs)} points; the cores' round trip per state (ns, median, range): "
          + "; ".join(f"state {i}: {statistics.median(m):.0f} ({min(m):.0f}-{max(m):.0f}), {len(m)} points"
                      for i, m in enumerate(states.members))
          + (f"; {states.changed} moved during the point" if states.changed else ""))
    groups: dict[tuple[str, str, int], dict[int, list[float]]] = {}
    for pt, pair in pairs:
        state = states.state_of(pair)
        if state is not None:
            groups.setdefault((pt["library"], _label(pt), int(pt["n_bytes"])), {}).setdefault(state, []).append(
                pt["t_us"])
    count = len(states.members)
    print(f"{'library':8s} {'operation':18s} {'bytes':>7s} "
          + " ".join(f"{f'state {i} (us)':>13s} {'n':>3s}" for i in range(count)) + f" {'largest/smallest':>16s}")
    for (library, op, n), by_state in sorted(groups.items()):
        medians = {i: statistics.median(v) for i, v in by_state.items()}
        cells = " ".join(f"{medians[i]:13.3f} {len(by_state[i]):3d}" if i in by_state else f"{'-':>13s} {0:3d}"
                         for i in range(count))
        ratio = max(medians.values()) / min(medians.values()) if len(medians) > 1 else float("nan")
        print(f"{library:8s} {op:18s} {n:7d} {cells} {ratio:16.2f}")
    return report_slowed([(pt, pair) for pt, pair in pairs if states.state_of(pair) == states.main()])


def report_slowed(pairs: list[tuple[dict, tuple[float, float]]]) -> int:
    """Within the main state: per library, operation and size, the median time on full-speed cores
    and on a slowed one (against the floor of the library's copies)."""
    copies: dict[str, list[tuple[float, float]]] = {}
    for pt, _ in pairs:
        if (copy := copy_pair(pt.get("extra"))) is not None:
            copies.setdefault(pt["library"], []).append(copy)
    if not copies:
        print("no point carries the ranks' copy within L1 (an older kernel)")
        return 0
    floors = {library: copy_floor(found) for library, found in copies.items()}
    print("the main state's points by the slower rank's copy of 4 KiB within L1 (floor: "
          + ", ".join(f"{library} {floor:.1f} ns" for library, floor in sorted(floors.items()) if floor)
          + f"; slowed: beyond {SLOWED:g} times it)")
    groups: dict[tuple[str, str, int], tuple[list[float], list[float]]] = {}
    for pt, _ in pairs:
        copy = copy_pair(pt.get("extra"))
        if copy is None:
            continue
        cell = groups.setdefault((pt["library"], _label(pt), int(pt["n_bytes"])), ([], []))
        cell[slowed(copy, floors[pt["library"]])].append(pt["t_us"])
    print(f"{'library':8s} {'operation':18s} {'bytes':>7s} {'full speed (us)':>15s} {'n':>3s} {'slowed (us)':>12s} "
          f"{'n':>3s} {'slowed/full':>11s}")
    ratios: dict[str, list[float]] = {}
    for (library, op, n), (full, slow) in sorted(groups.items()):
        a = statistics.median(full) if full else None
        b = statistics.median(slow) if slow else None
        ratio = b / a if a and b else None
        if ratio is not None:
            ratios.setdefault(library, []).append(ratio)
        print(f"{library:8s} {op:18s} {n:7d} {a if a is not None else float('nan'):15.3f} {len(full):3d} "
              f"{b if b is not None else float('nan'):12.3f} {len(slow):3d} "
              f"{ratio if ratio is not None else float('nan'):11.2f}")
    for library, values in sorted(ratios.items()):
        print(f"{library}: slowed/full over {len(values)} sizes with both, median {statistics.median(values):.2f} "
              f"({min(values):.2f} to {max(values):.2f})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--sizes", default="256,4K,32K")
    parser.add_argument("--ops", default="pingpong:send")
    parser.add_argument("--from-db", type=Path)
    args = parser.parse_args()
    if args.from_db:
        return report(args.from_db, args.ops)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "distance.db"
        seconds = measure(db, [s for s in args.library.split(",") if s], args.rounds, args.sizes, args.ops)
        print(f"{args.rounds} rounds in {seconds:.0f} s")
        return report(db, args.ops)


if __name__ == "__main__":
    sys.exit(main())
