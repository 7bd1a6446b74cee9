"""Run a sweep: one job per (library, p), each point stored as it arrives.

A job that crashes is relaunched for the points it did not reach; the point in
flight is recorded as a failure. A job silent for longer than the timeout is
killed and handled the same way. Nothing already stored is measured again, so
an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import collections
import json
import math
import os
import queue
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Protocol

from commchar import processes
from commchar.errors import UsageError
from commchar.measure import hostfailures, pvm
from commchar.measure.build import ensure_kernel
from commchar.measure.job_outcome import JobEnd, classify
from commchar.measure.launch import LaunchSpec, is_oversubscribed, job_command, spec_hosts
from commchar.provenance import file_sha256
from commchar.measure.libraries import Library
from commchar.measure.operations import OpVariant, catalogue, parse_ops
from commchar.measure.placement import Host, hosts_used, locality, other_policy, rank_hosts
from commchar.measure.plan import DEFAULT_MIN_REPS, Point, parse_sizes, plan_argument, points_for
from commchar.measure.again import AgainResult, measure_again
from commchar.measure.refine import RefineResult, default_budget, refine
from commchar.statistics import relative_ci_halfwidth, summarize
from commchar.store import Store
from commchar.store.database import short_version

# Oversubscribed ranks time-share the cores, so a tight precision is rarely
# reachable and a full second per point would make small machines crawl.
OVERSUBSCRIBED_MAX_TIME_S = 0.15
STDERR_TAIL_CHARS = 400
# After the kernel's last line, how long a job may take to exit before it is stopped.
FINALIZE_GRACE_S = 10.0
LAUNCH_CHECK_S = 0.5  # how often a job that has said nothing yet has its stderr read
# Start synchronizations of collectives (kernels/core/cc_sync.c); auto: none for those
# whose calls synchronize their ranks themselves (allreduce, alltoall, allgather,
# reduce_scatter, barrier), barrier for the others; window: the kernel's default factor
# over an estimate of one repetition (untimed runs).
SYNC_METHODS = ("auto", "barrier", "none", "window")
DEFAULT_WINDOW_FACTOR = 4.0
# the kernel's --batch-min-us default (kernels/core/cc_options.c): passed only when it differs
DEFAULT_BATCH_MIN_US = 20.0
CHATTER_LINES = 200  # of a job's stdout that is not the kernel's, kept to explain a failure


@dataclass
class SweepOptions:
    libraries: list[str] | None = None
    ops: str | None = None
    sizes: str | None = None
    np: list[int] = field(default_factory=lambda: [2])
    precision: float = 0.01
    min_reps: int = DEFAULT_MIN_REPS
    max_reps: int = 100000
    max_time: float = 1.0
    timeout: float = 60.0
    sync: str = "auto"
    sync_window_factor: float = DEFAULT_WINDOW_FACTOR
    sync_window_us: float = 0.0  # above 0: a fixed window instead of the factor
    cache: str = "warm"  # cold: every repetition's buffers out of the last-level cache
    cache_limit: int | None = None  # bytes of a rank's cold region; None: the kernel's default
    buffer_offset: int = 16  # message buffers start this many bytes past a page boundary (kernel option)
    recv_offset: int | None = None  # receive buffers start this many instead (None: buffer_offset)
    heap: str = "steady"  # steady: the library's temporaries reused warm; as-is: glibc's defaults
    batch_min_us: float = DEFAULT_BATCH_MIN_US  # a batched sample spans at least this long (kernel option)
    loggp_overheads_below: int = 0  # bytes from which LogGP's probe times its gap alone (0: never)
    launcher: str = "mpirun"
    hostfile: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    placement: str = "block"  # of collectives' ranks on several hosts (block | cyclic)
    refine: bool = True  # measure more sizes where the curve changes (measure/refine.py)
    refine_budget: float | None = None  # seconds; None: a share of the sweep's time

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "SweepOptions":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


class Observer(Protocol):
    """What the command line shows while a sweep runs; the runner never prints."""

    def planned(self, total_points: int) -> None: ...
    def job_started(self, library: str, p: int, points: int, oversubscribed: bool) -> None: ...
    def point_stored(self, library: str, p: int, point: dict, summary: dict) -> None: ...
    def failure(self, library: str, p: int, point: Point, kind: str, message: str) -> None: ...
    def refining(self, round_no: int, points: int) -> None: ...
    def measuring_again(self, points: int) -> None: ...


@dataclass
class SweepResult:
    run_id: int
    stored: int = 0  # new points (those measured again: again.points)
    skipped: int = 0  # already stored by an earlier attempt of the run
    retried: int = 0  # recorded as failed by an earlier attempt, measured again
    failures: int = 0
    unsupported: int = 0  # points the library has no call for (recorded, not failed)
    invalid: int = 0
    launch_failures: int = 0  # points whose job ended before measuring anything
    launch_error: str | None = None  # the first such job's reason
    refined: RefineResult | None = None  # None: refinement was off
    again: AgainResult | None = None  # the points measured again in the cores' main state (None: off)

    @property
    def launched_nothing(self) -> bool:
        """Every job of the run failed before measuring: nothing was measured at all."""
        return self.launch_failures > 0 and self.stored == 0


class _Stream:
    """Lines of a job's stdout, readable with a timeout."""

    def __init__(self, handle: IO[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(handle,), daemon=True)
        self._thread.start()

    def _pump(self, handle: IO[str]) -> None:
        for line in handle:
            self._lines.put(line)
        self._lines.put(None)

    def next(self, timeout: float) -> str | None:
        """The next line; None at end of stream. Raises queue.Empty on timeout."""
        return self._lines.get(timeout=timeout)


@dataclass
class _JobState:
    """What one job has said so far."""

    job_id: int
    points: list[Point]
    oversubscribed: bool
    machine: pvm.Machine | None
    stored: set[Point] = field(default_factory=set)
    in_flight: Point | None = None  # begun and not finished
    kernel_error: str = ""
    outcome: str = "ended"  # job_outcome.OUTCOMES
    chatter: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=CHATTER_LINES))
    by_key: dict[tuple[str, str, int], Point] = field(init=False)

    def __post_init__(self) -> None:
        self.by_key = {(pt.op, pt.variant, pt.n_bytes): pt for pt in self.points}


class _Unreachable(Exception):
    """The job's launch failed on a host ssh did not reach; it will never say a line."""


def _first_line(stream: _Stream, timeout: float, stderr: int) -> str | None:
    """The job's first line, looking at its stderr between waits: raises _Unreachable as soon
    as the launch shows a host ssh did not reach, queue.Empty after `timeout` s of silence."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return stream.next(max(0.0, min(LAUNCH_CHECK_S, left)))
        except queue.Empty:
            if hostfailures.ssh_failure(os.pread(stderr, 1 << 16, 0).decode("utf-8", "replace")):
                raise _Unreachable from None
            if left <= LAUNCH_CHECK_S:
                raise


def _reap(process: subprocess.Popen, outcome: str) -> int:
    """Stops a job that timed out, ran misplaced, lingered or could not reach a host, and waits
    for it: its exit status."""
    stopped = ("timeout", "misplaced", "lingered", "unreachable")
    killed_by = processes.stop(process) if outcome in stopped else None
    exit_status = process.wait()
    processes.finished(process)
    if killed_by is not None and exit_status >= 0:
        # A launcher that traps our SIGTERM exits 0 (MPICH's does); the job did not succeed.
        exit_status = -int(killed_by)
    return exit_status


def plan_work(store: Store, run_id: int, options: SweepOptions, libraries: list[Library],
              hosts: list[Host] | None, result: SweepResult,
              points_of: Callable[[list[OpVariant], int], list[Point]]) -> list[tuple[Library, int, _Placed]]:
    """The jobs a sweep launches: per library and p, the points `points_of(ops, p)` placed on the
    hosts, less those the run has stored (counted in `result.skipped`), so a run resumes."""
    done = store.measured_keys(run_id)
    work: list[tuple[Library, int, _Placed]] = []
    for library in libraries:
        ops = ops_for(library, options.ops)
        for p in options.np:
            for placed in place_points(points_of(ops, p), p, hosts, options.placement):
                todo = [pt for pt in placed.points if (library.name, pt.op, pt.variant, p, pt.n_bytes,
                                                       placed.localities[pt]) not in done]
                result.skipped += len(placed.points) - len(todo)
                if todo:
                    work.append((library, p, _Placed(placed.policy, todo, placed.ranks,
                                                     placed.localities)))
    return work


def refinement_jobs(store: Store, run_id: int, options: SweepOptions, base: LaunchSpec,
                    libraries: list[Library], observer: Observer, result: SweepResult,
                    riders: dict[tuple[str, int], list[Point]] | None = None, again: bool = False
                    ) -> Callable[[str, int, list[Point]], None]:
    """What measures a refinement round's points of one library at p: a job on one host,
    each point stored as refined (`again`: each in place of the stored point it measures
    once more, measure/again.py). A job of a library and p with `riders` left takes the
    first of them along (taken from the list): a point that must be the first traffic of
    its processes (a fresh job's), which leads it unrefined instead of a launch of its own."""
    by_name = {library.name: library for library in libraries}
    waiting = riders if riders is not None else {}

    def measure(name: str, p: int, points: list[Point]) -> None:
        library = by_name[name]
        if waiting.get((name, p)):
            points = [waiting[(name, p)].pop(0), *points]
        (placed,) = place_points(points, p, None, options.placement)
        _JobRunner(store, run_id, options, base, library, p, ensure_kernel(library), observer,
                   result, placed, refined=not again, again=again).run(points)

    return measure


def measure_moved(store: Store, run_id: int, options: SweepOptions, base: LaunchSpec,
                  libraries: list[Library], observer: Observer, result: SweepResult) -> None:
    """The points measured with the cores of ranks 0 and 1 outside their library's main state,
    measured once more, each in place of the first (measure/again.py), before a refinement
    reads them."""
    again = refinement_jobs(store, run_id, options, base, libraries, observer, result, again=True)
    result.again = measure_again(store, run_id, [library.name for library in libraries], again,
                                 observer.measuring_again)


def run_sweep(store: Store, run_id: int, options: SweepOptions, libraries: list[Library],
              observer: Observer) -> SweepResult:
    sizes = parse_sizes(options.sizes) if options.sizes else None
    base = LaunchSpec(options.launcher, Path(options.hostfile) if options.hostfile else None,
                      dict(options.env))
    hosts = spec_hosts(base)
    result = SweepResult(run_id, retried=store.clear_failures(run_id))
    work = plan_work(store, run_id, options, libraries, hosts, result,
                     lambda ops, p: points_for(ops, sizes, p))
    observer.planned(sum(len(placed.points) for _, _, placed in work))

    started = time.monotonic()
    for library, p, placed in work:
        kernel = ensure_kernel(library)
        spec = LaunchSpec(base.launcher, base.hostfile, base.extra_env,
                          placed.policy if hosts and len(hosts) > 1 else None)
        _JobRunner(store, run_id, options, spec, library, p, kernel, observer, result,
                   placed).run(placed.points)
    # Refinement reads one series per operation: a run across hosts has two (on-node and
    # off-node) for point-to-point, which it does not refine yet.
    if options.refine and not result.launched_nothing and not (hosts and len(hosts) > 1):
        measure_moved(store, run_id, options, base, libraries, observer, result)
        measure = refinement_jobs(store, run_id, options, base, libraries, observer, result)
        budget = (options.refine_budget if options.refine_budget is not None
                  else default_budget(time.monotonic() - started))
        result.refined = refine(store, run_id, [lib.name for lib in libraries], budget, measure,
                                observer.refining)
    return result


@dataclass
class _Placed:
    """The points one job measures, the placement it runs them under, and where that puts
    the ranks (as planned: the kernel's header says where they really ran)."""

    policy: str | None
    points: list[Point]
    ranks: list[str] | None = None
    localities: dict[Point, str] = field(default_factory=dict)


def place_points(points: list[Point], p: int, hosts: list[Host] | None, policy: str) -> list[_Placed]:
    """The jobs measuring `points` at p: one on a single host (locality ''); on several,
    one under `policy` and, for point-to-point operations whose two ranks the other
    policy puts on the other side of a host boundary, one more under that policy."""
    if not hosts or len(hosts) < 2:
        return [_Placed(None, points, None, {pt: "" for pt in points})]
    jobs: list[_Placed] = []
    for which in (policy, other_policy(policy)):
        ranks = rank_hosts(hosts, p, which)
        localities = {pt: locality(pt.operation_kind, ranks) for pt in points}
        if which == policy:
            chosen = points
        else:
            first = jobs[0].localities
            chosen = [pt for pt in points if pt.operation_kind != "collective"
                      and localities[pt] != first[pt]]
        if chosen:
            jobs.append(_Placed(which, chosen, ranks, {pt: localities[pt] for pt in chosen}))
    return jobs


def ops_for(library: Library, text: str | None) -> list[OpVariant]:
    """The operations `library` measures: its transport's defaults, or those of `text` it can."""
    if text is None:
        return parse_ops(None, library.transport)
    ops = [o for o in parse_ops(text, library.transport) if o.operation.transport == library.transport]
    if not ops:
        own = ", ".join(o.op for o in parse_ops(None, library.transport))
        own = ", ".join(dict.fromkeys(own.split(", ")))
        raise UsageError(f"--ops: none of '{text}' can be measured with {library.name} "
                         f"(its operations: {own})")
    return ops


class _JobRunner:
    def __init__(self, store: Store, run_id: int, options: SweepOptions, spec: LaunchSpec,
                 library: Library, p: int, kernel: Path, observer: Observer,
                 result: SweepResult, placed: _Placed, refined: bool = False, again: bool = False) -> None:
        self.store, self.run_id, self.options, self.spec = store, run_id, options, spec
        self.library, self.p, self.kernel = library, p, kernel
        self.observer, self.result, self.placed = observer, result, placed
        self.refined = refined  # its points were added inside a gap where the curve changes
        self.again = again  # its points replace the stored ones they measure once more
        # the kernel's names of the operations stored under another (PVM's)
        self.kernel_names = {name: op.in_kernel for name, op in catalogue(library.transport).items()
                             if op.kernel_name}
        self.stored_names = {kernel: name for name, kernel in self.kernel_names.items()}

    def fresh(self, point: Point) -> bool:
        """Whether `point` must be the first traffic of its processes."""
        return catalogue(self.library.transport)[point.op].fresh_process

    def run(self, todo: list[Point]) -> None:
        # a point that must be the first traffic of its processes leads the job of the others
        # (the kernel measures its plan in order, and nothing of its own talks before): one
        # such point a job, the rest in jobs of their own
        fresh = [pt for pt in todo if self.fresh(pt)]
        shared = [pt for pt in todo if not self.fresh(pt)]
        groups = [[pt] for pt in fresh[1:]] + [fresh[:1] + shared] if shared else [[pt] for pt in fresh]
        for at, group in enumerate(groups):
            launch_error = self._run_group(group)
            if launch_error is not None:
                # The job died before measuring anything: relaunching would fail the same way.
                later = [pt for rest in groups[at + 1:] for pt in rest]
                for point in later:
                    self._fail(point, "launch", launch_error)
                self.result.launch_failures += len(later)
                return

    def _run_group(self, todo: list[Point]) -> str | None:
        remaining = list(todo)
        while remaining:
            finished, in_flight, launch_error = self._one_job(remaining)
            remaining = [pt for pt in remaining if pt not in finished and pt != in_flight]
            if launch_error is not None:
                for point in remaining:
                    self._fail(point, "launch", launch_error)
                self.result.launch_failures += len(remaining)
                self.result.launch_error = self.result.launch_error or launch_error
                return launch_error
        return None

    def _kernel_args(self, points: list[Point], oversubscribed: bool) -> list[str]:
        o = self.options
        max_time = min(o.max_time, OVERSUBSCRIBED_MAX_TIME_S) if oversubscribed else o.max_time
        return ["--plan", plan_argument(points, self.kernel_names), "--precision", repr(o.precision),
                "--min-reps", str(o.min_reps), "--max-reps", str(o.max_reps),
                "--max-time", repr(max_time), "--sync", o.sync, "--cache", o.cache,
                *(["--buffer-offset", str(o.buffer_offset)] if o.buffer_offset != 16 else []),
                *(["--recv-offset", str(o.recv_offset)] if o.recv_offset is not None else []),
                *(["--heap", o.heap] if o.heap != "steady" else []),
                *(["--batch-min-us", repr(o.batch_min_us)] if o.batch_min_us != DEFAULT_BATCH_MIN_US else []),
                *(["--loggp-overheads-below", str(o.loggp_overheads_below)] if o.loggp_overheads_below else []),
                # ranks that share cores would time the scheduler, not the distance of two cores, and
                # the pre-warm's exchanges would wait a time slice each (0.7 s at p = 3 on 2 cores)
                *(["--core-distance", "off", "--prewarm", "off"] if oversubscribed else []),
                *(["--cache-limit", str(o.cache_limit)] if o.cache_limit is not None else [])] + (
                    ["--sync-window-factor", repr(o.sync_window_factor),
                     "--sync-window-us", repr(o.sync_window_us)] if o.sync == "window" else [])

    def _one_job(self, points: list[Point]) -> tuple[set[Point], Point | None, str | None]:
        """Run one job over `points`. Returns (stored, point that failed, launch error).
        PVM's job runs in a virtual machine of its own, halted whatever happens."""
        if self.library.transport != "pvm":
            return self._launch(points, None)
        try:
            with pvm.private_machine(self.spec.hostfile) as machine:
                return self._launch(points, machine)
        except pvm.MachineError as exc:
            return set(), None, f"PVM: {exc}"

    def _launch(self, points: list[Point], machine: pvm.Machine | None
                ) -> tuple[set[Point], Point | None, str | None]:
        """Run the job, follow its lines, and classify how it ended (job_outcome)."""
        machine_env = machine.env if machine else {}
        oversubscribed = is_oversubscribed(self.spec, self.p)
        job = job_command(self.library, self.spec, self.p, self.kernel,
                          self._kernel_args(points, oversubscribed))
        env_added = {**job.env_added, **machine_env}
        job_id = self.store.create_job(self.run_id, self.library.name, self.p, job.argv,
                                       env_added, job.oversubscribed, self.placed.policy)
        self.observer.job_started(self.library.name, self.p, len(points), job.oversubscribed)
        state = _JobState(job_id, points, job.oversubscribed, machine)
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as stderr:
            try:
                process = processes.start(
                    job.argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL,
                    text=True, env={**os.environ, **env_added},
                )
            except OSError as exc:
                self.store.finish_job(job_id, None)
                return set(), None, f"cannot start {job.argv[0]}: {exc.strerror}"
            try:
                self._follow(_Stream(process.stdout), state, stderr.fileno())  # type: ignore[arg-type]
            except BaseException:
                processes.stop(process)
                self.store.finish_job(job_id, None)
                raise
            exit_status = _reap(process, state.outcome)
            self.store.finish_job(job_id, exit_status)
            stderr.seek(0)
            text = stderr.read()
        across_hosts = hostfailures.diagnose(
            text + "\n" + "".join(state.chatter),
            hosts_used(self.placed.ranks) if self.placed.ranks else None)
        verdict = classify(JobEnd(points, state.stored, state.in_flight, state.outcome, state.kernel_error,
                                  exit_status, stderr_tail(text), across_hosts, self.options.timeout))
        if verdict.failed is not None:
            self._fail(verdict.failed, str(verdict.kind), str(verdict.reason))
        return state.stored, verdict.failed, verdict.launch_error

    def _follow(self, stream: _Stream, state: _JobState, stderr: int) -> None:
        """Reads the job's lines into `state` until they end, the job is silent too long
        (timeout; after its last point: lingered), its launch shows a host ssh did not
        reach (read from `stderr`, the job's stderr file, while it has said nothing) or a
        handler says stop."""
        handlers = {"header": self._on_header, "begin": self._on_begin, "point": self._on_point,
                    "unsupported": self._on_unsupported, "error": self._on_error, "end": self._on_end}
        started = False
        while True:
            measured = state.outcome == "measured"
            silence = min(self.options.timeout, FINALIZE_GRACE_S) if measured else self.options.timeout
            try:
                line = stream.next(silence) if started else _first_line(stream, silence, stderr)
            except queue.Empty:
                state.outcome = "lingered" if measured else "timeout"
                return
            except _Unreachable:
                state.outcome = "unreachable"
                return
            if line is None:
                return
            started = True
            message = _parse_line(line)
            if message is None:
                state.chatter.append(line)  # UCX, for one, logs its errors to stdout
                continue
            if message.get("op") in self.stored_names:
                message["op"] = self.stored_names[message["op"]]
            handler = handlers.get(str(message.get("type")))
            if handler is not None and handler(state, message):
                return

    # One handler per kernel message type: each updates the job's state, True to stop reading.

    def _on_header(self, state: _JobState, message: dict[str, Any]) -> bool:
        if state.machine is not None:  # the MPI library only bootstrapped the ranks
            bootstrap = (short_version(message.get("mpi_library_version")) or "MPI")
            message["mpi_library_version"] = (
                f"PVM {state.machine.version or 'version unknown'} (ranks started by "
                f"{bootstrap.split(',')[0].split(';')[0][:60]})")
        # the kernel's options with the identity of the binary that ran them
        options = message.get("options")
        options = options if isinstance(options, dict) else {}
        message["options"] = {**options, "kernel_sha256": file_sha256(self.kernel)}
        self.store.record_job_header(state.job_id, message)
        misplaced = self._misplaced(message.get("hosts"), state.points)
        if misplaced:
            state.kernel_error, state.outcome = misplaced, "misplaced"
            return True
        return False

    def _on_begin(self, state: _JobState, message: dict[str, Any]) -> bool:
        state.in_flight = _named_point(state.by_key, message)
        return False

    def _on_point(self, state: _JobState, message: dict[str, Any]) -> bool:
        point = _named_point(state.by_key, message)
        if point is not None and self._store_point(state.job_id, point, message, state.oversubscribed):
            state.stored.add(point)
        state.in_flight = None
        return False

    def _on_unsupported(self, state: _JobState, message: dict[str, Any]) -> bool:
        # the library lacks the call (an MPI-4 op in an MPI-3 library): recorded, not failed
        point = _named_point(state.by_key, message)
        if point is not None:
            self.store.add_failure(self.run_id, self.library.name, point.op, point.variant,
                                   self.p, point.n_bytes, "unsupported",
                                   str(message.get("reason", "unsupported by the library")),
                                   self.placed.localities.get(point, ""), self.options.cache)
            state.stored.add(point)
            self.result.unsupported += 1
        state.in_flight = None
        return False

    def _on_error(self, state: _JobState, message: dict[str, Any]) -> bool:
        state.kernel_error = str(message.get("message", "kernel error"))
        return False

    def _on_end(self, state: _JobState, message: dict[str, Any]) -> bool:
        state.outcome = "measured"
        return False

    def _misplaced(self, hosts: object, points: list[Point]) -> str | None:
        """Why the ranks' real hosts (the kernel's header) contradict the planned locality of
        the job's points, or None; only a run on several hosts has a plan to check."""
        if self.placed.ranks is None:
            return None
        if not isinstance(hosts, list) or len(hosts) != self.p:
            return "the kernel did not report the host of every rank"
        for point in points:
            planned = self.placed.localities[point]
            real = locality(point.operation_kind, [str(h) for h in hosts])
            if real != planned:
                return (f"{self.placed.policy} placement should run {point.key} {planned} but its"
                        f" ranks ran on {', '.join(dict.fromkeys(map(str, hosts)))}: the hosts must"
                        " report distinct names (MPI_Get_processor_name)")
        return None

    def _store_point(self, job_id: int, point: Point, message: dict, oversubscribed: bool) -> bool:
        samples = message.get("samples_us")
        late = late_reps(message)
        if samples == [] and late:
            # every window was missed: nothing was measured to store, so the bound is a failure
            self._fail(point, "late", f"all {late} repetitions started late under --sync window"
                                      " (windows too short for this machine's load):"
                                      " raise --sync-window-factor")
            return False
        if not isinstance(samples, list) or not samples or not all(
                isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in samples):
            self._fail(point, "kernel", "the kernel returned no usable samples")
            return False
        message = {**message, "p": self.p}
        summary = summarize(samples)
        extra = message.get("extra")
        extra = extra if isinstance(extra, dict) else {}
        if summary["transient"]:
            # the first samples the steady-state mean leaves out (statistics.py)
            extra = {**extra, "transient_samples": summary["transient"]}
            message["extra"] = extra
        floor = message.get("min_reps")
        if isinstance(floor, int) and not isinstance(floor, bool) and floor != self.options.min_reps:
            # a size rule's own fewest samples (the plan's /M): the point keeps what it was held to
            extra = {**extra, "min_reps": floor}
            message["extra"] = extra
        tick = message.get("tick_us")
        tick = float(tick) if isinstance(tick, (int, float)) and math.isfinite(tick) and tick >= 0 else 0.0
        ci_rel = relative_ci_halfwidth(summary, float(extra.get("delay_us") or 0.0), tick)
        target = float(message.get("precision_target") or self.options.precision)
        message["precision_met"] = ci_rel <= target * (1 + 1e-9)
        self.store.add_point(self.run_id, job_id, self.library.name, message, summary,
                             oversubscribed=oversubscribed, ci_rel=ci_rel,
                             locality=self.placed.localities.get(point, ""),
                             refined=self.refined and not self.fresh(point), again=self.again)
        if not self.again:  # a point measured again is counted as such (AgainResult)
            self.result.stored += 1
        if not message.get("valid", True):
            self.result.invalid += 1
        self.observer.point_stored(self.library.name, self.p, message, summary)
        return True

    def _fail(self, point: Point, kind: str, message: str) -> None:
        self.store.add_failure(self.run_id, self.library.name, point.op, point.variant, self.p,
                               point.n_bytes, kind, message, self.placed.localities.get(point, ""),
                               self.options.cache)
        self.result.failures += 1
        self.observer.failure(self.library.name, self.p, point, kind, message)


def _named_point(by_key: dict[tuple[str, str, int], Point], message: dict[str, Any]) -> Point | None:
    """The point a kernel line names by (op, variant, n_bytes), or None: a line
    that leaves one out, or names one this job does not measure, matches none."""
    key: tuple[Any, Any, Any] = (message.get("op"), message.get("variant", ""),
                                 message.get("n_bytes"))
    return by_key.get(key)


def late_reps(point: dict) -> int:
    """Repetitions of a --sync window point discarded because they started late on some rank."""
    extra = point.get("extra")
    window = extra.get("sync_window") if isinstance(extra, dict) else None
    late = window.get("late") if isinstance(window, dict) else None
    return late if isinstance(late, int) and not isinstance(late, bool) and late > 0 else 0


def _parse_line(line: str) -> dict | None:
    line = line.strip()
    if not line.startswith("{"):
        return None  # launcher chatter on stdout is not ours
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def stderr_tail(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not set(ln.strip()) <= set("-=*")]
    tail = " | ".join(lines[-2:])
    return tail[-STDERR_TAIL_CHARS:]
