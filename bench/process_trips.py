#!/usr/bin/env python3
"""Wall time of `commchar replay` and `commchar fit` against a baseline checkout: the
simulator processes each command starts, and what they cost.

`commchar replay` lists the trace's collective signatures, then replays it under LogGPS
and LogGP; `commchar fit` calibrates each library's collective call costs by simulating
every measured size. This code answers all of a command's runs from one simulator
process (`commchar-sim --batch`, docs/simulator.md). The bench runs both commands with
this checkout and with the baseline's, alternated, and prints each one's median wall time,
the median of the per-round baseline/this ratios, and the simulator processes each
started (counted in a separate, untimed pass through a wrapper). A prediction or a
call-cost section that differs between the two is a failure (exit 1).

    git archive main | tar -x -C /tmp/base31
    cargo build --release --manifest-path /tmp/base31/sim/Cargo.toml
    python3 bench/process_trips.py --baseline /tmp/base31 [--rounds 5] [--calls 100000] [--db RUN.db]
    python3 bench/process_trips.py --baseline /tmp/base31 --only replay --model MODEL.json   # no run, no fit

The trace is synthetic (commchar.trace.synthetic: 4 ranks in pairs exchanging 1 KiB
and 256 KiB messages, an Allreduce every 100 iterations). The fitted run is --db, else a
run this bench measures first: `commchar run --np 2 --max-time 0.02 --precision 0.2
--no-refine`, every library found, the default operations and sizes (calibration
simulates each size; the time spent per point does not change what fit does).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.trace.synthetic import exchange_program  # noqa: E402  (the path above first)


def commchar(tree: Path, args: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Runs `commchar ARGS` with the package and simulator of checkout `tree`: (wall s, stdout)."""
    environ = {**os.environ, "PYTHONPATH": str(tree / "src")}
    environ.pop("COMMCHAR_SIM", None)  # each checkout's own build
    environ.update(env or {})
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          env=environ, cwd=tree, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"process_trips: commchar {' '.join(args)} in {tree} failed: "
                         f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return wall, done.stdout


def binary(tree: Path) -> Path:
    """The checkout's `cargo build --release` simulator (a profile-optimized build newer than
    it would be taken instead by that checkout's commchar: build the same kind on both sides)."""
    path = tree / "sim" / "target" / "release" / "commchar-sim"
    if path.is_file():
        return path
    raise SystemExit(f"process_trips: no simulator built in {tree}: "
                     f"cargo build --release --manifest-path {tree}/sim/Cargo.toml")


def predictions(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)
    return {name: {"makespan": p["makespan"], "ranks": [r["predicted"] for r in p["ranks"]]}
            for name, p in doc["predictions"].items()}


def call_costs(path: Path) -> dict[str, Any]:
    model = json.loads(path.read_text())
    return {lib: (sec.get("loggp") or {}).get("call_costs") for lib, sec in model["libraries"].items()}


def count_processes(tree: Path, args: list[str], tmp: Path) -> int:
    """The simulator processes one command starts, through a wrapper that notes each start."""
    log = tmp / f"starts-{tree.name}"
    log.write_text("")
    wrapper = tmp / f"sim-{tree.name}"
    wrapper.write_text(f"#!/bin/sh\necho start >> '{log}'\nexec '{binary(tree)}' \"$@\"\n")
    wrapper.chmod(0o755)
    commchar(tree, args, env={"COMMCHAR_SIM": str(wrapper)})
    return len(log.read_text().splitlines())


def measured_run(tmp: Path) -> Path:
    db = tmp / "run.db"
    print("measuring a run for fit (commchar run --np 2 --max-time 0.02 --precision 0.2 --no-refine) ...",
          flush=True)
    commchar(ROOT, ["run", "--db", str(db), "--np", "2", "--max-time", "0.02", "--precision", "0.2",
                    "--no-refine"])
    return db


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="checkout to compare with (built simulator)")
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds (default 5)")
    parser.add_argument("--calls", type=int, default=100_000, help="MPI calls in the replayed trace")
    parser.add_argument("--db", type=Path, help="the run to fit (default: one measured first)")
    parser.add_argument("--only", choices=("replay", "fit"), help="time one command only")
    parser.add_argument("--model", type=Path,
                        help="the model to replay with (default: the baseline's fit of the run)")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this": ROOT}
    for tree in trees.values():
        binary(tree)
    with tempfile.TemporaryDirectory(prefix="process-trips-") as tmpdir:
        tmp = Path(tmpdir)
        need_run = args.only != "replay" or args.model is None
        db = (args.db or measured_run(tmp)).resolve() if need_run else None
        model = tmp / "model.json"
        if args.model is not None:
            model = args.model.resolve()
        else:
            commchar(trees["baseline"], ["fit", "--db", str(db), "-o", str(model)])
        trace = tmp / "trace"
        # 4 ranks, 2 exchange calls an iteration plus an Allreduce every 100
        calls = exchange_program(trace, p=4, iterations=max(args.calls * 100 // (4 * 201), 1),
                                 allreduce_every=100)
        commands = {
            "replay": ["replay", "--dir", str(trace), "--model", str(model), "--library", "openmpi", "--json"],
            "fit": ["fit", "--db", str(db), "-o", str(tmp / "{side}.json")],
        }
        if args.only:
            commands = {args.only: commands[args.only]}
        walls: dict[tuple[str, str], list[float]] = {(c, s): [] for c in commands for s in trees}
        answers: dict[tuple[str, str], Any] = {}
        for _ in range(args.rounds):
            for command, template in commands.items():
                for side, tree in trees.items():  # the baseline first in every round
                    argv = [a.replace("{side}", side) for a in template]
                    wall, out = commchar(tree, argv)
                    walls[command, side].append(wall)
                    answers[command, side] = predictions(out) if command == "replay" else \
                        call_costs(tmp / f"{side}.json")
        print(f"trace: {calls} calls, 4 ranks; model: {model if args.model else f'fit of {db}'}; "
              f"{args.rounds} rounds, alternated")
        print(f"{'command':8} {'baseline s':>10} {'this s':>8} {'ratio':>6} {'processes':>12}  same answer")
        failed = False
        for command, template in commands.items():
            argv = [a.replace("{side}", "count") for a in template]
            starts = {side: count_processes(tree, argv, tmp) for side, tree in trees.items()}
            base, this = walls[command, "baseline"], walls[command, "this"]
            ratio = statistics.median(b / t for b, t in zip(base, this))
            same = answers[command, "baseline"] == answers[command, "this"]
            failed |= not same
            print(f"{command:8} {statistics.median(base):10.3f} {statistics.median(this):8.3f} {ratio:6.2f} "
                  f"{starts['baseline']:>5} -> {starts['this']:<4}  {'yes' if same else 'NO: DIFFERS'}")
        print("ratio: the median over the rounds of baseline wall / this wall (above 1: this is faster)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
