#!/usr/bin/env python3
"""Simulated (calibrated from a fitted model) against measured collective times.

    commchar run --np 2 --db cal.db [--sync window]
    commchar fit --db cal.db -o model.json
    python bench/simulation_check.py --model model.json --db cal.db
    python bench/simulation_check.py --db cal.db --holdout 3     # refit without every 3rd size

For every collective the simulator has a generator for (reductions: their
`sum` variant) and every size measured (n > 0; barrier: n = 0) at the given
p, it simulates the algorithm the library chooses there
(commchar.simulate.selection) with the model's parameters, gamma and per-call
costs, and sets the makespan beside the measured median. `--bare` leaves the
call costs out and `--legacy` simulates the old check's fixed algorithms
(recursive doubling, binomial) without them: the before of this calibration.

The call costs are fitted from the measured collectives themselves (in-sample);
`--holdout K` fits a model (with call costs) from the run without every K-th
interior size of each series and scores only the sizes left out.

Prints per library the median and worst |error| over the dedicated cases and
whether they meet the targets (median <= 10%, worst <= 25%): over every point,
and over the points the fits keep (a point 10x above what its neighbouring
sizes allow was descheduled on a shared machine: models.regimes.spikes, the
rule every fit applies; such points are marked in the table).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from commchar.modelfile import load, save
from commchar.models.regimes import DEFAULT_OUTLIER_FACTOR, spikes
from commchar.models import fit_document
from commchar.simulate.binary import run_simulator
from commchar.simulate.calibration import add_call_costs, gamma_us
from commchar.vocabulary import DEFAULT_VARIANTS as DEFAULT_VARIANT
from commchar.simulate.selection import LIBRARIES, OPERATIONS, choose
from commchar.store import Store

TARGET_MEDIAN, TARGET_WORST = 0.10, 0.25
LEGACY = {"allreduce": "allreduce:recursive_doubling", "bcast": "bcast:binomial"}


def measured_points(db: str) -> list[dict]:
    with Store(db) as store:
        return [dict(pt) for pt in store.points()]


def cases(points: list[dict], ps: set[int], legacy: bool) -> list[tuple[str, str, int, int, float, bool]]:
    """(library, op, p, n, measured us, oversubscribed) for every checked point."""
    out = []
    for pt in points:
        op = pt["op"]
        if not pt["valid"] or pt["p"] not in ps or op not in OPERATIONS or pt["library"] not in LIBRARIES:
            continue  # the simulator knows the algorithms of the MPI libraries only (not PVM's)
        if legacy and op not in LEGACY:
            continue
        if pt["variant"] != DEFAULT_VARIANT.get(op, "") or (pt["n_bytes"] == 0) != (op == "barrier"):
            continue
        out.append((pt["library"], op, pt["p"], pt["n_bytes"], pt["t_us"], bool(pt["oversubscribed"])))
    return sorted(out)


def descheduled(checked: list[tuple]) -> set[tuple[str, str, int, int]]:
    """(library, op, p, n) of points the fits' spike rule leaves out."""
    series: dict[tuple, list[tuple[int, float]]] = defaultdict(list)
    for library, op, p, n, t, _ in checked:
        series[(library, op, p)].append((n, t))
    out = set()
    for (library, op, p), rows in series.items():
        rows.sort()
        mask = spikes(np.array([r[0] for r in rows], float), np.array([r[1] for r in rows]), DEFAULT_OUTLIER_FACTOR)
        out.update((library, op, p, rows[i][0]) for i in np.flatnonzero(mask))
    return out


def holdout_split(points: list[dict], every: int) -> tuple[list[dict], set[tuple[str, str, str, int, int]]]:
    """Points without every `every`-th interior size of each (library, op, variant, p) series."""
    sizes: dict[tuple, list[int]] = defaultdict(list)
    for pt in points:
        sizes[(pt["library"], pt["op"], pt["variant"], pt["p"])].append(pt["n_bytes"])
    held: set[tuple[str, str, str, int, int]] = set()
    for key, ns in sizes.items():
        ns = sorted(set(n for n in ns if n > 0))
        held.update((*key, n) for n in ns[1:-1][every - 1::every])
    kept = [pt for pt in points if (pt["library"], pt["op"], pt["variant"], pt["p"], pt["n_bytes"]) not in held]
    return kept, held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="fitted model file (default: fit one from --db, with call costs)")
    parser.add_argument("--db", required=True)
    parser.add_argument("--p", default="2", help="process counts to check (default 2)")
    parser.add_argument("--bare", action="store_true", help="simulate without the model's call costs")
    parser.add_argument("--legacy", action="store_true",
                        help="the old check: allreduce:recursive_doubling and bcast:binomial, no call costs")
    parser.add_argument("--holdout", type=int, metavar="K",
                        help="fit without every K-th interior size and score only those")
    parser.add_argument("--json", metavar="FILE", help="also write the cases as JSON")
    args = parser.parse_args()
    if args.holdout is not None and args.holdout < 2:
        parser.error("--holdout must be at least 2")
    points = measured_points(args.db)
    held = None
    with tempfile.TemporaryDirectory() as tmp:
        model_path = args.model
        if model_path is None or args.holdout:
            fit_on, held = holdout_split(points, args.holdout) if args.holdout else (points, None)
            model, _ = add_call_costs(fit_document(fit_on), fit_on)
            model_path = str(Path(tmp) / "model.json")
            save(model, model_path)
        loaded = load(model_path)
        checked = cases(points, {int(x) for x in args.p.split(",")}, args.legacy)
        spiked = descheduled(checked)
        if held is not None:
            checked = [c for c in checked if (c[0], c[1], DEFAULT_VARIANT.get(c[1], ""), c[2], c[3]) in held]
        gammas = {lib: gamma_us(loaded, lib) for lib in {c[0] for c in checked}}

        def simulate(case: tuple) -> tuple[str, float]:
            library, op, p, n = case[:4]
            algorithm = LEGACY[op] if args.legacy else choose(library, op, n, p)
            argv = ["--model", model_path, "--library", library, "--unit", "us", "--collective", algorithm,
                    "--n", str(n), "--p", str(p)]
            if args.bare or args.legacy:
                argv += ["--call-costs", "off"]
            if gammas[library] is not None:
                argv.append(f"--gamma={gammas[library]!r}")
            return algorithm, float(run_simulator(argv)["makespan"])

        with ThreadPoolExecutor(max_workers=2) as pool:
            simulated = list(pool.map(simulate, checked))
    errors: dict[tuple[str, bool], list[tuple[float, bool]]] = defaultdict(list)
    rows = []
    for (library, op, p, n, t, over), (algorithm, sim) in zip(checked, simulated):
        error = (sim - t) / t
        spike = (library, op, p, n) in spiked
        errors[(library, over)].append((abs(error), spike))
        rows.append({"library": library, "op": op, "algorithm": algorithm, "p": p, "n": n,
                     "measured_us": t, "simulated_us": sim, "error": error, "oversubscribed": over,
                     "descheduled": spike})
        print(f"{library:8} {algorithm:32} p={p} n={n:8} measured {t:10.2f} simulated {sim:10.2f} us"
              f"  {error:+7.1%}{'  (oversubscribed)' if over else ''}{'  (descheduled)' if spike else ''}")
    what = ("legacy (no call costs)" if args.legacy else "bare (no call costs)" if args.bare
            else "calibrated") + (f", held-out every {args.holdout}th size" if args.holdout else "")
    syncs = sorted({str(pt.get("sync") or "barrier") for pt in points if pt["op"] in OPERATIONS})
    print(f"measured collectives started by: {', '.join(syncs) or 'nothing'}"
          " (a barrier's exit skew is in its small-size times; `--sync window` leaves it out)")
    verdict = 0
    for (library, over), values in sorted(errors.items()):
        where = "oversubscribed" if over else "dedicated"
        kept = [e for e, spike in values if not spike]
        for label, chosen in (("all points", [e for e, _ in values]), ("without descheduled", kept)):
            if not chosen:
                continue
            med, worst = statistics.median(chosen), max(chosen)
            ok = med <= TARGET_MEDIAN and worst <= TARGET_WORST
            print(f"{library:8} {where} {what}, {label}: median |error| {med:.1%}, worst {worst:.1%}"
                  f" over {len(chosen)} cases; target median <= {TARGET_MEDIAN:.0%}, worst <= {TARGET_WORST:.0%}:"
                  f" {'met' if ok else 'NOT met'}")
        verdict |= 0 if over or (kept and statistics.median(kept) <= TARGET_MEDIAN
                                 and max(kept) <= TARGET_WORST) else 1
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return verdict


if __name__ == "__main__":
    sys.exit(main())
