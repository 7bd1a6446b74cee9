"""`commchar run`: measure every operation of every MPI library found, store every sample."""

from __future__ import annotations

import argparse
import math
import signal
import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from commchar import __version__
from commchar.errors import Interrupted, UsageError
from commchar.measure.environment import host_info
from commchar.measure.launch import LAUNCHERS, LaunchSpec, available_slots
from commchar.measure.libraries import select
from commchar.measure.operations import parse_ops
from commchar.measure.plan import Point, parse_np, parse_sizes
from commchar.measure.runner import SweepOptions, ops_for, run_sweep
from commchar.store import Store

NAME = "run"
HELP = "measure point-to-point and collective communication of the MPI libraries found"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")
    parser.add_argument("--ops", help="operations, e.g. pingpong,bcast,reduce:nop (default: all)")
    parser.add_argument("--sizes", help="sizes, e.g. 0:4M, 0,8,1K, 1K:1M:x4 (default: 0 and powers "
                        "of two to 4 MiB point-to-point, 1 MiB collectives)")
    parser.add_argument("--np", help="process counts, e.g. 2,4,8 or 2:8 (default: 2, 3, 4 and the "
                        "powers of two up to the cores)")
    parser.add_argument("--precision", type=float, default=0.01,
                        help="relative half-width of the median's 95%% CI to reach (default 0.01)")
    parser.add_argument("--max-time", type=float, default=1.0,
                        help="most seconds of measurement per point (default 1)")
    parser.add_argument("--max-reps", type=int, default=100000, help="most repetitions per point")
    parser.add_argument("--min-reps", type=int, default=10, help="fewest repetitions per point")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds a job may stay silent before it is killed (default 60)")
    parser.add_argument("--sync", choices=("barrier", "none"), default="barrier",
                        help="start synchronization before each collective repetition")
    parser.add_argument("--launcher", choices=LAUNCHERS, default="mpirun",
                        help="the library's own mpirun, or Slurm's srun")
    parser.add_argument("--hostfile", help="host file for mpirun")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set a variable in the job's environment (repeatable), e.g. "
                        "OMPI_MCA_btl_vader_eager_limit=8192")
    parser.add_argument("--resume", type=int, metavar="RUN_ID",
                        help="continue an interrupted run with its own options")


def _default_np() -> list[int]:
    cores = available_slots(LaunchSpec())
    powers = {1 << k for k in range(1, max(cores, 1).bit_length() + 1) if (1 << k) <= cores}
    return sorted({2, 3, 4} | powers)


def _options_from_args(args: argparse.Namespace) -> SweepOptions:
    if not 0 < args.precision < 1:
        raise UsageError("--precision must be between 0 and 1 (0.01 means 1%)")
    for flag, value in (("--max-time", args.max_time), ("--timeout", args.timeout)):
        if not (value > 0 and math.isfinite(value)):
            raise UsageError(f"{flag} must be a positive number of seconds")
    if args.min_reps < 1 or args.max_reps < args.min_reps:
        raise UsageError("--min-reps must be at least 1 and --max-reps at least --min-reps")
    env = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not key.replace("_", "").isalnum():
            raise UsageError(f"--env: '{item}' is not KEY=VALUE")
        env[key] = value
    options = SweepOptions(
        libraries=[s.strip() for s in args.library.split(",")] if args.library else None,
        ops=args.ops, sizes=args.sizes,
        np=parse_np(args.np) if args.np else _default_np(),
        precision=args.precision, min_reps=args.min_reps, max_reps=args.max_reps,
        max_time=args.max_time, timeout=args.timeout, sync=args.sync,
        launcher=args.launcher, hostfile=args.hostfile, env=env,
    )
    parse_ops(options.ops)  # validate before anything is launched
    if options.sizes:
        parse_sizes(options.sizes)
    return options


class _ProgressObserver:
    def __init__(self, progress: Progress, console: Console) -> None:
        self.progress, self.console = progress, console
        self.task = progress.add_task("starting", total=None)

    def planned(self, total_points: int) -> None:
        self.progress.update(self.task, total=total_points)

    def job_started(self, library: str, p: int, points: int, oversubscribed: bool) -> None:
        flag = " (oversubscribed)" if oversubscribed else ""
        self.progress.update(self.task, description=f"{library} p={p}{flag}")

    def point_stored(self, library: str, p: int, point: dict, summary: dict) -> None:
        key = f"{point['op']}:{point['variant']}" if point.get("variant") else point["op"]
        self.progress.update(self.task, advance=1,
                             description=f"{library} p={p} {key} {point['n_bytes']} B")
        if not point.get("valid", True):
            self.console.print(f"[yellow]invalid result[/]: {library} p={p} {key} "
                               f"n={point['n_bytes']}: {point.get('error', '')}", markup=True)

    def failure(self, library: str, p: int, point: Point, kind: str, message: str) -> None:
        self.progress.update(self.task, advance=1)
        self.console.print(f"[red]{kind}[/]: {library} p={p} {point.key} n={point.n_bytes}: {message}",
                           markup=True, highlight=False)


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a batch system's TERM stops the run as cleanly as Ctrl-C


def execute(args: argparse.Namespace, console: Console) -> int:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with Store(args.db) as store:
        if args.resume is not None:
            run = store.run(args.resume)
            options = SweepOptions.from_dict(run["options"])
            libraries = select(options.libraries)
            run_id = args.resume
            store.set_run_status(run_id, "running")
        else:
            options = _options_from_args(args)
            libraries = select(options.libraries)
            for library in libraries:
                ops_for(library, options.ops)  # every library has something to measure
            options.libraries = [lib.name for lib in libraries]
            run_id = store.create_run(__version__, host_info(), options.to_dict())
        console.print(f"run {run_id}: {', '.join(lib.name for lib in libraries)}, "
                      f"p = {', '.join(map(str, options.np))}, database {args.db}")
        started = time.monotonic()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn())
        try:
            with Progress(*columns, console=console, transient=False) as progress:
                result = run_sweep(store, run_id, options, libraries,
                                   _ProgressObserver(progress, console))
        except KeyboardInterrupt:
            store.set_run_status(run_id, "interrupted")
            raise Interrupted(f"run {run_id} stopped; everything measured is kept; continue with "
                              f"`commchar run --db {args.db} --resume {run_id}`") from None
        except BaseException:
            store.set_run_status(run_id, "failed")
            raise
        store.set_run_status(run_id, "complete")
        elapsed = time.monotonic() - started
        console.print(f"run {run_id} complete in {elapsed:.1f} s: {result.stored} points stored"
                      f"{f', {result.skipped} already measured' if result.skipped else ''}, "
                      f"{result.invalid} invalid, {result.failures} failures")
    return 0
