#!/usr/bin/env python3
"""Jacobi's distribution phase (an MPI_Scatter of the matrix into freshly allocated
memory) measured and replayed, with and without the model's first-touch cost.

    python bench/first_touch_distribution.py --db J.db --app-run ID --model M.json \\
        [--touch-run K] [--collectives charged|expanded]

For each case of the Jacobi sweep --app-run (its median trace), the Pcontrol level 1
phase of each rank, measured and replayed under LogGPS with the model file; the
model's loggp.first_touch is taken from the `touch` points of --touch-run of the same
store when given (fitted here), and the replay is also run without it.
"""

from __future__ import annotations

import argparse
import copy
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from commchar.models.first_touch import FirstTouchModel
from commchar.simulate.replay import ReplayRequest, replay
from commchar.store import Store
from commchar.store.traces import extract_trace


def touch_points(db: str, run: int) -> list[dict]:
    with sqlite3.connect(db) as con:
        rows = con.execute("select variant, n_bytes, t_us, valid from points where run_id = ? and op = 'touch'",
                           (run,)).fetchall()
    return [{"op": "touch", "variant": v, "n_bytes": n, "t_us": t, "valid": bool(ok)} for v, n, t, ok in rows]


def distribution(store: Store, trace_id: int, model: str, collectives: str) -> list[tuple[float, float]]:
    """(measured, predicted) ms of each rank's level-1 phase."""
    with tempfile.TemporaryDirectory() as d:
        extract_trace(store, trace_id, d)
        doc = replay(ReplayRequest(trace_dir=Path(d), model_path=model, library="mpich",
                                   collectives=collectives))
    return [(ph["measured"] / 1e3, ph["predicted"] / 1e3) for rank in doc["predictions"]["loggps"]["ranks"]
            for ph in rank["phases"] if ph.get("level") == 1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--app-run", type=int, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--touch-run", type=int)
    ap.add_argument("--collectives", default="charged", choices=("charged", "expanded"))
    args = ap.parse_args()
    model = json.loads(Path(args.model).read_text())
    loggp = model["libraries"]["mpich"]["loggp"]
    if args.touch_run is not None:
        fit = FirstTouchModel().fit(touch_points(args.db, args.touch_run))
        loggp["first_touch"] = fit.params_
        steps = ", ".join(f"{n >> 10} KiB {b * 1e3:.2f}" for n, b in fit.params_["steps"])
        print(f"first touch (run {args.touch_run}), ns per byte: {steps}")
    if "first_touch" not in loggp:
        sys.exit("first_touch_distribution: the model has no loggp.first_touch; give --touch-run")
    without = copy.deepcopy(model)
    del without["libraries"]["mpich"]["loggp"]["first_touch"]
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, doc in (("with", model), ("without", without)):
            paths[name] = str(Path(d) / f"{name}.json")
            Path(paths[name]).write_text(json.dumps(doc))
        with sqlite3.connect(args.db) as con:
            cases = con.execute("select n, p, trace_json from app_runs where run_id = ? and app = 'jacobi' "
                                "order by p, n", (args.app_run,)).fetchall()
        with Store(args.db) as store:
            for n, p, trace_json in cases:
                trace_id = json.loads(trace_json)["median"]
                base = distribution(store, trace_id, paths["without"], args.collectives)
                cold = distribution(store, trace_id, paths["with"], args.collectives)
                for rank, ((m, before), (_, after)) in enumerate(zip(base, cold)):
                    print(f"N={n} p={p} rank {rank}: measured {m:6.1f} ms, predicted {before:6.1f} ms "
                          f"({100 * (before - m) / m:+4.0f}%) without first touch, {after:6.1f} ms "
                          f"({100 * (after - m) / m:+4.0f}%) with")
    return 0


if __name__ == "__main__":
    sys.exit(main())
