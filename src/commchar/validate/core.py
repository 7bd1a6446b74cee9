"""The validation run: measure and fit a model, trace and replay each program at each size."""

from __future__ import annotations

import math
import os
import statistics
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from commchar.errors import MeasurementError, UsageError
from commchar.measure.build import APPS, ensure_built
from commchar.measure.libraries import Library
from commchar.core_distance import (Cores, States, copy_pair, point_pairs, point_slowed, points_copy_floor, rtt_pair,
                                    same_state, split)
from commchar.store import Store

if TYPE_CHECKING:
    from commchar.apps.sweep import CaseFailed
    from commchar.measure.runner import SweepOptions, SweepResult
    from commchar.modelfile.document import ModelDocument

# the loop is the programs' communication phase: MPI_Pcontrol level 3 (apps/app_common.h)
LOOP_LEVEL = 3


@dataclass(frozen=True)
class Program:
    name: str  # its binary under build/apps/<library>/
    pattern: str  # what one iteration does
    min_bytes: int = 0
    multiple: int = 1

    def accepts(self, n: int) -> bool:
        return n >= self.min_bytes and n % self.multiple == 0


PROGRAMS: tuple[Program, ...] = (
    Program("pingpong_loop", "MPI_Send/MPI_Recv round trip between two ranks"),
    Program("ring_sendrecv", "MPI_Sendrecv to the next rank, from the previous"),
    Program("ring_replace", "MPI_Sendrecv_replace to the next rank, from the previous"),
    Program("allreduce_loop", "MPI_Allreduce (sum of doubles)", min_bytes=8, multiple=8),
    Program("halo2d", "Irecv/Isend with 4 neighbours on a periodic 2-D grid, Waitall"),
    Program("alltoall_loop", "MPI_Alltoall, n bytes to each rank"),
    Program("master_worker", "a task out, its result back with MPI_ANY_SOURCE", min_bytes=16),
)
DEFAULT_SIZES = (256, 4096, 32768, 262144)
# the model the replay needs: LogGP(S) from loggp/rndv, the ping-pong's regimes, the
# collectives the programs call (charged at the model's T(n, p)), the barrier before the loop,
# the exchanges (Sendrecv_replace's extra copy: models/replace_copy.py) and the skew probe (a
# message landing ahead of its source in the page: models/misaligned_copy.py), the exchange
# over many buffers (copies once the buffers outgrow the caches: models/copy_footprint.py),
# a program's first sends, a pair's first rendezvous and the first time a rank holds k
# requests (each program is timed from its first message: models/coldstart.py,
# models/request_growth.py), the node's detours while every rank works (models/noise.py),
# what a non-blocking send costs to post (models/send_post.py) and a message whose sender
# wrote its buffer since its last send (the programs stamp theirs: models/written_send.py)
MODEL_OPS = ("pingpong:send,exchange,loggp,rndv,post,coldstart,skew,written,footprint,allreduce:sum,alltoall,"
             "barrier,noise")


# the kernel's probe of the same operation, measured with the model: (op, variant, scale to
# one iteration of the program); the ping-pong probe times half a round trip
PROBES = {"pingpong_loop": ("pingpong", "send", 2.0), "allreduce_loop": ("allreduce", "sum", 1.0),
          "alltoall_loop": ("alltoall", "", 1.0), "ring_sendrecv": ("exchange", "sendrecv", 1.0),
          "ring_replace": ("exchange", "replace", 1.0)}


def parse_programs(text: str | None) -> list[Program]:
    if text is None:
        return list(PROGRAMS)
    by_name = {p.name: p for p in PROGRAMS}
    names = [s.strip() for s in text.split(",")]
    unknown = [n for n in names if n not in by_name]
    if unknown or not all(names):
        raise UsageError(f"--programs: unknown program '{(unknown or [''])[0]}' "
                         f"(known: {', '.join(by_name)})")
    return [by_name[n] for n in dict.fromkeys(names)]


@dataclass
class ValidateOptions:
    programs: list[str] = field(default_factory=lambda: [p.name for p in PROGRAMS])
    sizes: list[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    np: int = 2
    iterations: int = 5000
    repeat: int = 1
    precision: float = 0.02  # of the model's measurement
    max_time: float = 0.3  # seconds per measured point of the model
    model_sizes: str = "0:1M"
    timeout: float = 300.0  # seconds a traced program may run
    distance_attempts: int = 4  # runs of a model or a program to find the host in one state
    launches: int = 3  # untraced runs of each program; its measured time is their median
    slowed_passes: int = 2  # passes after a repeat's rows over those whose launches all ran slowed
    model_launches: int = 3  # runs of the model's measurement; each point the median of its runs'
    probes_after: bool = True  # the probes measured again after the programs: how far the host moved

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def measured_sizes(self) -> str:
        """The sizes the model is measured at: `model_sizes` and the programs' own, so every
        row has its probe in the model's run (and the drift of it after the programs)."""
        return ",".join([self.model_sizes, *(str(n) for n in self.sizes)])


class Observer:
    """What the caller hears: each step's name as it starts, and a step done."""

    def planned(self, steps: int) -> None: ...
    def step(self, description: str) -> None: ...
    def done(self) -> None: ...
    def more(self, steps: int) -> None: ...  # steps the plan did not count (a model measured again)


def steps_per_library(options: ValidateOptions) -> int:
    """The model's measurements (options.model_launches), its fit, one step per (program,
    size) case and the probes measured again (options.probes_after), per repeat."""
    return options.repeat * (max(1, options.model_launches) + 1 + len(cases(options))
                             + (1 if probe_ops(options) else 0))


def cases(options: ValidateOptions) -> list[tuple[Program, int]]:
    chosen = parse_programs(",".join(options.programs))
    return [(prog, n) for prog in chosen for n in options.sizes if prog.accepts(n)]


def _pct(predicted: float, measured: float) -> float | None:
    return 100.0 * (predicted - measured) / measured if measured > 0 else None


def measure_model_run(store: Store, library: Library, options: ValidateOptions,
                      observer: Observer) -> tuple[int, list[dict]]:
    """Measures the operations the replay needs once (point-to-point at p = 2, collectives at 2
    and np): (run id, the measured points)."""
    from commchar.measure.runner import SweepOptions
    from commchar.models.inputs import read_store

    # point-to-point operations are measured between two ranks, collectives at np as well
    sweep = SweepOptions(libraries=[library.name], ops=MODEL_OPS, sizes=options.measured_sizes(),
                         np=sorted({2, options.np}), precision=options.precision, max_time=options.max_time)
    run_id, result = _measured_run(store, library, sweep, observer, "measuring the model")
    if result.launch_failures or result.stored == 0:
        store.set_run_status(run_id, "failed")
        raise MeasurementError(f"validate: measuring the model of {library.name} failed "
                               f"({result.launch_error or 'nothing stored'})")
    store.set_run_status(run_id, "complete")
    observer.done()
    return run_id, read_store(store.path, [run_id])[0]


def fit_model(store: Store, library: Library, run_ids: list[int], directory: Path,
              observer: Observer) -> tuple[str, list[dict]]:
    """The model of the runs (fit_runs), saved: (model file, the points it was fitted to)."""
    from commchar.modelfile import save

    observer.step(f"{library.name}: fitting run(s) {', '.join(map(str, run_ids))}")
    model, points = fit_runs(store.path, run_ids)
    fitted = model.libraries.get(library.name)
    if fitted is None or not isinstance(fitted.loggp, dict):
        raise MeasurementError(f"validate: the model of {library.name} has no loggp section "
                               "(its loggp and rndv measurements failed)")
    path = directory / f"model-{library.name}-run{'-'.join(map(str, run_ids))}.json"
    save(model, path)
    observer.done()
    return str(path), points


def median_points(points: list[dict]) -> list[dict]:
    """Of several runs' points, per (library, op, variant, n, p, sync), the point whose mean
    (t_mean_us, else t_us; the noise probe's share of time lost) is the median over the runs
    (the lower middle one of an even number): a run takes whichever speed the host gives it,
    as a program's launch does. The valid points only, where a key has any, and of those the
    ones no slowed core measured (core_distance.slowed, against the floor of the library's
    copies), where it has any: the programs run again while a core is slowed
    (run_settled). A key one run measured alone (a size its refinement chose) keeps that
    point."""
    from commchar.models.noise import OP as NOISE, lost_fraction

    def central(point: dict) -> float:
        """What a point's runs are ordered by: its mean time, except the noise probe's, whose
        time is a loop reading the clock: its runs are ordered by the share of the ranks' time
        their detours took (one rank sharing its core with another job for a while is one
        run's, not the host's; a point without the lists goes last)."""
        if point["op"] == NOISE:
            fraction = lost_fraction(point)
            return math.inf if fraction is None else fraction
        return float(point.get("t_mean_us") or point["t_us"])

    groups: dict[tuple, list[dict]] = {}
    for pt in points:
        key = (pt["library"], pt["op"], pt.get("variant") or "", pt["n_bytes"], pt["p"], pt.get("sync"))
        groups.setdefault(key, []).append(pt)
    floors = {library: points_copy_floor(pt for pt in points if pt["library"] == library)
              for library in {pt["library"] for pt in points}}
    out = []
    for (library, *_), every in groups.items():
        pool = [pt for pt in every if pt.get("valid", True)] or every
        pool = [pt for pt in pool if not point_slowed(pt, floors[library])] or pool
        pool.sort(key=central)
        out.append(pool[(len(pool) - 1) // 2])
    return out


def fit_runs(db: str | Path, run_ids: list[int]) -> tuple[ModelDocument, list[dict]]:
    """The model document of stored runs of one measurement (the rndv probe's receiver delay
    from their jobs' kernel options, a burst's exchange excess from the simulator:
    simulate/burst.py), each point the median of the runs' (median_points), and those
    points."""
    from commchar.models.document_fit import fit_document
    from commchar.models.inputs import read_store, receiver_delays
    from commchar.simulate.calibration import calibrated

    points, failures, facts = read_store(db, run_ids)
    if len(run_ids) > 1:
        points = median_points(points)
    model = fit_document(points, failures, runs=facts.get("runs"), receiver_delay_us=receiver_delays(facts))
    return calibrated(model, points, call_costs=False), points


class _Quiet:
    """The sweep's observer: the validation's own progress says what is measured."""

    def planned(self, total_points: int) -> None: ...
    def job_started(self, library: str, p: int, points: int, oversubscribed: bool) -> None: ...
    def point_stored(self, library: str, p: int, point: dict, summary: dict) -> None: ...
    def failure(self, library: str, p: int, point: Any, kind: str, message: str) -> None: ...
    def refining(self, round_no: int, points: int) -> None: ...
    def measuring_again(self, points: int) -> None: ...


def probe_ops(options: ValidateOptions) -> list[str]:
    """The kernel operations that probe the chosen programs (PROBES), to measure again after
    them; none under probes_after=False."""
    if not options.probes_after:
        return []
    wanted = {PROBES[p.name][:2] for p, _ in cases(options) if p.name in PROBES}
    # the exchange operation measures both of its variants (sendrecv, replace) in one
    return sorted({op if op == "exchange" or not variant else f"{op}:{variant}" for op, variant in wanted})


def measure_probes(store: Store, library: Library, options: ValidateOptions, observer: Observer,
                   model_pairs: list[tuple[float, float]]) -> tuple[int, list[dict], dict[str, Any]] | None:
    """The programs' probes measured once more at the validation's sizes, right after the
    programs ran, again while the host held the ranks' cores in another state than the main
    state of the model's points, at most options.distance_attempts times: (run id, points,
    {"match": 'same', 'differs' or 'unknown', "runs": attempts}), or None where no program has
    a probe. A probe that moved since the model's run, in the same state of the cores, says the
    host moved under the validation: the programs ran on a machine that was neither the
    model's nor this one."""
    from commchar.measure.runner import SweepOptions
    from commchar.models.inputs import read_store

    ops = probe_ops(options)
    if not ops:
        return None
    sweep = SweepOptions(libraries=[library.name], ops=",".join(ops), sizes=",".join(map(str, options.sizes)),
                         np=sorted({2, options.np}), precision=options.precision, max_time=options.max_time,
                         refine=False)
    attempts = max(1, options.distance_attempts)
    for attempt in range(attempts):
        if attempt:
            observer.more(1)
        run_id, result = _measured_run(store, library, sweep, observer, "the probes again, after the programs")
        store.set_run_status(run_id, "complete" if result.stored and not result.launch_failures else "failed")
        observer.done()
        points, _, _ = read_store(store.path, [run_id])
        pairs = point_pairs(points)
        match = ("unknown" if not model_pairs or not pairs
                 else "same" if all(same_state(model_pairs, pair) for pair in pairs) else "differs")
        if match != "differs":
            break
    return run_id, points, {"match": match, "runs": attempt + 1}


def _measured_run(store: Store, library: Library, sweep: SweepOptions, observer: Observer,
                  what: str) -> tuple[int, SweepResult]:
    """One run of the sweep, recorded as `commchar run` records it (a run whose process died
    shows as died, one that raised as failed): (run id, the sweep's result)."""
    from commchar.measure.environment import host_info
    from commchar.measure.runner import run_sweep
    from commchar.provenance import build_identity
    from commchar.store import owner

    run_id = store.create_run(build_identity(), {**host_info(), "owner": owner.current()}, sweep.to_dict())
    observer.step(f"{library.name}: {what} (run {run_id})")
    try:
        return run_id, run_sweep(store, run_id, sweep, [library], _Quiet())
    except BaseException:
        store.set_run_status(run_id, "failed")
        raise


def measure_model_settled(store: Store, library: Library, options: ValidateOptions, directory: Path,
                          observer: Observer) -> tuple[list[int], str, list[dict], dict[str, Any]]:
    """The model of options.model_launches runs, each point the median of the runs'
    (fit_runs). Each run is measured again while its points span two states of the host
    (core_distance.py), at most options.distance_attempts times, and the attempt of the fewest
    points in its minority state kept: (the runs kept, the model file, its points, what each
    attempt found)."""
    kept: list[int] = []
    tried: list[dict[str, Any]] = []
    for _ in range(max(1, options.model_launches)):
        best: tuple[int, States | None] | None = None
        for attempt in range(max(1, options.distance_attempts)):
            if attempt:
                observer.more(1)  # measuring once more
            run_id, points = measure_model_run(store, library, options, observer)
            states = split(point_pairs(points))
            tried.append({"run_id": run_id, **(states.to_dict() if states else {"measured": False})})
            if best is None or _minority(states) < _minority(best[1]):
                best = (run_id, states)
            if _minority(states) == 0:
                break
        assert best is not None
        kept.append(best[0])
    path, points = fit_model(store, library, kept, directory, observer)
    states = split(point_pairs(points))
    record: dict[str, Any] = {"run_id": kept[0], "attempts": tried}
    if states is not None:
        record.update(rtt_ns=round(states.main_ns(), 1), minority_points=_minority(states))
    cores = Cores.of(points)
    record["pairs"] = list(cores.pairs)
    record["copy_floor_ns"] = cores.floor_ns
    return kept, path, points, record


def _minority(states: States | None) -> int:
    return states.outside_main() if states is not None else 0


def run_settled(argv: list[str], env: dict[str, str], options: ValidateOptions, cores: Cores) -> list[dict[str, Any]]:
    """The untraced run, again while the host held the ranks in another state than the main
    state of the model's points (core_distance.same_state) or slowed a rank's core
    (core_distance.slowed, against the floor of the model's copies), at most
    options.distance_attempts times: every attempt's time, round trips and copies, the last
    the one kept (the first in the model's state on full-speed cores, else the last tried)."""
    from commchar.apps.sweep import run_once

    tried: list[dict[str, Any]] = []
    for _ in range(max(1, options.distance_attempts)):
        result = run_once([*argv, "--core-distance"], env, options.timeout)
        pair, copy = rtt_pair(result), copy_pair(result)
        tried.append({"per_iteration_us": float(result["per_iteration_us"]),
                      "core_rtt_ns": list(pair) if pair else None,
                      "core_copy_ns": list(copy) if copy else None})
        if cores.same_state(pair) is not False and not cores.slowed(copy):
            break
    return tried


def run_launches(argv: list[str], env: dict[str, str], options: ValidateOptions, cores: Cores) -> list[dict[str, Any]]:
    """options.launches untraced runs, each by run_settled: every attempt's time and round
    trips, the run each launch kept marked `kept`. One launch alone takes whichever speed the
    host gives it, several percent from the next (docs/method.md, "Which sizes")."""
    attempts: list[dict[str, Any]] = []
    for _ in range(max(1, options.launches)):
        tried = run_settled(argv, env, options, cores)
        tried[-1]["kept"] = True
        attempts.extend(tried)
    return attempts


def _program_launch(library: Library, program: str, n: int, options: ValidateOptions
                    ) -> tuple[list[str], list[str], dict[str, str]]:
    """The program's own argv, the launcher's argv around it and the environment it runs in."""
    from commchar.measure.launch import LaunchSpec, program_command

    argv = [str(ensure_built(APPS, library) / program), "--bytes", str(n), "--iterations", str(options.iterations)]
    job = program_command(library, LaunchSpec(), options.np, argv)
    return argv, job.argv, {**os.environ, **job.env_added}


def slowed_only(row: dict[str, Any]) -> bool:
    """Whether every launch a row kept ran on a core the host slowed: its measured time is of a
    slower machine than the model's, which leaves out the points measured so."""
    distance = row.get("core_distance") or {}
    return bool(row.get("launches_us")) and distance.get("slowed") == len(row["launches_us"])


def measure_slowed_again(rows: list[dict[str, Any]], launch: Callable[[dict[str, Any]], list[dict[str, Any]]],
                         cores: Cores, passes: int) -> None:
    """The rows whose launches all ran slowed (slowed_only), launched again (`launch(row)`: the
    attempts of run_launches) after the other rows, up to `passes` times while any is: the host
    slows a core for seconds to minutes, and a program measured then describes another machine
    than the model. The row's launches are then all it kept, its measured time and errors those of
    the launches in the model's state on full-speed cores among them (_distance_row),
    `core_distance.passes` how many times it was launched and `first_measured_us` its measured
    time before."""
    for _ in range(passes):
        todo = [row for row in rows if slowed_only(row)]
        if not todo:
            return
        for row in todo:
            attempts = row["core_distance"]["attempts"] + launch(row)
            distance = _distance_row(attempts, cores)
            distance["passes"] = row["core_distance"].get("passes", 1) + 1
            distance["first_measured_us"] = row["core_distance"].get("first_measured_us", row["measured_us"])
            measured_into(row, distance)


PREDICTED = ("loggps", "loggp", "loggps_quiet")  # a row's predicted times, `<key>_us`


def errors_into(row: dict[str, Any]) -> None:
    """Each prediction's error against the row's measured time, `<key>_error_pct`."""
    for key in PREDICTED:
        if row.get(f"{key}_us") is not None:
            row[f"{key}_error_pct"] = _pct(row[f"{key}_us"], row["measured_us"])


def measured_into(row: dict[str, Any], distance: dict[str, Any]) -> None:
    """A row's launches and measured time from its core distance (_distance_row), each held once
    (the launches' times and their median beside the rest of the distance), and the errors."""
    row["launches_us"] = distance.pop("launches_us")
    row["measured_us"] = distance.pop("measured_us")
    row["core_distance"] = distance
    errors_into(row)


def _failed(program: str, n: int, library: Library, options: ValidateOptions, failed: CaseFailed
            ) -> MeasurementError:
    return MeasurementError(f"validate: {program} --bytes {n} ({library.name}, p = {options.np}): "
                            f"{failed.kind}: {failed.message}")


def relaunch(library: Library, options: ValidateOptions, cores: Cores, observer: Observer
             ) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """measure_slowed_again's `launch`: a row's program launched again (run_launches), one step
    of the plan more."""
    from commchar.apps.sweep import CaseFailed

    def launch(row: dict[str, Any]) -> list[dict[str, Any]]:
        observer.more(1)
        observer.step(f"{library.name}: {row['program']} {row['bytes']} B again (its launches ran on a slowed core)")
        _, job_argv, env = _program_launch(library, row["program"], row["bytes"], options)
        try:
            return run_launches(job_argv, env, options, cores)
        except CaseFailed as failed:
            raise _failed(row["program"], row["bytes"], library, options, failed) from None
        finally:
            observer.done()

    return launch


def run_case(store: Store, library: Library, program: Program, n: int, options: ValidateOptions,
             model_path: str, cores: Cores | None = None) -> dict[str, Any]:
    """Traces one program at one size and replays it: one row of the table."""
    from commchar.apps.sweep import CaseFailed, run_traced
    from commchar.measure.launch import LaunchSpec
    from commchar.simulate.replay import ReplayRequest, drew_detours, replay
    from commchar.store.traces import extract_trace
    from commchar.trace.program import TraceRequest

    argv, job_argv, env = _program_launch(library, program.name, n, options)
    load = os.getloadavg()[0]
    try:
        # The measured time is the program's own, untraced: what a user runs. The traced run that
        # follows gives the trace to replay (and its loop time, which the tracer's cost inflates).
        attempts = run_launches(job_argv, env, options, cores or Cores())
        result = run_traced(store, TraceRequest(library, options.np, argv, LaunchSpec(), options.timeout))
    except CaseFailed as failed:
        raise _failed(program.name, n, library, options, failed) from None
    with tempfile.TemporaryDirectory(prefix="commchar-validate-") as tmp:
        directory = extract_trace(store, result["trace_id"], tmp)
        doc = replay(ReplayRequest(trace_dir=directory, model_path=model_path, library=library.name))
        # the same trace without the node's detours: what the noise model adds (where the replay
        # drew any: at p = 2 the costs hold them all)
        quiet = (replay(ReplayRequest(trace_dir=directory, model_path=model_path, library=library.name,
                                      noise="off")) if drew_detours(doc.get("noise")) else None)
    row: dict[str, Any] = {"program": program.name, "bytes": n, "p": options.np,
                           "iterations": options.iterations, "trace_id": result["trace_id"],
                           "S": doc["model"]["S"], "program_us": float(result["per_iteration_us"]),
                           "load_avg_1m": max(load, os.getloadavg()[0])}
    measured = loop_time(doc["predictions"]["loggps"]["ranks"], "measured")
    if measured is None:
        raise MeasurementError(f"validate: the trace of {program.name} has no loop phase "
                               f"(MPI_Pcontrol level {LOOP_LEVEL})")
    row["traced_us"] = measured / options.iterations
    for key in ("loggps", "loggp"):
        predicted = loop_time(doc["predictions"][key]["ranks"], "predicted") or 0.0
        row[f"{key}_us"] = predicted / options.iterations
    row["noise"] = doc.get("noise")
    if quiet is not None:
        predicted = loop_time(quiet["predictions"]["loggps"]["ranks"], "predicted") or 0.0
        row["loggps_quiet_us"] = predicted / options.iterations
    measured_into(row, _distance_row(attempts, cores or Cores()))
    row["warnings"] = doc["warnings"]
    return row


def _distance_row(attempts: list[dict[str, Any]], cores: Cores) -> dict[str, Any]:
    """The row's core distance and measured time over the launches kept (run_launches): the
    round trips of the last launch in the model's state (else the last launch), the main
    state's round trip of the model's points, whether the loop ran in that state ('same' where
    a launch did, 'differs' where none did, 'unknown' where either side was not measured), the
    runs it took, how many launches kept ran on a slowed core, each launch's time, and the
    measured time: the median over the launches in the model's state on full-speed cores
    (those in its state where every one was slowed; every launch where none was in it)."""
    states = split(cores.pairs)
    kept = [a for a in attempts if a.get("kept")] or attempts[-1:]

    def match_of(attempt: dict[str, Any]) -> str:
        pair = attempt["core_rtt_ns"]
        if states is None or pair is None:
            return "unknown"
        return "same" if cores.same_state((float(pair[0]), float(pair[1]))) else "differs"

    def slow(attempt: dict[str, Any]) -> bool:
        return cores.slowed(copy_pair(attempt))

    matches = [match_of(a) for a in kept]
    in_state = [a for a, m in zip(kept, matches) if m != "differs"]
    match = "same" if "same" in matches else "unknown" if in_state else "differs"
    chosen = [a for a in in_state if not slow(a)] or in_state or kept
    return {"rtt_ns": chosen[-1]["core_rtt_ns"], "model_rtt_ns": round(states.main_ns(), 1) if states else None,
            "match": match, "runs": len(attempts), "slowed": sum(slow(a) for a in kept), "attempts": attempts,
            "launches_us": [a["per_iteration_us"] for a in kept],
            "measured_us": statistics.median(a["per_iteration_us"] for a in chosen)}


def probe_time(points: list[dict], program: str, n: int, p: int) -> float | None:
    """The mean time of the kernel's probe of the program's operation at size n, scaled to one
    iteration (None: no probe, or n not measured): what the model was fitted to, beside the loop."""
    if program not in PROBES:
        return None
    op, variant, scale = PROBES[program]
    for pt in points:
        if (pt["op"], pt.get("variant") or "", int(pt["n_bytes"]), int(pt["p"])) == (op, variant, n, p) \
                and pt.get("valid", True):
            mean = pt.get("t_mean_us") or pt["t_us"]
            return scale * float(mean)
    return None


def loop_time(ranks: list[dict[str, Any]], key: str) -> float | None:
    """The loop's time: its phase's longest on any rank."""
    times = [ph[key] for r in ranks for ph in r["phases"] if ph["level"] == LOOP_LEVEL]
    return max(times) if times else None


def validate(store: Store, libraries: list[Library], options: ValidateOptions, observer: Observer,
             on_row: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Every repeat of every library: models and rows, then the summary (median, spread)."""
    todo = cases(options)
    if not todo:
        raise UsageError("validate: no program accepts any of the sizes given")
    observer.planned(len(libraries) * steps_per_library(options))
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="commchar-validate-models-") as tmp:
        for repeat in range(options.repeat):
            for library in libraries:  # alternated, so the machine's drift lands on each alike
                run_ids, model_path, points, model_distance = measure_model_settled(
                    store, library, options, Path(tmp), observer)
                from commchar.modelfile import load

                model = load(model_path)
                loggp = model.loggp(library.name) or {}
                # the per-size costs the replay priced each message by (docs/model-format.md)
                regimes = (model.data["libraries"][library.name].get("loggp") or {}).get("regimes")
                rows = []
                cores = Cores(tuple(model_distance["pairs"]), model_distance["copy_floor_ns"])
                for program, n in todo:
                    observer.step(f"{library.name}: {program.name} {n} B (repeat {repeat + 1})")
                    row = run_case(store, library, program, n, options, model_path, cores)
                    row["library"] = library.name
                    row["probe_us"] = probe_time(points, program.name, n, options.np)
                    row["repeat"] = repeat + 1
                    rows.append(row)
                    if on_row:
                        on_row(row)
                    observer.done()
                measure_slowed_again(rows, relaunch(library, options, cores, observer), cores,
                                     options.slowed_passes)
                after = measure_probes(store, library, options, observer, model_distance["pairs"])
                add_drift(rows, after, options.np)
                runs.append({"library": library.name, "repeat": repeat + 1, "model_run_id": run_ids[0],
                             "model_run_ids": run_ids,
                             "probe_run_id": after[0] if after else None,
                             "probe_core_distance": after[2] if after else None,
                             "model_core_distance": {k: v for k, v in model_distance.items() if k != "pairs"},
                             "loggp": {**{k: loggp.get(k) for k in ("L", "o_s", "o_r", "g", "G", "O", "S")},
                                       "regimes": regimes},
                             "rows": rows})
    return {"format": "commchar-validation", "version": 1, "unit": "us", "options": options.to_dict(),
            "runs": runs, "summary": summarize(runs)}


def add_drift(rows: list[dict[str, Any]], after: tuple[int, list[dict], dict[str, Any]] | None, p: int) -> None:
    """Each row's probe measured after the programs (probe_after_us) and how far it moved from
    the model's run (probe_drift_pct): None where either is missing, or where the probes after
    ran in another state of the cores (that move is the host's state, not its drift)."""
    for row in rows:
        probe = probe_time(after[1], row["program"], row["bytes"], p) if after else None
        row["probe_after_us"] = probe
        same = after is not None and after[2]["match"] != "differs"
        row["probe_drift_pct"] = (_pct(probe, row["probe_us"])
                                  if same and probe is not None and row["probe_us"] else None)


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (library, program, size): the median over repeats of each time and error,
    the spread (smallest and largest) of the errors, and how much further off LogGPS is than
    LogGP (the median over repeats of |LogGPS error| - |LogGP error|, points). Only the
    repeats whose loop ran with the ranks' cores in the main state of their model's points
    (`core_distance.match` not 'differs') count, when there are any: a loop that ran on
    another state of the host ran on another machine, in effect (docs/method.md, "Where the
    ranks' cores are");
    `repeats_in_state` says how many there were."""
    groups: dict[tuple[str, str, int, int], list[dict[str, Any]]] = {}
    for run in runs:
        for row in run["rows"]:
            groups.setdefault((row["library"], row["program"], row["bytes"], row["p"]), []).append(row)
    out = []
    for (library, program, n, p), every in groups.items():
        matched = [r for r in every if (r.get("core_distance") or {}).get("match", "unknown") != "differs"]
        rows = matched or every
        entry: dict[str, Any] = {"library": library, "program": program, "bytes": n, "p": p,
                                 "repeats": len(every), "repeats_in_state": len(matched)}
        for key in ("measured_us", "loggps_us", "loggp_us"):
            entry[key] = statistics.median(r[key] for r in rows)
        traced = [r["traced_us"] for r in rows if r.get("traced_us") is not None]
        entry["traced_us"] = statistics.median(traced) if traced else None
        for key in ("loggps_error_pct", "loggp_error_pct"):
            values = [r[key] for r in rows if r[key] is not None]
            entry[key] = statistics.median(values) if values else None
            entry[key.replace("_pct", "_range")] = [min(values), max(values)] if values else None
        # paired: both replays of one repeat's trace against its one measured time, so that
        # the medians of the two errors, taken from different repeats, are not compared
        further = [abs(r["loggps_error_pct"]) - abs(r["loggp_error_pct"]) for r in rows
                   if r["loggps_error_pct"] is not None and r["loggp_error_pct"] is not None]
        entry["loggps_further_pct"] = statistics.median(further) if further else None
        entry["S"] = rows[0]["S"]
        entry["load_avg_1m"] = max(r["load_avg_1m"] for r in rows)
        for key in ("probe_us", "probe_after_us", "probe_drift_pct", "loggps_quiet_error_pct"):
            values = [r[key] for r in rows if r.get(key) is not None]
            entry[key] = statistics.median(values) if values else None
        spans = [span for span in map(draw_span_pct, rows) if span is not None]
        entry["loggps_draw_span_pct"] = statistics.median(spans) if spans else None
        out.append(entry)
    return out


def draw_span_pct(row: dict[str, Any]) -> float | None:
    """How far apart the LogGPS replay's noise draws lay (largest less smallest time, in % of
    their median; None: no draws): the resolution of a prediction that is their median."""
    draws = ((row.get("noise") or {}).get("makespans") or {}).get("loggps") or []
    if len(draws) < 2 or statistics.median(draws) <= 0:
        return None
    return 100.0 * (max(draws) - min(draws)) / statistics.median(draws)
