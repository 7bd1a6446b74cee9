"""`commchar run`: measure every operation of every MPI library found, store every sample."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from commchar.provenance import build_identity
from commchar.errors import InputError, Interrupted, MeasurementError, UsageError
from commchar.measure.environment import host_info
from commchar.measure.placement import POLICIES
from commchar.measure.launch import LAUNCHERS, LaunchSpec, available_slots, parse_env
from commchar.measure.libraries import Library, select
from commchar.measure.operations import parse_ops
from commchar.measure.adaptive import CHEAP_BYTES, LONG_MIN_REPS, Record
from commchar.measure.plan import ADAPTIVE, DEFAULT_MIN_REPS, Point, parse_np, parse_sizes, size_rule
from commchar.measure.again import AgainResult
from commchar.measure.refine import RefineResult
from commchar.measure.rules import coarse_precision, measuring_max_time, measuring_precision, run_rule
from commchar.measure.runner import (DEFAULT_BATCH_MIN_US, DEFAULT_WINDOW_FACTOR, SYNC_METHODS, SweepOptions,
                                     ops_for, run_sweep)
from commchar.store import Store, owner
from commchar.vocabulary import parse_size
from commchar.terminal import styled, sweep_progress, visible

# The kernel's own bounds (kernels/core/cc_options.c): refused here, before any launch.
KERNEL_MAX_REPS = 100_000_000
KERNEL_MAX_TIME_S = 1e6
KERNEL_MAX_WINDOW_FACTOR = 1e6
KERNEL_MAX_WINDOW_US = 1e7
KERNEL_MAX_BATCH_MIN_US = 1e6  # the kernel's bound on --batch-min-us
KERNEL_MAX_BYTES = 1 << 40
# More ranks per core than this is almost certainly a typo; --force-np launches it anyway.
MAX_RANKS_PER_SLOT = 64

NAME = "run"
HELP = "measure point-to-point and collective communication of the MPI libraries found"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    parser.add_argument("--library", help="comma-separated libraries (default: every one found)")
    parser.add_argument("--ops", help="operations, e.g. pingpong,bcast,reduce:nop (default: all)")
    parser.add_argument("--sizes", help="sizes, e.g. 0:4M, 0,8,1K, 1K:1M:x4, measured as given; or a rule:"
                        " grid (default: 0 and every power of two to 4 MiB point-to-point, 1 MiB"
                        " collectives), adaptive (a coarse grid, then sizes where the model being"
                        " fitted is uncertain, docs/method.md), dense (grid and the midpoints)")
    parser.add_argument("--np", help="process counts, e.g. 2,4,8 or 2:8 (default: 2, 3, 4 and the "
                        "powers of two up to the cores)")
    parser.add_argument("--precision", type=float, default=0.01,
                        help="relative half-width of the median's 95%% CI to reach (default 0.01);"
                             " under --sizes adaptive the coarse grid's points are measured to 5"
                             " times it, the sizes added to 3 times it, and the model's predicted"
                             " times must be known to 3 times it")
    parser.add_argument("--max-time", type=float, default=1.0,
                        help="most seconds of measurement per point (default 1; under --sizes"
                             " adaptive at most 0.1)")
    parser.add_argument("--max-reps", type=int, default=100000, help="most repetitions per point")
    parser.add_argument("--min-reps", type=int, default=DEFAULT_MIN_REPS,
                        help=f"fewest repetitions per point (default {DEFAULT_MIN_REPS}; under --sizes"
                             f" adaptive {LONG_MIN_REPS} at the sizes it chooses of {CHEAP_BYTES // 1024} KiB"
                             " or more, unless given)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds a job may stay silent before it is killed (default 60)")
    parser.add_argument("--sync", choices=SYNC_METHODS, default="auto",
                        help="start synchronization of each collective repetition: auto (default:"
                             " none for allreduce, alltoall, allgather, reduce_scatter and barrier, whose"
                             " calls synchronize their ranks, a barrier for the others), barrier, none, or"
                             " window: at common start times on offset-corrected clocks, repetitions that"
                             " start late redone (docs/kernel-protocol.md)")
    parser.add_argument("--sync-window-factor", type=float, default=DEFAULT_WINDOW_FACTOR, metavar="F",
                        help="--sync window: each window is F times an estimate of one"
                             f" repetition (default {DEFAULT_WINDOW_FACTOR:g})")
    parser.add_argument("--sync-window-us", type=float, default=0.0, metavar="US",
                        help="--sync window: a fixed window of US microseconds instead (default 0: from F)")
    parser.add_argument("--cache", choices=("warm", "cold"), default="warm",
                        help="cold: every repetition uses send and receive buffers out of the"
                        " last-level cache (rotated over twice its size); stored with each point and"
                        " fitted apart from warm (default warm)")
    parser.add_argument("--cache-limit", metavar="SIZE",
                        help="most memory a rank's cold buffers may take, e.g. 2G (default 1 GiB);"
                        " a point that would need more is recorded as unsupported")
    parser.add_argument("--buffer-offset", type=int, default=16, metavar="B",
                        help="message buffers start B bytes past a page boundary, 0 to 4095 (default 16,"
                             " where malloc puts a large block); fit a run of another offset apart (--run)")
    parser.add_argument("--recv-offset", type=int, default=None, metavar="B",
                        help="receive buffers start B bytes past a page boundary instead, 0 to 4095 (a"
                             " copy's speed may depend on where its two ends lie; docs/validation.md)")
    parser.add_argument("--batch-min-us", type=float, default=DEFAULT_BATCH_MIN_US, metavar="US",
                        help="a point whose calls are timed in batches times at least US microseconds a"
                             f" sample (default {DEFAULT_BATCH_MIN_US:g}; 0: only the timer's resolution"
                             " decides): a sample's bounds, its timer reads and the ranks' skew where"
                             " the slowest rank's time is kept, stay a small part of it (docs/method.md)")
    parser.add_argument("--heap", choices=("steady", "as-is"), default="steady",
                        help="steady (default): the library's temporary buffers are reused warm, as in"
                             " a loop whose heap keeps its pages; as-is: glibc's defaults, where a"
                             " temporary at the heap's top is given back and faulted in on every call"
                             " (docs/method.md)")
    parser.add_argument("--launcher", choices=LAUNCHERS, default="mpirun",
                        help="the library's own mpirun, or Slurm's srun")
    parser.add_argument("--hostfile", help="host file for mpirun ('host slots=N' or 'host:N' lines)")
    parser.add_argument("--placement", choices=POLICIES, default="block",
                        help="where collectives' ranks go on several hosts: fill each host (block,"
                        " default) or one per host in turn (cyclic); point-to-point is measured"
                        " both on-node and off-node")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set a variable in the job's environment (repeatable), e.g. "
                        "OMPI_MCA_btl_vader_eager_limit=8192")
    parser.add_argument("--no-refine", dest="refine", action="store_false",
                        help="do not measure extra sizes where the curve changes (the rndv jump, "
                             "regime breakpoints of the ping-pong latency)")
    parser.add_argument("--refine-budget", type=float, metavar="SECONDS",
                        help="most seconds spent refining (default: 12%% of the sweep's time, at "
                             "least 30 s)")
    parser.add_argument("--force-np", action="store_true",
                        help=f"launch even more than {MAX_RANKS_PER_SLOT} ranks per core (refused otherwise)")
    parser.add_argument("--resume", type=int, metavar="RUN_ID",
                        help="continue an interrupted run with its own options (no other option may"
                             " be given); points that failed are measured again")


def _default_np() -> list[int]:
    cores = available_slots(LaunchSpec())
    powers = {1 << k for k in range(1, max(cores, 1).bit_length() + 1) if (1 << k) <= cores}
    return sorted({2, 3, 4} | powers)


def _options_from_args(args: argparse.Namespace) -> SweepOptions:
    if not 0 < args.precision < 1:
        raise UsageError("--precision must be between 0 and 1 (0.01 means 1%)")
    for flag, value in (("--max-time", args.max_time), ("--timeout", args.timeout),
                        ("--refine-budget", 1.0 if args.refine_budget is None else args.refine_budget)):
        if not (value > 0 and math.isfinite(value)):
            raise UsageError(f"{flag} must be a positive number of seconds")
    if args.min_reps < 1 or args.max_reps < args.min_reps:
        raise UsageError("--min-reps must be at least 1 and --max-reps at least --min-reps")
    if args.max_reps > KERNEL_MAX_REPS:
        raise UsageError(f"--max-reps {args.max_reps} is more than the kernel takes ({KERNEL_MAX_REPS})")
    if args.max_time > KERNEL_MAX_TIME_S:
        raise UsageError(f"--max-time {args.max_time:g} is more than the kernel takes ({KERNEL_MAX_TIME_S:g} s)")
    if not (1 <= args.sync_window_factor <= KERNEL_MAX_WINDOW_FACTOR):
        raise UsageError(f"--sync-window-factor must be between 1 and {KERNEL_MAX_WINDOW_FACTOR:g}")
    if not (0 <= args.sync_window_us <= KERNEL_MAX_WINDOW_US):
        raise UsageError(f"--sync-window-us must be between 0 and {KERNEL_MAX_WINDOW_US:g} microseconds")
    if args.sync != "window" and (args.sync_window_factor != DEFAULT_WINDOW_FACTOR or args.sync_window_us):
        raise UsageError("--sync-window-factor and --sync-window-us need --sync window")
    if not (0 <= args.batch_min_us <= KERNEL_MAX_BATCH_MIN_US):
        raise UsageError(f"--batch-min-us must be between 0 and {KERNEL_MAX_BATCH_MIN_US:g} microseconds")
    if args.recv_offset is not None and args.cache == "cold":
        raise UsageError("--recv-offset needs warm buffers: --cache cold starts every buffer on a page")
    env = parse_env(args.env)
    options = SweepOptions(
        libraries=_libraries(args.library) if args.library is not None else None,
        ops=args.ops, sizes=args.sizes,
        np=parse_np(args.np) if args.np is not None else _default_np(),
        precision=args.precision, min_reps=args.min_reps, max_reps=args.max_reps,
        max_time=args.max_time, timeout=args.timeout, sync=args.sync,
        sync_window_factor=args.sync_window_factor, sync_window_us=args.sync_window_us,
        cache=args.cache, cache_limit=_cache_limit(args.cache_limit),
        buffer_offset=_buffer_offset(args.buffer_offset, "--buffer-offset"),
        recv_offset=None if args.recv_offset is None else _buffer_offset(args.recv_offset, "--recv-offset"),
        heap=args.heap, batch_min_us=args.batch_min_us,
        launcher=args.launcher, hostfile=args.hostfile, env=env, placement=args.placement,
        refine=args.refine, refine_budget=args.refine_budget,
    )
    parse_ops(options.ops)  # validate before anything is launched
    if options.sizes is not None and size_rule(options.sizes) is None:
        parse_sizes(options.sizes)  # '' is an error, not the defaults
    _check_ranks_per_core(options, args.force_np)
    return options


def _cache_limit(text: str | None) -> int | None:
    if text is None:
        return None
    limit = parse_size(text, "--cache-limit", KERNEL_MAX_BYTES)
    if limit < 1:
        raise UsageError("--cache-limit must be at least 1 byte")
    return limit


def _buffer_offset(value: int, flag: str) -> int:
    if not 0 <= value <= 4095:
        raise UsageError(f"{flag} must be 0 to 4095 bytes (within a page), not {value}")
    return value


def _measures_any(library: Library, ops: str) -> bool:
    try:
        return bool(ops_for(library, ops))
    except UsageError:
        return False


def _libraries(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",")]
    if not all(names):
        raise UsageError(f"--library: empty name in '{text}'")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(f"--library: {', '.join(duplicates)} given twice")
    return names


def _check_ranks_per_core(options: SweepOptions, force: bool) -> None:
    """Refuse, before any launcher sees it, a p that would time-share each core among
    more than MAX_RANKS_PER_SLOT ranks (a typo such as --np 100000 on a laptop)."""
    if options.launcher != "mpirun" or force:
        return  # srun knows its allocation and refuses what does not fit
    slots = available_slots(LaunchSpec(hostfile=Path(options.hostfile) if options.hostfile else None))
    p = max(options.np)
    if p > slots * MAX_RANKS_PER_SLOT:
        raise UsageError(f"--np {p} is {p // slots} ranks per core on {slots} core(s), more than"
                         f" {MAX_RANKS_PER_SLOT}: give --force-np to launch it anyway")


def _check_resume_alone(args: argparse.Namespace) -> None:
    """--resume continues a run with the options it was started with: any other is refused."""
    parser = argparse.ArgumentParser()
    configure(parser)
    defaults = vars(parser.parse_args([]))
    given = [name for name, value in vars(args).items()
             if name in defaults and name not in ("db", "resume") and value != defaults[name]]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise UsageError(f"--resume continues run {args.resume} with its own options; {flags}"
                         " cannot be changed (start a new run instead)")


class _ProgressObserver:
    def __init__(self, progress: Progress, console: Console) -> None:
        self.progress, self.console = progress, console
        self.task = progress.add_task("starting", total=None)
        self.total = 0

    def planned(self, total_points: int) -> None:
        self.total = total_points
        self.progress.update(self.task, total=total_points)

    def job_started(self, library: str, p: int, points: int, oversubscribed: bool) -> None:
        flag = " (oversubscribed)" if oversubscribed else ""
        self.progress.update(self.task, description=visible(f"{library} p={p}{flag}"))

    def point_stored(self, library: str, p: int, point: dict, summary: dict) -> None:
        key = f"{point['op']}:{point['variant']}" if point.get("variant") else point["op"]
        self.progress.update(self.task, advance=1,
                             description=visible(f"{library} p={p} {key} {point['n_bytes']} B"))
        if not point.get("valid", True):
            self.console.print(styled(("invalid result", "yellow"), f": {library} p={p} {key} "
                                      f"n={point['n_bytes']}: {point.get('error', '')}"))

    def refining(self, round_no: int, points: int) -> None:
        self.total += points
        self.progress.update(self.task, total=self.total,
                             description=f"{self.rounds_name}, round {round_no}")

    rounds_name = "refining thresholds"

    def measuring_again(self, points: int) -> None:
        self.total += points
        self.progress.update(self.task, total=self.total,
                             description="measuring again what the cores' move put in another state")

    def failure(self, library: str, p: int, point: Point, kind: str, message: str) -> None:
        self.progress.update(self.task, advance=1)
        self.console.print(styled((kind, "red"), f": {library} p={p} {point.key} n={point.n_bytes}: {message}"))


def _again_summary(again: AgainResult | None) -> str:
    if again is None or not again.points:
        return ""
    text = f"; {again.points} measured with the cores of ranks 0 and 1 in another state, measured again"
    return text + (f" ({again.still} still in another state: the fit says which)" if again.still else "")


def _refinement_summary(refined: RefineResult | None, record: Record | None = None) -> str:
    if record is not None and refined is not None:
        text = (f"; adaptive sizes: {refined.points} added in {refined.rounds} round(s) to the coarse grid"
                f" ({len(record.final)} series modelled")
        if refined.open_changes:
            why = "the budget ran out" if refined.out_of_budget else "rounds ran out"
            text += f", {refined.open_changes} still asking for sizes when {why}"
        return text + ")"
    if refined is None or not (refined.points or refined.open_changes):
        return ""
    text = f"; {refined.points} sizes refined in {refined.rounds} round(s)"
    if refined.open_changes:
        why = "the refinement budget ran out" if refined.out_of_budget else "rounds ran out"
        text += f", {refined.open_changes} threshold(s) not pinned ({why}; --refine-budget)"
    return text


def execute(args: argparse.Namespace, console: Console) -> int:
    if args.resume is not None:
        _check_resume_alone(args)
        store = Store(args.db, create=False)
    else:
        options = _options_from_args(args)
        store = Store(args.db)
    with store:
        store.lock_for_measuring()
        if args.resume is not None:
            run = store.run(args.resume)
            previous = (run["host"] or {}).get("owner")
            if run["status"] == "running" and owner.alive(previous):
                raise InputError(f"run {args.resume} is still measuring ({owner.describe(previous)});"
                                 " wait for it or stop it before resuming")
            options = SweepOptions.from_dict(run["options"])
            libraries = select(options.libraries)
            run_id = args.resume
            if owner.run_status(run) == "died":
                console.print(f"run {run_id}: its process ({owner.describe(previous)}) died while"
                              " measuring; resuming", markup=False)
            store.set_run_status(run_id, "running")
            store.set_run_owner(run_id, owner.current())
        else:
            libraries = select(options.libraries)
            if options.libraries is None and options.ops is not None:
                # found, not named: one that has none of the operations (PVM) is left out
                libraries = [lib for lib in libraries if _measures_any(lib, options.ops)] or libraries
            for library in libraries:
                ops_for(library, options.ops)  # every library has something to measure
            options.libraries = [lib.name for lib in libraries]
            run_id = store.create_run(build_identity(), {**host_info(), "owner": owner.current()},
                                      options.to_dict())
        console.print(f"run {run_id}: {', '.join(lib.name for lib in libraries)}, "
                      f"p = {', '.join(map(str, options.np))}, database {args.db}")
        rule = size_rule(options.sizes)
        record = Record() if rule == ADAPTIVE else None
        if rule is not None:
            loose, coarse = measuring_precision(options, rule), coarse_precision(options, rule)
            precision = (f"{100 * loose:g}%" if coarse == loose else
                         f"{100 * coarse:g}% (the coarse grid), {100 * loose:g}% (the probes, the sizes added)")
            console.print(f"sizes: {rule}, each point to {precision} or {measuring_max_time(options, rule):g} s"
                          + (" (docs/method.md \"Which sizes\")" if rule == ADAPTIVE else ""))
        started = time.monotonic()
        try:
            with sweep_progress(console) as progress:
                observer = _ProgressObserver(progress, console)
                if rule is None:
                    result = run_sweep(store, run_id, options, libraries, observer)
                else:
                    observer.rounds_name = "choosing sizes" if rule == ADAPTIVE else observer.rounds_name
                    result = run_rule(store, run_id, options, libraries, observer, rule, record)
        except KeyboardInterrupt:
            store.set_run_status(run_id, "interrupted")
            raise Interrupted(f"run {run_id} stopped; everything measured is kept; continue with "
                              f"`commchar run --db {args.db} --resume {run_id}`") from None
        except BaseException:
            store.set_run_status(run_id, "failed")
            raise
        elapsed = time.monotonic() - started
        summary = (f"{result.stored} points stored"
                   f"{f', {result.skipped} already measured' if result.skipped else ''}"
                   f"{f', {result.retried} failed before and retried' if result.retried else ''}, "
                   f"{result.invalid} invalid, {result.failures} failures"
                   + (f", {result.unsupported} unsupported by the library"
                      + (" or with cold buffers (the report says why)" if options.cache == "cold" else "")
                      if result.unsupported else "")
                   + _again_summary(result.again)
                   + _refinement_summary(result.refined, record))
        if result.launch_failures:
            # Points no job could even start on are not measurements: the run is not complete.
            store.set_run_status(run_id, "failed" if result.launched_nothing else "incomplete")
            raise MeasurementError(
                f"run {run_id}: {summary}; {result.launch_failures} points could not be measured because"
                f" their job failed at launch ({result.launch_error}); fix the cause and continue with"
                f" `commchar run --db {args.db} --resume {run_id}`")
        store.set_run_status(run_id, "complete")
        console.print(f"run {run_id} complete in {elapsed:.1f} s: {summary}")
    return 0
