#!/usr/bin/env python3
"""What a lower floor of samples would have cost a stored run: its points replayed on their own samples.

For every point of a run's store that stopped by meeting its precision, the
kernel's stopping rule (docs/kernel-protocol.md: a first chunk of the floor, then
chunks growing 1.5x, a stop once the order-statistic 95% CI of the median lies
within the point's target) is replayed on its stored samples, in the order they
were measured, with the floor `--min-reps` for the sizes of `--from-bytes` or
more. Prints the time of the samples the lower floor would have left unmeasured
(a repetition is the sample times the messages it stands for: two for a
ping-pong's half round trip, the window for a bandwidth test), beside the
points' wall time. With `--reference DB` (a dense run, as
bench/adaptive_accuracy.py measures it) it also fits the run's points as they
would have been (each median of the samples kept) and prints how far that model
lies from the run's own at the reference's sizes, and both models' error against
the reference in the run's state of the ranks' cores. Points that stopped at
max-time, and the probes (loggp, rndv, touch, coldstart, skew, mbw: fixed sizes,
their own extras), are left as measured. No MPI run.

    python bench/fewest_samples.py --db RUN.db [--db ...] [--min-reps 6] [--from-bytes 65536]
        [--reference REF.db]
"""

from __future__ import annotations

import argparse
import copy
import json
import sqlite3
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adaptive_accuracy import curve_misses, dense_runs, in_fast_state, points_of, relative  # noqa: E402

from commchar.errors import InputError  # noqa: E402
from commchar.models.assemble import fit_models  # noqa: E402
from commchar.models.inputs import from_samples  # noqa: E402
from commchar.statistics import relative_ci_halfwidth, summarize  # noqa: E402

PROBES = {"loggp", "rndv", "touch", "coldstart", "skew", "mbw"}


def stop_at(samples: list[float], target: float, floor: int) -> int:
    """How many of `samples` the kernel's rule would have taken with `floor` as min-reps."""
    n, chunk = 0, floor
    while True:
        n = min(len(samples), n + chunk)
        if n >= floor and relative_ci_halfwidth(summarize(samples[:n])) <= target * (1 + 1e-9):
            return n
        if n >= len(samples):
            return n
        chunk = (n + 1) // 2


def messages(op: str, extra: dict) -> float:
    """Repetitions' time per sample: a ping-pong's sample is half its round trip, a
    bandwidth test's one message of its window."""
    return 2.0 if op == "pingpong" else float(extra.get("window") or 1)


def replay_run(db: Path, floor: int, from_bytes: int) -> tuple[dict[int, int], float, float, str]:
    """Per point id the samples it would have kept, the samples' seconds saved, the points'
    wall seconds, and the run's library."""
    kept: dict[int, int] = {}
    saved = 0.0
    with sqlite3.connect(db) as con:
        wall = con.execute("SELECT COALESCE(SUM(wall_s), 0) FROM points").fetchone()[0]
        first = con.execute("SELECT library FROM points LIMIT 1").fetchone()
        if first is None:
            raise InputError("no points")
        library = first[0]
        rows = con.execute(
            "SELECT p.id, p.op, p.n_bytes, p.precision_target, p.stop_reason, p.extra_json, s.t_us_json"
            " FROM points p JOIN samples s ON s.point_id = p.id WHERE p.n_bytes >= ?", (from_bytes,))
        for pid, op, _, target, stop, extra, samples_json in rows:
            samples = json.loads(samples_json)
            if stop != "precision" or op in PROBES or not target or len(samples) <= floor:
                continue
            n = stop_at(samples, float(target), floor)
            if n < len(samples):
                kept[pid] = n
                saved += sum(samples[n:]) * messages(op, json.loads(extra or "{}")) * 1e-6
    return kept, saved, float(wall), library


def model_shift(db: Path, library: str, kept: dict[int, int], reference: Path) -> str:
    """How far the points as they would have been move the fitted model, and both models'
    error against the reference, in the run's state of the cores."""
    points = points_of(db, library, [])  # every run of the store, as replay_run reads it
    with sqlite3.connect(db) as con:
        samples = {pid: json.loads(js) for pid, js in con.execute("SELECT point_id, t_us_json FROM samples")}
    fewer = []
    for pt in points:
        pid = int(str(pt["row"]).rsplit(" ", 1)[1])
        if pid in kept:
            pt = copy.deepcopy(pt)
            from_samples(pt, samples[pid][:kept[pid]])
        fewer.append(pt)
    ref = points_of(reference, library, dense_runs(reference, library))
    own, low = fit_models(points).get(library, {}), fit_models(fewer).get(library, {})
    moved = []
    for pt in ref:
        key = f"{pt['op']}:{pt['variant']}" if pt["variant"] else pt["op"]
        if key in own and key in low:
            x, p = np.array([float(pt["n_bytes"])]), np.array([2.0])
            a, b = float(own[key].predict(x, p)[0]), float(low[key].predict(x, p)[0])
            moved.append(abs(b - a) / max(abs(a), 0.05))
    errors = []
    for pts in (points, fewer):
        fast, same, _ = in_fast_state(pts, ref)
        errors.append(statistics.median(e for pairs in relative(curve_misses(fast, same, library)).values()
                                        for _, e in pairs))
    return (f"; model moved at {len(moved)} reference sizes: median {100 * statistics.median(moved):.2f}%,"
            f" 90th percentile {100 * float(np.percentile(moved, 90)):.2f}%, beyond 5% at"
            f" {sum(m > 0.05 for m in moved)}; median error against the reference {100 * errors[0]:.2f}%"
            f" as measured, {100 * errors[1]:.2f}% with the floor")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", action="append", required=True, help="a run's store (repeatable)")
    parser.add_argument("--min-reps", type=int, default=6, help="the floor replayed (default 6)")
    parser.add_argument("--from-bytes", type=int, default=65536, help="sizes it applies to (default 65536)")
    parser.add_argument("--reference", type=Path, help="a dense run's store: how far the model moves")
    args = parser.parse_args()
    if args.min_reps < 1:
        parser.error("--min-reps must be at least 1")
    for db in map(Path, args.db):
        if not db.is_file():
            print(f"{db}: no such store", file=sys.stderr)
            return 1
        try:
            kept, saved, wall, library = replay_run(db, args.min_reps, args.from_bytes)
            line = (f"{db} ({library}): {len(kept)} points would have stopped sooner; their samples'"
                    f" {saved:.3f} s of the points' {wall:.2f} s ({100 * saved / wall if wall else 0:.1f}%)")
            if args.reference:
                line += model_shift(db, library, kept, args.reference)
        except (sqlite3.Error, InputError) as exc:
            print(f"{db}: not a commchar run's store with points and samples ({exc})", file=sys.stderr)
            return 1
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
