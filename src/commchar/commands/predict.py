"""`commchar predict MODEL EXPR [EXPR ...] --n N --p P`: predicted times from a model file."""

from __future__ import annotations

import argparse

from rich.console import Console

from commchar import jsonio, terminal
from commchar.modelfile import load
from commchar.predict import parse_n_values, parse_p_values, predict
from commchar.predict.core import PredictResult
from commchar.tables import Table, table_rich
from commchar.vocabulary import format_size as size, format_us as us

NAME = "predict"
HELP = "predict the time of operations and compositions from a model file"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="model file (commchar fit -o, or written by hand)")
    parser.add_argument("exprs", metavar="EXPR", nargs="+",
                        help="operation (bcast, pingpong:ssend) or composition (gather+bcast, "
                             "gather(8*p)+bcast(8*p), p*scatter(8*p*p))")
    parser.add_argument("--n", required=True, metavar="N",
                        help="message length(s) in bytes: 1024, 8,1K,1M, 1K:1M (powers of two), or an expression in p (8*p)")
    parser.add_argument("--p", required=True, metavar="P", help="process count(s): 8, 2,4,8, 2:12")
    parser.add_argument("--library", metavar="L", help="only this library of the model (default: each)")
    parser.add_argument("--json", action="store_true", help="print a JSON list of {expr, n, p, t_us, ...} objects")


def _table(result: PredictResult, library: str, imported: str | None) -> Table:
    several = len(result.exprs) > 1
    headers = ["n", "p", *result.exprs] + (["cheapest", "by"] if several else [])
    rows = []
    for row in result.rows:
        if row.library != library:
            continue
        cells = [size(row.n), str(row.p)]
        cells += [us(e.t_us) + (" *" if e.extrapolated else "") for e in row.estimates]
        if several:
            cells += [row.cheapest or "", f"{row.margin_pct:.1f}%" if row.margin_pct is not None else ""]
        rows.append(cells)
    notes = ["by: how much cheaper than the next cheapest"] if several else []
    if any(e.extrapolated for e in result.estimates if e.library == library):
        notes.append("* extrapolated outside the fitted range")
    if imported:  # a peer tool's means are not commchar's medians: say so beside the numbers
        notes.append(f"model fitted from {imported}")
    # sizes, times and margins right-aligned; the notes are short, so one caption line
    right = frozenset(range(len(result.exprs) + 2)) | ({len(headers) - 1} if several else frozenset())
    return Table(f"predict-{library}", f"Predicted time (us), library {library}", headers, rows,
                 ["; ".join(notes)] if notes else [], right)


def execute(args: argparse.Namespace, console: Console) -> int:
    model = load(args.model)
    result = predict(model, args.exprs, parse_n_values(args.n), parse_p_values(args.p), args.library)
    errors = terminal.console(stderr=True)
    for library, why in result.skipped.items():
        errors.print(f"commchar: warning: library {library} skipped: {why}", markup=False, soft_wrap=True)
    for warning in result.warnings:
        errors.print(f"commchar: warning: {warning}", markup=False, soft_wrap=True)
    if args.json:
        console.print_json(jsonio.dumps(result.as_json()))
        return 0
    for library in result.libraries:
        imported = model.data["libraries"].get(library, {}).get("imported_from")
        console.print(table_rich(_table(result, library, imported)))
    return 0
