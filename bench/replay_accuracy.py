#!/usr/bin/env python3
"""Measured against predicted time of a traced program (the target: "the LogGPS
prediction of a traced program that mixes computation with eager and
rendezvous messages is within 10% of its measured time", per library).

Builds tests/programs/replay_mix.c for each MPI library, traces it ROUNDS
times with the libraries alternating within each round (the machine's drift
lands on both alike), replays every trace under the model file's LogGPS and
LogGP parameters, and prints each run's error, per phase, and the median error
per library and model with the 10% target.

    commchar run --np 2 --db cal.db && commchar fit --db cal.db -o model.json
    python3 bench/replay_accuracy.py --model model.json
    python3 bench/replay_accuracy.py --model model.json --rounds 7 --iterations 400 --bytes 1048576
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.measure.libraries import discover  # noqa: E402

PROGRAM = ROOT / "tests" / "programs" / "replay_mix.c"
TARGET = 10.0


def commchar(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="model file fitted on this machine (commchar fit)")
    parser.add_argument("--rounds", type=int, default=5, help="traced runs per library (default 5)")
    parser.add_argument("--iterations", type=int, default=400, help="replay_mix iterations (default 400)")
    parser.add_argument("--compute-us", type=float, default=200.0, help="computation per iteration (200)")
    parser.add_argument("--bytes", type=int, default=1 << 20, help="rendezvous message size (1 MiB)")
    parser.add_argument("--libraries", default="openmpi,mpich")
    parser.add_argument("--db", help="keep the traces in this store (default: a temporary one)")
    args = parser.parse_args()
    if args.rounds < 1 or args.iterations < 1:
        parser.error("--rounds and --iterations must be at least 1")
    wanted = args.libraries.split(",")
    found = {lib.name: lib for lib in discover() if lib.name in wanted}
    missing = [name for name in wanted if name not in found]
    if missing:
        print(f"replay_accuracy: not installed: {', '.join(missing)}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="replay-accuracy-") as tmp:
        db = args.db or str(Path(tmp) / "traces.db")
        programs = {}
        for name, lib in found.items():
            programs[name] = Path(tmp) / f"replay_mix_{name}"
            subprocess.run([lib.mpicc, "-std=c11", "-O2", "-o", str(programs[name]), str(PROGRAM)],
                           check=True, capture_output=True)
        errors: dict[tuple[str, str], list[float]] = {}
        phase_errors: dict[tuple[str, int], list[float]] = {}
        for round_ in range(args.rounds):
            for name in wanted:
                traced = commchar("trace", "--db", db, "--library", name, "--np", "2", "--timeout", "300", "--",
                                  str(programs[name]), str(args.iterations), str(args.compute_us), str(args.bytes))
                if traced.returncode != 0:
                    print(f"replay_accuracy: tracing {name} failed: {traced.stderr.strip()[-300:]}",
                          file=sys.stderr)
                    return 1
                trace_id = _latest_trace(db)
                done = commchar("replay", "--db", db, "--trace", str(trace_id), "--model", args.model,
                                "--library", name, "--json")
                if done.returncode != 0:
                    print(f"replay_accuracy: replay of {name} failed: {done.stderr.strip()[-300:]}",
                          file=sys.stderr)
                    return 1
                doc = json.loads(done.stdout)
                line = [f"round {round_ + 1} {name:8s} trace {trace_id:3d} measured "
                        f"{doc['measured']['makespan'] / 1e3:8.2f} ms"]
                for model, pred in doc["predictions"].items():
                    errors.setdefault((name, model), []).append(pred["error_pct"])
                    line.append(f"{model} {pred['error_pct']:+6.1f}%")
                slowest = max(doc["predictions"]["loggps"]["ranks"], key=lambda r: r["measured"])
                for ph in slowest["phases"]:
                    if ph["level"]:
                        phase_errors.setdefault((name, ph["level"]), []).append(ph["error_pct"])
                        line.append(f"phase {ph['level']} {ph['error_pct']:+6.1f}%")
                print("  ".join(line), flush=True)
    ok = True
    for name in wanted:
        for model in ("loggps", "loggp"):
            values = errors[(name, model)]
            median = statistics.median(values)
            verdict = ""
            if model == "loggps":
                met = abs(median) <= TARGET
                ok &= met
                verdict = f"; target |median| <= {TARGET:g}%: {'met' if met else 'NOT met'}"
            print(f"{name:8s} {model:6s} median error {median:+6.1f}% over {len(values)} runs "
                  f"(range {min(values):+.1f} to {max(values):+.1f}){verdict}")
        for level in sorted({lv for (n, lv) in phase_errors if n == name}):
            print(f"{name:8s} phase {level} loggps median error {statistics.median(phase_errors[(name, level)]):+6.1f}%")
    return 0 if ok else 1


def _latest_trace(db: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("select max(id) from traces").fetchone()[0])


if __name__ == "__main__":
    sys.exit(main())
