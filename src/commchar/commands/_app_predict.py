"""`commchar app predict`: each stored application case replayed from its trace
under LogGPS and LogGP, stored beside it, and the study's tables printed."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from commchar.apps.predict import MODELS, ModelChoice, predict_case
from commchar.errors import InputError
from commchar.store import Store
from commchar.tables import Table, table_rich


def predict_stored(args: argparse.Namespace, console: Console) -> int:
    with Store(args.db, create=False) as store:
        cases = [c for c in store.app_runs(args.runs) if c.get("trace")]
        if not cases:
            raise InputError(f"no traced application run in {args.db} (run `commchar app jacobi` "
                             "or `commchar app gauss` first)")
        choices = {lib: ModelChoice.open(args.model, args.library or lib, args.collectives)
                   for lib in sorted({c["library"] for c in cases})}
        done = {(p["app_run_id"], p["model"]) for p in store.app_predictions(c["id"] for c in cases)
                if p["model_key"] == choices[_lib(cases, p["app_run_id"])].key}
        todo = [c for c in cases if args.again or any((c["id"], m) not in done for m in MODELS)]
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("left"), TimeRemainingColumn())
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("predicting", total=len(todo))
            for case in todo:
                progress.update(task, description=f"{case['library']} {case['app']} "
                                f"{case['config']} N={case['n']} p={case['p']}")
                model = choices[case["library"]]
                for name, prediction in predict_case(store, case, model, args.collectives).items():
                    store.add_app_prediction(case["id"], model.key, name, prediction)
                progress.advance(task)
        predictions: dict[int, dict[str, dict]] = {}
        for p in store.app_predictions(c["id"] for c in cases):
            if p["model_key"] == choices[_lib(cases, p["app_run_id"])].key:
                predictions.setdefault(p["app_run_id"], {})[p["model"]] = p
    console.print(f"{len(todo)} cases predicted, {len(cases) - len(todo)} already were, from "
                  f"{args.model}; `commchar report --db {args.db}` shows them")
    for app in ("gauss", "jacobi"):
        rows = [c for c in cases if c["app"] == app and c["id"] in predictions]
        if rows:
            console.print(table_rich(_table(app, rows, predictions)))
    return 0


def _lib(cases: list[dict], app_run_id: int) -> str:
    return next(c["library"] for c in cases if c["id"] == app_run_id)


def _table(app: str, cases: list[dict], predictions: dict[int, dict[str, dict]]) -> Table:
    headers = ["library", "config", "N", "p", "measured ms", "LogGPS ms", "err", "LogGP ms", "err", "msgs ≥ S",
               "slowest rank: comp/comm/wait ms"]
    rows = []
    for case in sorted(cases, key=lambda c: (c["library"], c["p"], c["n"], c["config"])):
        by_model = predictions[case["id"]]
        gps, gp = by_model.get("loggps"), by_model.get("loggp")
        # a case is listed only with a prediction: without LogGPS's, LogGP's is there
        anchor = gps or by_model["loggp"]
        measured = anchor["measured_s"]
        cells = [case["library"], case["config"], str(case["n"]),
                 f"{case['p']}{'*' if case['oversubscribed'] else ''}", f"{measured * 1e3:.2f}"]
        for pred in (gps, gp):
            cells += [f"{pred['predicted_s'] * 1e3:.2f}",
                      f"{100 * (pred['predicted_s'] - measured) / measured:+.1f}%"] if pred else ["–", "–"]
        messages = anchor["messages"]
        cells.append(f"{messages['at_least_S']}/{messages['count']}")
        slowest = max(anchor["ranks"], key=lambda r: r["total_s"])
        cells.append(f"{slowest['computation_s'] * 1e3:.1f}/{slowest['communication_s'] * 1e3:.1f}/"
                     f"{slowest['wait_s'] * 1e3:.1f}")
        rows.append(cells)
    return Table(f"app-predict-{app}", f"{app}: measured and predicted time of the timed phases (slowest rank)",
                 headers, rows, right=frozenset(range(2, len(headers))))
