#!/usr/bin/env python3
"""Simulated (calibrated from a fitted model) against measured collective times.

    commchar run --db cal.db --np 2,4            # or any run with allreduce:sum and bcast
    commchar fit --db cal.db -o model.json
    python bench/simulation_check.py --model model.json --db cal.db

Prints, per library, operation, p and size, the measured median, the
simulated makespan and the relative error, then the median |error| for
dedicated and for oversubscribed points apart.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from commchar.store import Store

CASES = (("allreduce", "sum", "allreduce:recursive_doubling"), ("bcast", "", "bcast:binomial"))
SIZES = (8, 1024, 65536, 1048576)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--p", default="2,4")
    args = parser.parse_args()
    with Store(args.db) as store:
        measured = {(pt["library"], pt["op"], pt["variant"], pt["p"], pt["n_bytes"]):
                    (pt["t_us"], pt["oversubscribed"]) for pt in store.points() if pt["valid"]}
    errors: dict[bool, list[float]] = {False: [], True: []}
    for library in sorted({key[0] for key in measured}):
        for op, variant, algorithm in CASES:
            for p in map(int, args.p.split(",")):
                for n in SIZES:
                    if (library, op, variant, p, n) not in measured:
                        continue
                    out = subprocess.run(
                        [sys.executable, "-m", "commchar", "simulate", "--model", args.model,
                         "--library", library, "--unit", "us", "--collective", algorithm,
                         "--n", str(n), "--p", str(p), "--json"],
                        capture_output=True, text=True)
                    if out.returncode:
                        print(out.stderr.strip())
                        continue
                    simulated = json.loads(out.stdout)["makespan"]
                    t, oversubscribed = measured[(library, op, variant, p, n)]
                    error = (simulated - t) / t
                    errors[oversubscribed].append(abs(error))
                    print(f"{library:8} {algorithm:30} p={p} n={n:8} measured {t:10.2f} "
                          f"simulated {simulated:10.2f} us  {error:+7.1%}"
                          f"{'  (oversubscribed)' if oversubscribed else ''}")
    for oversubscribed, values in errors.items():
        if values:
            print(f"{'oversubscribed' if oversubscribed else 'dedicated'}: median |error| "
                  f"{statistics.median(values):.1%} over {len(values)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
