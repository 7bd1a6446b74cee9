"""`commchar validate`: the model against communication-bound programs it did not see.

    commchar validate --library mpich
    commchar validate --library mpich,openmpi --repeat 3 --sizes 256,4K,32K,256K --iterations 5000

Measures and fits a fresh model, traces each validation program at each size
and replays it under LogGPS and LogGP (commchar.validate); prints measured and
predicted time per iteration with each error, and stores the whole for
`commchar report`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

from rich.console import Console

from commchar.errors import Interrupted, UsageError
from commchar.measure.libraries import select
from commchar.store import Store
from commchar.tables import Table, table_rich
from commchar import terminal
from commchar.terminal import sweep_progress, visible
from commchar.validate import PROGRAMS, ValidateOptions, parse_programs, validate
from commchar.validate.core import DEFAULT_SIZES, Observer
from commchar.validate.store import save_validation
from commchar.vocabulary import parse_size

NAME = "validate"
HELP = "measure a fresh model and check its replay of communication-bound programs (LogGPS, LogGP)"
TARGET_PCT = 10.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    parser.add_argument("--library", help="comma-separated MPI libraries (default: every one found)")
    parser.add_argument("--np", type=int, default=2, help="number of ranks of the model and the programs (default 2)")
    parser.add_argument("--sizes", help="message sizes, e.g. 256,4K,32K,256K (the default)")
    parser.add_argument("--iterations", type=int, default=5000, help="iterations of each program's loop (default 5000)")
    parser.add_argument("--programs", help=f"comma-separated programs (default all: "
                        f"{', '.join(p.name for p in PROGRAMS)})")
    parser.add_argument("--repeat", type=int, default=1,
                        help="do everything (model and programs) N times; the table gives the median and spread")
    parser.add_argument("--launches", type=int, default=3,
                        help="untraced runs of each program at each size; its measured time is their median "
                             "(default 3)")
    parser.add_argument("--slowed-passes", type=int, default=2,
                        help="launch a program again, after the other rows of its repeat, while every "
                             "launch of it ran on a core the host slowed: at most K passes (default 2; "
                             "0: never)")
    parser.add_argument("--model-launches", type=int, default=3,
                        help="runs of the model's measurement; each point is the median of its runs' "
                             "(default 3)")
    parser.add_argument("--precision", type=float, default=0.02,
                        help="the model's measurement: relative CI half-width to reach (default 0.02)")
    parser.add_argument("--max-time", type=float, default=0.3,
                        help="the model's measurement: most seconds per point (default 0.3)")
    parser.add_argument("--model-sizes", default="0:1M",
                        help="sizes the model is measured at, besides the programs' own --sizes"
                             " (default 0:1M, powers of two)")
    parser.add_argument("--no-probes-after", action="store_true",
                        help="do not measure the programs' probes again after them (the drift column)")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")


def _options(args: argparse.Namespace) -> ValidateOptions:
    if not 1 <= args.np <= 1024:
        raise UsageError("--np must be between 1 and 1024")
    if not 1 <= args.iterations <= 1 << 30:
        raise UsageError("--iterations must be between 1 and 1073741824")
    if not 1 <= args.repeat <= 100:
        raise UsageError("--repeat must be between 1 and 100")
    if not 1 <= args.launches <= 100:
        raise UsageError("--launches must be between 1 and 100")
    if not 0 <= args.slowed_passes <= 100:
        raise UsageError("--slowed-passes must be between 0 and 100")
    if not 1 <= args.model_launches <= 100:
        raise UsageError("--model-launches must be between 1 and 100")
    if not 0 < args.precision < 1:
        raise UsageError("--precision must be between 0 and 1 (0.02 means 2%)")
    if not (args.max_time > 0 and math.isfinite(args.max_time)):
        raise UsageError("--max-time must be a positive number of seconds")
    sizes = list(DEFAULT_SIZES)
    if args.sizes is not None:
        sizes = [parse_size(s.strip(), "--sizes", 1 << 30) for s in args.sizes.split(",")]
    from commchar.measure.plan import parse_sizes

    parse_sizes(args.model_sizes)  # refused here, before anything runs
    programs = [p.name for p in parse_programs(args.programs)]
    return ValidateOptions(programs=programs, sizes=list(dict.fromkeys(sizes)), np=args.np,
                           iterations=args.iterations, repeat=args.repeat, launches=args.launches,
                           model_launches=args.model_launches, slowed_passes=args.slowed_passes,
                           precision=args.precision,
                           max_time=args.max_time, model_sizes=args.model_sizes,
                           probes_after=not args.no_probes_after)


class _Progress(Observer):
    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.task = progress.add_task("starting", total=None)
        self.total = 0

    def planned(self, steps: int) -> None:
        self.total = steps
        self.progress.update(self.task, total=steps)

    def more(self, steps: int) -> None:
        self.total += steps
        self.progress.update(self.task, total=self.total)

    def step(self, description: str) -> None:
        self.progress.update(self.task, description=visible(description))

    def done(self) -> None:
        self.progress.update(self.task, advance=1)


def execute(args: argparse.Namespace, console: Console) -> int:
    options = _options(args)
    libraries = select(args.library.split(",") if args.library else None, mpi_only=True)
    with Store(args.db) as store:
        store.lock_for_measuring()
        try:
            # with --json standard output holds the document alone
            with sweep_progress(terminal.console(stderr=True) if args.json else console) as progress:
                doc = validate(store, libraries, options, _Progress(progress))
        except KeyboardInterrupt:
            raise Interrupted("validate: stopped; the model runs and traces so far are kept") from None
        doc["id"] = save_validation(store, doc)
    if args.json:
        console.print_json(json.dumps(doc))
    else:
        console.print(table_rich(summary_table(doc)))
        console.print(f"validation {doc['id']} stored in {args.db} (commchar report shows it)", markup=False)
    return 0


def _err(value: float | None) -> str:
    return "" if value is None else f"{value:+.1f}%"


def _spread(pair: list[float] | None) -> str:
    return "" if not pair else f"{pair[0]:+.1f} .. {pair[1]:+.1f}"


def summary_table(doc: dict[str, Any]) -> Table:
    """The median over repeats of each (library, program, size), with each error's spread."""
    rows = []
    for e in doc["summary"]:
        probe = e.get("probe_us")
        rows.append([e["library"], e["program"], str(e["bytes"]), str(e["p"]), f"{e['measured_us']:.3f}",
                     "" if probe is None else f"{probe:.3f}", _err(e.get("probe_drift_pct")),
                     f"{e['loggps_us']:.3f}", _err(e["loggps_error_pct"]), _spread(e["loggps_error_range"]),
                     f"{e['loggp_us']:.3f}", _err(e["loggp_error_pct"]), _spread(e["loggp_error_range"])])
    repeats = doc["options"]["repeat"]
    s_by_library = {run["library"]: run["loggp"].get("S") for run in doc["runs"]}
    runs = (f"median of {repeats} runs, each with its own model, spread: smallest .. largest error"
            if repeats > 1 else "one run")
    notes = [f"Time per iteration of each program's loop (us), measured in an untraced run and predicted by "
             f"replaying the trace of a second, traced run; {runs}.",
             "probe: the mean of the kernel's probe of the same operation in the model's run, per "
             "iteration (ping-pong: a round trip), what the model was fitted to; drift: how far that probe "
             "moved when measured again after the programs (the host's own move under the validation).",
             "S (LogGPS rendezvous threshold): " + ", ".join(
                 f"{lib} {int(s)} B" if s is not None else f"{lib} none" for lib, s in s_by_library.items())]
    loads = [e["load_avg_1m"] for e in doc["summary"]]
    cores = os.cpu_count() or 1
    if loads and max(loads) + doc["options"]["np"] > cores:
        notes.append(f"The machine was busy: its 1-minute load average reached {max(loads):.1f} on {cores} "
                     f"core(s) while the programs ran (p = {doc['options']['np']}); a busy-polling rank "
                     "that loses its core makes the measured time the machine's, not the library's.")
    return Table("validation", "Validation: measured and predicted time per iteration",
                 ["library", "program", "bytes", "p", "measured", "probe", "drift", "LogGPS", "error", "spread",
                  "LogGP", "error", "spread"], rows, notes)
