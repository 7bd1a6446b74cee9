#!/usr/bin/env python3
"""Predicted against measured winner of equivalent compositions (advise's catalogue).

Fit a model on one run, measure every part at sizes the fit did not see, then:

    commchar run --db eq.db --ops allgather,gather,bcast,allreduce:sum,reduce:sum,reduce_scatter:sum,scatter \\
        --sizes 3072,12288,49152,196608,786432 --np 2
    python bench/equivalence_check.py --model model.json --db eq.db [--p 2]

A composition's measured time is the sum of its parts' measured medians, as
`commchar predict` sums their predictions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from commchar.store import Store

PAIRS = (("allgather", "gather+bcast"), ("allreduce", "reduce+bcast"),
         ("reduce_scatter", "reduce+scatter"))
DEFAULT_VARIANT = {"allreduce": "allreduce:sum", "reduce": "reduce:sum",
                   "reduce_scatter": "reduce_scatter:sum"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--p", type=int, default=2)
    args = parser.parse_args()
    with Store(args.db) as store:
        points = [pt for pt in store.points() if pt["p"] == args.p and pt["valid"]]
    measured = {(pt["library"], f"{pt['op']}:{pt['variant']}" if pt["variant"] else pt["op"],
                 pt["n_bytes"]): pt["t_us"] for pt in points}
    sizes = sorted({pt["n_bytes"] for pt in points})
    errors, right, total = [], 0, 0
    for library in sorted({pt["library"] for pt in points}):
        for a, b in PAIRS:
            out = subprocess.run([sys.executable, "-m", "commchar", "predict", args.model, a, b,
                                  "--n", ",".join(map(str, sizes)), "--p", str(args.p),
                                  "--library", library, "--json"],
                                 capture_output=True, text=True, check=True)
            predicted = {(row["expr"], row["n"]): row["t_us"] for row in json.loads(out.stdout)}
            for n in sizes:
                try:
                    meas = {e: sum(measured[(library, DEFAULT_VARIANT.get(part, part), n)]
                                   for part in e.split("+")) for e in (a, b)}
                except KeyError:
                    continue  # a part was not measured at this size
                pred = {e: predicted[(e, n)] for e in (a, b)}
                pw, mw = min(pred, key=pred.get), min(meas, key=meas.get)
                total += 1
                right += pw == mw
                rel = {e: (pred[e] - meas[e]) / meas[e] for e in (a, b)}
                errors += [abs(v) for v in rel.values()]
                print(f"{library:8} n={n:8} {a:>15} {pred[a]:9.2f} vs {meas[a]:9.2f} us ({rel[a]:+6.1%})"
                      f" | {b:>15} {pred[b]:9.2f} vs {meas[b]:9.2f} us ({rel[b]:+6.1%})"
                      f" | predicted {pw}, measured {mw}{'' if pw == mw else '  <- wrong'}")
    if total:
        print(f"right winner {right}/{total}; median |relative error| {statistics.median(errors):.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
