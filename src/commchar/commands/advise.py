"""`commchar advise MODEL`: cheaper equivalents, design faults and protocol thresholds."""

from __future__ import annotations

import argparse
import dataclasses

from rich.console import Console

from commchar import jsonio, terminal
from commchar.modelfile import Expr, load
from commchar.predict import advise, parse_n_values, parse_p_values
from commchar.predict.render import (
    comparison_in_p_table,
    comparison_table,
    faults_table,
    thresholds_table,
)
from commchar.tables import table_rich

NAME = "advise"
HELP = "compare equivalent compositions, find design faults and protocol thresholds in a model file"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="model file")
    parser.add_argument("--n", metavar="N",
                        help="message lengths: crossovers in n are searched over their range, in p at each "
                             "(default: the model's n range; 8*p, 8 B, 1 KiB, 64 KiB, 1 MiB)")
    parser.add_argument("--p", metavar="P", help="process counts (default: every p of the model's p range)")
    parser.add_argument("--library", metavar="L", help="only this library of the model (default: each)")
    parser.add_argument("--json", action="store_true", help="print the advice as JSON")


def _jsonable(value: object) -> object:
    if isinstance(value, Expr):
        return str(value)
    if callable(value):
        return None
    return str(value)


def execute(args: argparse.Namespace, console: Console) -> int:
    model = load(args.model)
    n_values = parse_n_values(args.n) if args.n else None
    p_values = parse_p_values(args.p) if args.p else None
    result = advise(model, n_values, p_values, args.library)
    errors = terminal.console(stderr=True)
    for advice in result.libraries:
        for warning in advice.warnings:
            errors.print(f"commchar: warning: {warning}", markup=False, soft_wrap=True)
    if args.json:
        data = dataclasses.asdict(result)
        console.print_json(jsonio.dumps(data, default=_jsonable))
        return 0
    for advice in result.libraries:
        console.rule(f"Advice for library {advice.library}")
        for comparison in advice.comparisons:
            console.print(table_rich(comparison_table(comparison)))
            by_p = comparison_in_p_table(comparison)
            if by_p is not None:
                console.print(table_rich(by_p))
        for line in advice.unavailable:
            console.print(f"not compared: {line}", markup=False)
        if advice.faults:
            console.print(table_rich(faults_table(advice)))
        else:
            console.print("No design fault: no law in p is worse than the best-known algorithm's.")
        if advice.thresholds:
            console.print(table_rich(thresholds_table(advice)))
        else:
            console.print("No protocol threshold: no point-to-point operation has more than one segment.")
        for note in advice.loggp_notes:
            console.print(f"LogGPS: {note}", markup=False)
    return 0
