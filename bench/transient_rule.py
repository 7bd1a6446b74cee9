#!/usr/bin/env python3
"""How often the steady-state mean's transient rule (commchar.statistics.transient_length)
cuts samples, on the series of a store as measured and shuffled (where no transient can
exist, so every cut is a false one), beside plain MSER on the samples; and what each does to
the mean (the ratio of the mean after the cut to the mean of every sample: 5th and 1st
percentiles over the series).

    python3 bench/transient_rule.py [--db ~/.cache/commchar/reference.db] [--limit 3000]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.statistics import TRANSIENT_BATCH, transient_length  # noqa: E402


def plain_mser(x: np.ndarray) -> int:
    """MSER-5 on batch means, no test: the textbook rule, which takes a lone stall for a transient."""
    batches = x.size // TRANSIENT_BATCH
    if batches < 4:
        return 0
    means = x[:batches * TRANSIENT_BATCH].reshape(batches, TRANSIENT_BATCH).mean(axis=1)
    scores = [float(np.sum((means[d:] - means[d:].mean()) ** 2)) / (batches - d) ** 2
              for d in range(batches // 2 + 1)]
    return int(np.argmin(scores)) * TRANSIENT_BATCH


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(Path.home() / ".cache/commchar/reference.db"))
    ap.add_argument("--limit", type=int, default=3000, help="series read (default 3000)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not Path(args.db).is_file():
        print(f"transient_rule: no store at {args.db}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    results: dict[str, dict[str, list[float]]] = {}
    for (blob,) in db.execute("SELECT t_us_json FROM samples LIMIT ?", (args.limit,)):
        x = np.asarray(json.loads(blob), float)
        if x.size < 4 * TRANSIENT_BATCH or x.mean() <= 0:
            continue
        for order, series in (("as measured", x), ("shuffled", rng.permutation(x))):
            for name, rule in (("commchar", transient_length), ("plain MSER", plain_mser)):
                d = rule(series)
                entry = results.setdefault(f"{name:10s} {order:11s}", {"cut": [], "ratio": []})
                entry["cut"].append(d > 0)
                entry["ratio"].append(float(series[d:].mean() / series.mean()))
    if not results:
        print(f"transient_rule: {args.db} has no series of {4 * TRANSIENT_BATCH} samples or more",
              file=sys.stderr)
        return 2
    print(f"{len(next(iter(results.values()))['cut'])} series of {args.db}")
    print(f"{'rule':10s} {'series':11s} {'cut':>7s} {'mean ratio p5':>14s} {'p1':>7s}")
    for key, entry in results.items():
        ratio = np.percentile(entry["ratio"], [5, 1])
        print(f"{key} {100 * np.mean(entry['cut']):6.1f}% {ratio[0]:14.3f} {ratio[1]:7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
