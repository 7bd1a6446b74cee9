"""`commchar predict MODEL EXPR [EXPR ...] --n N --p P`: predicted times from a model file."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from commchar import jsonio, terminal
from commchar.modelfile import load
from commchar.predict import parse_n_values, parse_p_values, predict
from commchar.predict.core import PredictResult
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


def _table(result: PredictResult, library: str) -> Table:
    several = len(result.exprs) > 1
    table = Table(title=f"Predicted time (us), library {library}", title_justify="left")
    table.add_column("n", justify="right")
    table.add_column("p", justify="right")
    for expr in result.exprs:
        table.add_column(expr, justify="right", overflow="fold")
    if several:
        table.add_column("cheapest", overflow="fold")
        table.add_column("by", justify="right")
    for row in result.rows:
        if row.library != library:
            continue
        cells = [size(row.n), str(row.p)]
        cells += [us(e.t_us) + (" *" if e.extrapolated else "") for e in row.estimates]
        if several:
            cells += [row.cheapest or "", f"{row.margin_pct:.1f}%" if row.margin_pct is not None else ""]
        table.add_row(*cells)
    if several:
        table.caption = "by: how much cheaper than the next cheapest"
    if any(e.extrapolated for e in result.estimates if e.library == library):
        table.caption = ((table.caption + "; ") if table.caption else "") + "* extrapolated outside the fitted range"
    return table


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
        table = _table(result, library)
        imported = model.data["libraries"].get(library, {}).get("imported_from")
        if imported:  # a peer tool's means are not commchar's medians: say so beside the numbers
            table.caption = ((table.caption + "; ") if table.caption else "") + f"model fitted from {imported}"
        console.print(table)
    return 0
