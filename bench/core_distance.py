#!/usr/bin/env python3
"""How much the distance of ranks 0 and 1's cores moves a time on this machine.

Runs `commchar run --ops pingpong:send` at a few sizes again and again, the
libraries alternated, for --rounds rounds; every point carries the round trip
of a cache line between the two ranks' cores before and after it (the
kernel's `core_rtt_ns`). Splits the points into the host's states as
`commchar fit` does (commchar.core_distance) and prints, per state, the round
trip and, per library and size, the median time of `pingpong:send` and the
ratio of the states: what a model measured in one state makes of a program run
in another.

    python3 bench/core_distance.py [--library mpich,openmpi] [--rounds 20] [--sizes 256,4K,32K]
    python3 bench/core_distance.py --from-db DB      (the pingpong:send points of a store, nothing run)
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

from commchar.core_distance import rtt_pair, split  # noqa: E402
from commchar.store import Store  # noqa: E402


def measure(db: Path, libraries: list[str], rounds: int, sizes: str) -> float:
    started = time.monotonic()
    for r in range(rounds):
        for library in libraries:
            subprocess.run([sys.executable, "-m", "commchar", "run", "--db", str(db), "--library", library,
                            "--np", "2", "--ops", "pingpong:send", "--sizes", sizes, "--no-refine",
                            "--precision", "0.02", "--max-time", "0.1"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        print(f"round {r + 1}/{rounds}", file=sys.stderr, end="\r")
    return time.monotonic() - started


def report(db: Path) -> int:
    points = [pt for pt in Store(db).points() if pt.get("valid", True) and pt["op"] == "pingpong"
              and (pt.get("variant") or "") == "send"]
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
    groups: dict[tuple[str, int], dict[int, list[float]]] = {}
    for pt, pair in pairs:
        state = states.state_of(pair)
        if state is not None:
            groups.setdefault((pt["library"], int(pt["n_bytes"])), {}).setdefault(state, []).append(pt["t_us"])
    count = len(states.members)
    print(f"{'library':8s} {'bytes':>7s} " + " ".join(f"{f'state {i} (us)':>13s} {'n':>3s}" for i in range(count))
          + f" {'largest/smallest':>16s}")
    for (library, n), by_state in sorted(groups.items()):
        medians = {i: statistics.median(v) for i, v in by_state.items()}
        cells = " ".join(f"{medians[i]:13.3f} {len(by_state[i]):3d}" if i in by_state else f"{'-':>13s} {0:3d}"
                         for i in range(count))
        ratio = max(medians.values()) / min(medians.values()) if len(medians) > 1 else float("nan")
        print(f"{library:8s} {n:7d} {cells} {ratio:16.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--sizes", default="256,4K,32K")
    parser.add_argument("--from-db", type=Path)
    args = parser.parse_args()
    if args.from_db:
        return report(args.from_db)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "distance.db"
        seconds = measure(db, [s for s in args.library.split(",") if s], args.rounds, args.sizes)
        print(f"{args.rounds} rounds in {seconds:.0f} s")
        return report(db)


if __name__ == "__main__":
    sys.exit(main())
