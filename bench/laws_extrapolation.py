#!/usr/bin/env python3
"""Collective laws in p fitted from the smaller p, checked at the larger ones.

    cp /work/node16/n16.db /tmp/n16.db
    python bench/laws_extrapolation.py --db /tmp/n16.db --run 2                  # fit p <= 8, predict 12, 16
    python bench/laws_extrapolation.py --db /tmp/n16.db --run 2 --fit-np 2:4 --predict-np 6,8
    python bench/laws_extrapolation.py --db /tmp/n16.db --run 2 --laws loo       # leave-one-out selection
    python bench/laws_extrapolation.py --db /tmp/n16.db --run 2 --in-sample      # floor: 12, 16 fitted too

Every collective of the runs is fitted as `commchar fit` fits it (all variants
and p together, regimes shared over p, the oversubscription policy applied),
but from the points at the --fit-np process counts only; its laws then predict
every point measured at the --predict-np counts. Printed: per operation and
size the predicted and measured times at each held-out p with the signed
relative error; per operation the median and worst error; over every point
(and over n > 0, the zero-byte calls being timer noise) the median and worst
|error| and the share within 25%, against the targets (median <= 10%, worst
<= 25%).

Where the library has selection rules (commchar.simulate.selection: Open MPI,
MPICH), each predicted point is also marked by whether any fitted p ran the
algorithm the library runs there at that size; the summary then gives the
points a fitted p ran apart from those no law of the fitted p can know (MPICH
hands a bcast of 12 KiB or more on 12 ranks to the MPIR tree's ring, which
none of p = 2 to 8 runs at those sizes).

`--against DB2 [--against-run ID]` also sets every predicted point beside the
same point (library, operation, variant, n, p) of a second store measured the
same way: how far two measurements of the node agree, which no law can beat.

`--laws loo` chooses the laws by leave-one-out cross-validation instead of by
forward extrapolation (models.laws.LawSelector), for comparison. `--in-sample`
fits the predicted p too: how closely laws of these forms can follow the
points at all, the floor under any extrapolation.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.errors import CommcharError  # noqa: E402
from commchar.measure.plan import parse_np  # noqa: E402
from commchar.models.assemble import apply_oversubscribed_policy  # noqa: E402
from commchar.models.collective import CollectiveModel  # noqa: E402
from commchar.models.inputs import read_store  # noqa: E402
from commchar.models.laws import SELECTIONS  # noqa: E402
from commchar.simulate.selection import OPERATIONS, rules_for  # noqa: E402
from commchar.simulate.selection import decide as algorithm_at  # noqa: E402
from commchar.vocabulary import COLLECTIVES, op_key  # noqa: E402

TARGET_MEDIAN, TARGET_WORST, WITHIN = 0.10, 0.25, 0.25


def evaluate(points: list[dict], fit_np: list[int], predict_np: list[int], laws: str = "extrapolate",
             in_sample: bool = False) -> dict[str, Any]:
    """Fit every (library, collective) from the points at fit_np (and predict_np too when
    in_sample), predict those at predict_np.

    Returns {"rows": [(library, key, n, p, predicted, measured, error)], "fitted_p": [...],
    "unseen": {(library, key, n, p): algorithm}, "skipped": [...]} with error = predicted /
    measured - 1, fitted_p the p measured and fitted, and unseen the rows whose library runs an
    algorithm there that it runs at no fitted p at that size (libraries with selection rules)."""
    usable = [pt for pt in points if pt.get("valid", True) and pt["op"] in COLLECTIVES]
    kept, _, _ = apply_oversubscribed_policy(usable, "exclude")
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for pt in kept:
        groups[(pt["library"], pt["op"])].append(pt)
    rows: list[tuple[str, str, int, int, float, float, float]] = []
    skipped: list[str] = []
    fitted_p: set[int] = set()
    unseen: dict[tuple[str, str, int, int], str] = {}
    for (library, op), pts in sorted(groups.items()):
        train = [pt for pt in pts if pt["p"] in fit_np or (in_sample and pt["p"] in predict_np)]
        test = [pt for pt in pts if pt["p"] in predict_np]
        if not test:
            continue
        if not train:
            skipped.append(f"{library} {op}: nothing measured at the fitted p")
            continue
        fitted_p.update(pt["p"] for pt in train)
        model = CollectiveModel(laws=laws, op=op).fit(
            [pt["n_bytes"] for pt in train], [pt["p"] for pt in train], [pt["t_us"] for pt in train],
            [pt["variant"] for pt in train])
        for pt in sorted(test, key=lambda q: (q["variant"], q["n_bytes"], q["p"])):
            if pt["variant"] not in model.variants_:
                skipped.append(f"{library} {op_key(op, pt['variant'])}: variant not measured at the fitted p")
                continue
            predicted = float(model.predict([pt["n_bytes"]], pt["p"], pt["variant"])[0])
            rows.append((library, op_key(op, pt["variant"]), pt["n_bytes"], pt["p"], predicted, pt["t_us"],
                         predicted / pt["t_us"] - 1))
            algorithm = _unseen_algorithm(library, op, pt["n_bytes"], pt["p"], {q["p"] for q in train})
            if algorithm:
                unseen[rows[-1][:4]] = algorithm
    return {"rows": rows, "fitted_p": sorted(fitted_p), "unseen": unseen, "skipped": sorted(set(skipped))}


def _unseen_algorithm(library: str, op: str, n: int, p: int, fitted: set[int]) -> str | None:
    """The library's algorithm at (n, p) when it runs it at none of the fitted p at size n;
    None when one of them runs it, or the library or operation has no selection rules (a
    nonblocking, persistent or neighbourhood collective)."""
    if rules_for(library) is None or op not in OPERATIONS:
        return None
    here = algorithm_at(library, op, n, p).library_algorithm
    return None if any(algorithm_at(library, op, n, q).library_algorithm == here for q in fitted) else here


def summary(rows: list[tuple]) -> dict[str, Any]:
    """Median and worst |error|, where the worst is, and the share within WITHIN."""
    errors = np.array([r[6] for r in rows])
    worst = rows[int(np.argmax(np.abs(errors)))]
    return {"points": len(rows), "median": float(np.median(np.abs(errors))), "worst": float(worst[6]),
            "worst_at": f"{worst[1]} n={worst[2]} p={worst[3]}",
            "within": float(np.mean(np.abs(errors) <= WITHIN))}


def agreement(rows: list[tuple], other: list[dict]) -> list[tuple]:
    """The rows' points measured again in another store: rows shaped as evaluate's, with the
    other store's time as the prediction (error = other / this - 1)."""
    times = {(pt["library"], op_key(pt["op"], pt["variant"]), pt["n_bytes"], pt["p"]): pt["t_us"]
             for pt in other if pt.get("valid", True) and pt["t_us"] > 0}
    return [(*r[:4], times[r[:4]], r[5], times[r[:4]] / r[5] - 1) for r in rows if r[:4] in times]


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def _line(name: str, s: dict[str, Any]) -> str:
    return (f"{name}: {s['points']} points, median |error| {s['median']:.1%}, worst {s['worst']:+.1%}"
            f" ({s['worst_at']}), within {WITHIN:.0%}: {s['within']:.0%}")


def print_report(result: dict[str, Any], predict_np: list[int], laws: str) -> int:
    rows = result["rows"]
    if not rows:
        print("laws_extrapolation: no collective point at the predicted p", file=sys.stderr)
        return 1
    print(f"Laws in p ({laws}) fitted from p = {','.join(map(str, result['fitted_p']))},"
          f" predicted at p = {','.join(map(str, predict_np))}: predicted / measured us (error)")
    table: dict[tuple[str, str, int], dict[int, tuple]] = defaultdict(dict)
    for r in rows:
        table[(r[0], r[1], r[2])][r[3]] = r
    head = f"{'library':8} {'operation':20} {'n (B)':>8}" + "".join(f"  {'p=' + str(q):>24}" for q in predict_np)
    print(head)
    for (library, key, n), by_p in sorted(table.items()):
        cells = "".join(f"  {f'{by_p[q][4]:.3g} / {by_p[q][5]:.3g} ({_pct(by_p[q][6])})':>24}" if q in by_p
                        else f"  {'':>24}" for q in predict_np)
        print(f"{library:8} {key:20} {n:>8}{cells}")
    print()
    per_op: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for r in rows:
        per_op[(r[0], r[1])].append(r)
    for (library, key), mine in sorted(per_op.items()):
        s = summary(mine)
        print(f"{library:8} {key:20} median |error| {s['median']:6.1%}, worst {s['worst']:+7.1%}"
              f" (n={s['worst_at'].split(' n=')[1]}), within {WITHIN:.0%}: {s['within']:.0%}")
    print()
    overall = summary(rows)
    print(_line("all points", overall))
    sized = [r for r in rows if r[2] > 0]
    if sized:
        print(_line("n > 0", summary(sized)))
    unseen = result.get("unseen", {})
    if unseen:
        seen = [r for r in rows if r[:4] not in unseen]
        if seen:
            print(_line("an algorithm a fitted p ran", summary(seen)))
        print(_line("an algorithm no fitted p ran at that size", summary([r for r in rows if r[:4] in unseen])))
        for algorithm in sorted(set(unseen.values())):
            where = sorted((k[1], k[2], k[3]) for k, a in unseen.items() if a == algorithm)
            print(f"  {algorithm}: " + ", ".join(f"{key} n={n} p={p}" for key, n, p in where))
    met = overall["median"] <= TARGET_MEDIAN and abs(overall["worst"]) <= TARGET_WORST
    print(f"target (median <= {TARGET_MEDIAN:.0%}, worst <= {TARGET_WORST:.0%}): {'met' if met else 'not met'}")
    for note in result["skipped"]:
        print(f"skipped: {note}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="commchar database (read only)")
    parser.add_argument("--run", type=int, action="append", metavar="ID", help="run(s) to use (default: all)")
    parser.add_argument("--fit-np", default="2:8", help="process counts to fit from (default 2:8)")
    parser.add_argument("--predict-np", default="12,16", help="process counts to predict (default 12,16)")
    parser.add_argument("--laws", choices=SELECTIONS, default="extrapolate",
                        help="how laws in p are chosen (default: extrapolate, as commchar fit)")
    parser.add_argument("--in-sample", action="store_true",
                        help="fit the predicted p too (the floor under extrapolation)")
    parser.add_argument("--against", metavar="DB2", help="a second store: its same points beside these")
    parser.add_argument("--against-run", type=int, action="append", metavar="ID",
                        help="run(s) of --against to use (default: all)")
    args = parser.parse_args(argv)
    if args.against_run and not args.against:
        parser.error("--against-run needs --against DB2")
    try:
        fit_np, predict_np = parse_np(args.fit_np), parse_np(args.predict_np)
        if set(fit_np) & set(predict_np):
            raise CommcharError("--fit-np and --predict-np overlap: a held-out p must not be fitted")
        points, _, _ = read_store(args.db, args.run or [])
        result = evaluate(points, fit_np, predict_np, args.laws, args.in_sample)
        other = read_store(args.against, args.against_run or [])[0] if args.against else None
    except CommcharError as exc:
        print(f"laws_extrapolation: {exc}", file=sys.stderr)
        return 2
    status = print_report(result, predict_np, args.laws)
    if other is not None and status == 0:
        again = agreement(result["rows"], other)
        if again:
            print(_line(f"the same points in {args.against}", summary(again)))
        else:
            print(f"the same points in {args.against}: none measured there")
    return status


if __name__ == "__main__":
    sys.exit(main())
