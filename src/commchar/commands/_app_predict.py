"""`commchar app predict`: each stored application case replayed from its trace
under LogGPS and LogGP, stored beside it, and the study's tables printed."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from commchar.apps.estimate import MODELS, ModelChoice, predict_case
from commchar.errors import CommcharError, InputError, Interrupted
from commchar.store import Store
from commchar.tables import Table, table_rich
from commchar.terminal import styled


def predict_stored(args: argparse.Namespace, console: Console) -> int:
    """Predicts every stored case not yet predicted from this model file. A case that
    cannot be predicted is listed with its reason and the others go on; the exit status
    fails only when no case has a prediction left."""
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
        failed: dict[int, str] = {}
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("left"), TimeRemainingColumn())
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("predicting", total=len(todo))
            for case in todo:
                progress.update(task, description=f"{_name(case)}")
                model = choices[case["library"]]
                try:
                    predicted = predict_case(store, case, model, args.collectives)
                except Interrupted:
                    raise
                except CommcharError as exc:
                    failed[case["id"]] = str(exc)
                    console.print(styled(("not predicted", "red"), f": {_name(case)}: {exc}"))
                else:
                    for name, prediction in predicted.items():
                        store.add_app_prediction(case["id"], model.key, name, prediction)
                progress.advance(task)
        predictions: dict[int, dict[str, dict]] = {}
        for p in store.app_predictions(c["id"] for c in cases):
            if p["model_key"] == choices[_lib(cases, p["app_run_id"])].key:
                predictions.setdefault(p["app_run_id"], {})[p["model"]] = p
    console.print(f"{len(todo) - len(failed)} cases predicted, {len(cases) - len(todo)} already were"
                  f"{f', {len(failed)} could not be' if failed else ''}, from {args.model}; "
                  f"`commchar report --db {args.db}` shows them")
    for app in ("gauss", "jacobi"):
        rows = [c for c in cases if c["app"] == app and (c["id"] in predictions or c["id"] in failed)]
        if rows:
            console.print(table_rich(_table(app, rows, predictions, failed)))
    if failed and not set(predictions) - set(failed):
        raise CommcharError(f"no case could be predicted ({len(failed)} tried; the first: "
                            f"{next(iter(failed.values()))})")
    return 0


def _name(case: dict) -> str:
    return f"{case['library']} {case['app']} {case['config']} N={case['n']} p={case['p']}"


def _lib(cases: list[dict], app_run_id: int) -> str:
    return next(c["library"] for c in cases if c["id"] == app_run_id)


def _table(app: str, cases: list[dict], predictions: dict[int, dict[str, dict]],
           failed: dict[int, str]) -> Table:
    headers = ["library", "config", "N", "p", "measured ms", "LogGPS ms", "err", "LogGP ms", "err", "msgs ≥ S",
               "cores", "slowest rank: comp/comm/wait ms"]
    rows = []
    for case in sorted(cases, key=lambda c: (c["library"], c["p"], c["n"], c["config"])):
        cells = [case["library"], case["config"], str(case["n"]),
                 f"{case['p']}{'*' if case['oversubscribed'] else ''}"]
        if case["id"] in failed:  # an older prediction of it is not shown as this call's
            rows.append(cells + ["–"] * 7 + [f"not predicted: {failed[case['id']]}"])
            continue
        by_model = predictions[case["id"]]
        gps, gp = by_model.get("loggps"), by_model.get("loggp")
        # a case is listed only with a prediction: without LogGPS's, LogGP's is there
        anchor = gps or by_model["loggp"]
        measured = anchor["measured_s"]
        cells.append(f"{measured * 1e3:.2f}")
        for pred in (gps, gp):
            cells += [f"{pred['predicted_s'] * 1e3:.2f}",
                      f"{100 * (pred['predicted_s'] - measured) / measured:+.1f}%"] if pred else ["–", "–"]
        messages = anchor["messages"]
        cells.append(f"{messages['at_least_S']}/{messages['count']}")
        cells.append(anchor.get("cores") if anchor.get("cores") in ("same", "other") else "–")
        slowest = max(anchor["ranks"], key=lambda r: r["total_s"])
        cells.append(f"{slowest['computation_s'] * 1e3:.1f}/{slowest['communication_s'] * 1e3:.1f}/"
                     f"{slowest['wait_s'] * 1e3:.1f}")
        rows.append(cells)
    notes = ["* oversubscribed: more ranks than cores"] if any(c["oversubscribed"] for c in cases) else []
    if any(predictions.get(c["id"], {}).get("loggps", {}).get("cores") == "other" for c in cases):
        notes.append("cores other: no run of the case had ranks 0 and 1's cores where the model's points had them"
                     " (the median of its runs is compared, as on another machine)")
    notes.append("measured: the median of the case's untraced runs; predicted: the replay of its traced run")
    return Table(f"app-predict-{app}", f"{app}: measured and predicted time of the timed phases (slowest rank)",
                 headers, rows, notes=notes, right=frozenset(range(2, len(headers) - 2)))
