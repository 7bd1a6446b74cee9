"""`commchar report`: a self-contained HTML report of measured runs, libraries side by side."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from rich.console import Console


from commchar import outfile
from commchar.errors import UsageError
from commchar.store import Store
from commchar.tables import Table, table_rich
from commchar.vocabulary import UNIT_CHOICES, UNITS_HELP, unit_system

NAME = "report"
HELP = "Write a self-contained HTML report (figures, tables, findings) of measured runs."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="database to read (default: commchar.db)")
    parser.add_argument("--run", dest="runs", type=int, action="append", metavar="ID",
                        help="run to include (repeatable; default: every run in the database)")
    parser.add_argument("--model", metavar="FILE",
                        help="model file to draw and tabulate (default: fit each library on the fly)")
    parser.add_argument("-o", "--output", default="report.html", help="HTML file to write (default: report.html)")
    parser.add_argument("--format", choices=("png", "svg", "pdf"),
                        help="also write every figure as a file of this format")
    parser.add_argument("--figures-dir", metavar="DIR",
                        help="where --format writes figures (default: <output>-figures)")
    parser.add_argument("--units", choices=UNIT_CHOICES, default="si", help=UNITS_HELP)
    parser.add_argument("--oversubscribed", choices=("exclude", "include"), default="exclude",
                        help="fitting on the fly: exclude (default) leaves oversubscribed points out of an"
                             " operation's fit when it has dedicated ones; include fits them (marked). The"
                             " figures and findings show oversubscribed points either way")
    parser.add_argument("--reference", metavar="LIB",
                        help="library (or entity label, e.g. 'openmpi (run 3)') the comparison is made"
                             " against (default: the first in run, then name order)")


def execute(args: argparse.Namespace, console: Console) -> int:
    if args.figures_dir and not args.format:
        raise UsageError("--figures-dir needs --format png|svg|pdf")
    with Store(args.db, readonly=True):
        pass  # a store that is missing or no store is said before the report's stack loads
    from commchar.report import ReportOptions, build_report, write_figures
    from commchar.report.findings import is_unsupported

    output = Path(args.output)
    with console.status("building the report…"):
        report = build_report(ReportOptions(args.db, args.runs, args.model, unit_system(args.units),
                                                    args.oversubscribed, args.reference))
    outfile.write_text(output, report.html)

    rows = [[e.label, e.version[:60], str(len(e.points)), ",".join(map(str, sorted({pt["p"] for pt in e.points}))),
             str(sum(1 for f in e.failures if not is_unsupported(f))),
             str(sum(1 for pt in e.points if not pt["valid"]))] for e in report.entities]
    console.print(table_rich(Table("report-summary", f"commchar report: {output}",
                                   ["library", "version", "points", "p", "failures", "wrong"], rows)))
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    counts = Counter(f.category for f in report.findings)
    console.print(f"{len(report.figures)} figures, {len(report.tables)} tables, {len(report.findings)} "
                  f"findings ({', '.join(f'{n} {kind}' for kind, n in counts.items()) or 'none'}); "
                  "the first of each kind:", markup=False)
    shown: set[str] = set()
    for finding in report.findings:  # already ordered by what matters (findings.ORDER)
        if finding.category not in shown:
            shown.add(finding.category)
            console.print(f"  - {finding.text}", markup=False)
    if args.format:
        directory = args.figures_dir or f"{output.with_suffix('')}-figures"
        written = write_figures(report, directory, args.format)
        console.print(f"wrote {len(written)} {args.format} figures to {directory}", markup=False)
    console.print(f"wrote {output} in {report.seconds['total']:.1f} s", markup=False)
    return 0
