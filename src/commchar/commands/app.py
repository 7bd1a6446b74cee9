"""`commchar app jacobi|gauss`: run an application shipped with commchar over
sizes, process counts and configurations, into the store."""

from __future__ import annotations

import argparse
import math
import signal
import time

from rich.console import Console
from rich.progress import Progress

from commchar.provenance import build_identity
from commchar.terminal import styled, sweep_progress
from commchar.apps.cases import (DEFAULT_FRAGMENT, DEFAULT_GAUSS_SIZES, DEFAULT_JACOBI_ITERATIONS,
                                 DEFAULT_JACOBI_SIZES, DEFAULT_RAISED_THRESHOLD, GAUSS_CONFIGS,
                                 JACOBI_EXCHANGES, AppSweepOptions, Case, impossible)
from commchar.apps.sweep import run_app_sweep
from commchar.errors import Interrupted, UsageError
from commchar.measure.environment import host_info
from commchar.measure.launch import LAUNCHERS
from commchar.measure.libraries import select
from commchar.measure.plan import parse_message_size, parse_np, parse_sizes
from commchar.store import Store

NAME = "app"
HELP = "run the applications commchar ships (Jacobi, Gaussian elimination) into the store"


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="app", metavar="APP", parser_class=type(parser))
    jacobi = sub.add_parser("jacobi", help="Jacobi's method by phase (distribution, computation, "
                            "communication)")
    _common(jacobi, DEFAULT_JACOBI_SIZES, "1,2")
    jacobi.add_argument("--exchange", default=",".join(JACOBI_EXCHANGES),
                        help="exchanges, comma separated (default: allgather,direct,butterfly)")
    jacobi.add_argument("--iterations", type=int, default=DEFAULT_JACOBI_ITERATIONS,
                        help=f"iterations per run (default {DEFAULT_JACOBI_ITERATIONS})")
    gauss = sub.add_parser("gauss", help="Gaussian elimination: original, raised-threshold and "
                           "fragmented pivot rows")
    _common(gauss, DEFAULT_GAUSS_SIZES, "2")
    gauss.add_argument("--configs", default=",".join(GAUSS_CONFIGS),
                       help="configurations (default: original,raised,fragmented)")
    gauss.add_argument("--raised-threshold", default=str(DEFAULT_RAISED_THRESHOLD), metavar="BYTES",
                       help=f"the raised rendezvous threshold (default {DEFAULT_RAISED_THRESHOLD})")
    gauss.add_argument("--fragment", default=str(DEFAULT_FRAGMENT), metavar="BYTES",
                       help=f"largest message of the fragmented code (default {DEFAULT_FRAGMENT})")
    predict = sub.add_parser("predict", help="predict the stored application runs from a model "
                             "file under LogGPS and LogGP (trace replay), into the store")
    predict.add_argument("--model", required=True, metavar="FILE", help="commchar model file")
    predict.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    predict.add_argument("--run", dest="runs", type=int, action="append", metavar="ID",
                         help="application sweep to predict (repeatable; default: every one)")
    predict.add_argument("--library", help="model of this library for every case (default: each "
                         "case's own library)")
    predict.add_argument("--collectives", choices=("charged", "expanded"), default="charged",
                         help="collectives charged at the model's T(n, p) where it has them (else "
                         "expanded), or expanded into the library's algorithm (as commchar replay)")
    predict.add_argument("--again", action="store_true",
                         help="predict again cases already predicted from this model file")


def _common(parser: argparse.ArgumentParser, sizes: list[int], np: str) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")
    parser.add_argument("--sizes", default=",".join(map(str, sizes)),
                        help=f"N, e.g. 32:1024 or 256,512 (default {','.join(map(str, sizes))})")
    parser.add_argument("--np", default=np, help=f"process counts (default {np}); more than the "
                        "cores are run oversubscribed and flagged")
    parser.add_argument("--reps", type=int, default=3,
                        help="untraced runs of each case, their median its time (default 3); one"
                             " traced run more gives the trace its prediction replays")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds one run may take before it is killed (default 600)")
    parser.add_argument("--launcher", choices=LAUNCHERS, default="mpirun")
    parser.add_argument("--hostfile", help="host file for mpirun")
    parser.add_argument("--no-trace", action="store_true",
                        help="run without the tracer (no trace stored, nothing to predict from)")
    parser.add_argument("--resume", type=int, metavar="RUN_ID",
                        help="continue an interrupted sweep with its own options")


def _choices(text: str, allowed: tuple[str, ...], flag: str) -> list[str]:
    chosen = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in chosen if item not in allowed]
    if unknown or not chosen:
        raise UsageError(f"{flag}: '{text}' is not a comma-separated choice of {', '.join(allowed)}")
    return list(dict.fromkeys(chosen))


def _options(args: argparse.Namespace) -> AppSweepOptions:
    if args.reps < 1:
        raise UsageError("--reps must be at least 1")
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise UsageError("--timeout must be a positive number of seconds")
    sizes = parse_sizes(args.sizes)
    if not sizes or min(sizes) < 1 or max(sizes) > 65536:
        raise UsageError(f"--sizes: N must be from 1 to 65536, not '{args.sizes}'")
    options = AppSweepOptions(
        app=args.app, libraries=[s.strip() for s in args.library.split(",")] if args.library else None,
        sizes=sizes, np=parse_np(args.np, smallest=1), reps=args.reps, timeout=args.timeout,
        launcher=args.launcher, hostfile=args.hostfile, trace=not args.no_trace)
    if args.app == "jacobi":
        options.configs = _choices(args.exchange, JACOBI_EXCHANGES, "--exchange")
        if not 1 <= args.iterations <= 1 << 30:  # the program's own bound (apps/jacobi.c)
            raise UsageError(f"--iterations must be from 1 to {1 << 30}, not {args.iterations}")
        options.iterations = args.iterations
    else:
        options.configs = _choices(args.configs, GAUSS_CONFIGS, "--configs")
        options.raised_threshold = parse_message_size(args.raised_threshold, "--raised-threshold")
        options.fragment = parse_message_size(args.fragment, "--fragment")
        if options.fragment < 8 or options.fragment % 8:
            raise UsageError("--fragment must be a positive multiple of 8 bytes (whole doubles)")
    return options


class _ProgressObserver:
    def __init__(self, progress: Progress, console: Console) -> None:
        self.progress, self.console = progress, console
        self.task = progress.add_task("starting", total=None)

    def planned(self, repetitions: int, skipped_cases: int) -> None:
        self.progress.update(self.task, total=repetitions)
        if skipped_cases:
            self.console.print(f"{skipped_cases} cases already done: not run again")

    def case_started(self, library: str, case: Case, oversubscribed: bool) -> None:
        flag = " (oversubscribed)" if oversubscribed else ""
        self.progress.update(self.task, description=f"{library} {case.app} {case.config} "
                             f"N={case.n} p={case.p}{flag}")

    def repetition_done(self) -> None:
        self.progress.advance(self.task)

    def case_stored(self, library: str, case: Case, record: dict) -> None:
        pass

    def failure(self, library: str, case: Case, kind: str, message: str,
                repetitions_left: int) -> None:
        self.progress.advance(self.task, 1 + repetitions_left)
        self.console.print(styled((kind, "red"), f": {library} {case.app} {case.config} N={case.n} "
                                  f"p={case.p}: {message}"))


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a batch system's TERM stops the sweep as cleanly as Ctrl-C


def _say_what_cannot_run(options: AppSweepOptions, console: Console) -> None:
    """Cases the program would refuse are left out, and said; a sweep of none is refused."""
    reasons = impossible(options)
    requested = len(options.np) * len(options.sizes) * len(options.configs)
    if sum(reasons.values()) == requested:
        raise UsageError(f"commchar app {options.app}: no requested case can run "
                         f"({'; '.join(reasons)})")
    for reason, count in reasons.items():
        console.print(f"left out: {count} case(s) where {reason}")


def execute(args: argparse.Namespace, console: Console) -> int:
    if not args.app:
        raise UsageError("commchar app: name the application (jacobi, gauss) or predict")
    if args.app == "predict":
        from commchar.commands._app_predict import predict_stored

        return predict_stored(args, console)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    if args.resume is None:  # checked before the store: a refused sweep makes none
        requested = _options(args)
        _say_what_cannot_run(requested, console)
        libraries = select(requested.libraries, mpi_only=True)
    with Store(args.db) as store:
        if args.resume is not None:
            run = store.run(args.resume)
            if run["options"].get("kind") != "app" or run["options"].get("app") != args.app:
                raise UsageError(f"run {args.resume} is not a `commchar app {args.app}` sweep")
            options = AppSweepOptions.from_dict(run["options"])
            libraries = select(options.libraries, mpi_only=True)
            run_id = args.resume
            store.set_run_status(run_id, "running")
        else:
            options = requested
            options.libraries = [lib.name for lib in libraries]
            run_id = store.create_run(build_identity(), host_info(), {"kind": "app", **options.to_dict()})
        console.print(f"run {run_id}: {options.app} on {', '.join(lib.name for lib in libraries)}, "
                      f"N = {', '.join(map(str, options.sizes))}, p = {', '.join(map(str, options.np))}"
                      f", {options.reps} runs per case{' and one traced' if options.trace else ''},"
                      f" database {args.db}")
        started = time.monotonic()
        try:
            with sweep_progress(console) as progress:
                result = run_app_sweep(store, run_id, options, libraries,
                                       _ProgressObserver(progress, console))
        except (KeyboardInterrupt, Interrupted):
            store.set_run_status(run_id, "interrupted")
            raise Interrupted(f"run {run_id} stopped; finished cases are kept; continue with "
                              f"`commchar app {options.app} --db {args.db} --resume {run_id}`") from None
        except BaseException:
            store.set_run_status(run_id, "failed")
            raise
        store.set_run_status(run_id, "complete")
        console.print(f"run {run_id} complete in {time.monotonic() - started:.1f} s: "
                      f"{result.stored} cases stored"
                      f"{f', {result.skipped} already done' if result.skipped else ''}, "
                      f"{result.failures} failures")
    return 0
