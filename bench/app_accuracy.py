#!/usr/bin/env python3
"""How close `commchar app predict` came, per application and p: the median and
range of the signed error of the timed region over the stored cases.

    commchar app jacobi --db node.db --np 1,4,8,12,16 --sizes 768,1536,3072
    commchar app gauss --db node.db --np 4,8,12,16 --sizes 768,1536
    commchar fit --db node.db -o model.json && commchar app predict --db node.db --model model.json
    python3 bench/app_accuracy.py --db node.db

Each case counts once, with its newest prediction (of the model file given by
--model, by its name, when the store holds predictions of several). Printed per
(library, application, p): the median error under LogGPS and LogGP, their
range, the share of cases within the target (10%) and each case's LogGPS error;
then the cases over all p >= --from-p.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.errors import CommcharError  # noqa: E402
from commchar.store import Store  # noqa: E402

TARGET = 10.0
MODELS = ("loggps", "loggp")


def newest_errors(db: str, model_name: str | None) -> dict[tuple, dict[str, float]]:
    """{(library, app, p, config, n): {model: error %}} from each case's newest prediction."""
    if not Path(db).exists():
        raise CommcharError(f"database {db} does not exist")
    with Store(db, readonly=True) as store:
        cases = {c["id"]: c for c in store.app_runs()}
        predictions = store.app_predictions(cases)
    out: dict[tuple, dict[str, float]] = defaultdict(dict)
    for pred in predictions:  # ordered by id: a newer one replaces an older one
        if model_name and not pred["model_key"].startswith(f"{model_name}@"):
            continue
        case = cases[pred["app_run_id"]]
        if pred.get("measured_s", 0) > 0:
            key = (case["library"], case["app"], case["p"], case["config"], case["n"])
            out[key][pred["model"]] = 100.0 * (pred["predicted_s"] / pred["measured_s"] - 1.0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="store with app runs and their predictions")
    ap.add_argument("--model", help="only predictions of this model file (its name, e.g. model.json)")
    ap.add_argument("--from-p", type=int, default=4, help="the summary's smallest p (default 4)")
    args = ap.parse_args(argv)
    try:
        errors = newest_errors(args.db, args.model and Path(args.model).name)
    except CommcharError as exc:
        print(f"app_accuracy: {exc}", file=sys.stderr)
        return 2
    if not errors:
        print("app_accuracy: no predicted app runs in the store (run `commchar app predict`)", file=sys.stderr)
        return 2
    groups: dict[tuple, list[tuple]] = defaultdict(list)
    for (library, app, p, config, n), errs in sorted(errors.items()):
        groups[(library, app, p)].append((config, n, errs))
    print(f"{'library':8} {'app':7} {'p':>3} {'cases':>5}  {'LogGPS median (range)':>28}  "
          f"{'LogGP median (range)':>28}  within {TARGET:g}%  cases (LogGPS)")
    overall: dict[tuple, list[float]] = defaultdict(list)
    for (library, app, p), rows in sorted(groups.items()):
        cells = []
        for model in MODELS:
            vals = [e[model] for _, _, e in rows if model in e]
            cells.append(f"{statistics.median(vals):+7.1f}% ({min(vals):+6.1f}..{max(vals):+6.1f})"
                         if vals else "-")
        gps = [e["loggps"] for _, _, e in rows if "loggps" in e]
        within = sum(abs(v) <= TARGET for v in gps)
        detail = " ".join(f"{c[:4]}{n}:{e['loggps']:+.0f}" for c, n, e in rows if "loggps" in e)
        print(f"{library:8} {app:7} {p:3d} {len(rows):5d}  {cells[0]:>28}  {cells[1]:>28}  "
              f"{within:3d}/{len(gps):<3d}    {detail}")
        if p >= args.from_p:
            overall[(library, app)].extend(gps)
    for (library, app), vals in sorted(overall.items()):
        worst = max(vals, key=abs)
        print(f"{library} {app} p >= {args.from_p}: {len(vals)} cases, median |error| "
              f"{statistics.median(abs(v) for v in vals):.1f}%, worst {worst:+.1f}%, "
              f"within {TARGET:g}%: {sum(abs(v) <= TARGET for v in vals)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
