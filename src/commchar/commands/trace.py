"""`commchar trace`: run an unmodified MPI program under the tracer, store its trace.

    commchar trace --library mpich --np 2 -- ./app ARGS
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import signal
import tempfile
from pathlib import Path

from rich.console import Console

from commchar.commands.run import MAX_RANKS_PER_SLOT  # the ranks per core `run` launches unforced
from commchar.errors import MeasurementError, UsageError
from commchar.measure.launch import LAUNCHERS, LaunchSpec, available_slots, parse_env
from commchar.measure.libraries import Library, discover, linked_family, select
from commchar.store import Store
from commchar.store.traces import extract_trace, trace
from commchar.tables import Table, table_rich
from commchar.trace import RankTrace, Trace
from commchar.trace.program import TraceOutcome, TraceRequest, read_ranks, trace_program, work_dir

# The wall time a traced program gets by default: a launcher that never returns is stopped.
DEFAULT_TIMEOUT_S = 3600.0

NAME = "trace"
HELP = "run an MPI program under the tracer and store its trace (commchar trace -- ./app ARGS)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="commchar.db", help="SQLite database (default ./commchar.db)")
    parser.add_argument("--library", help="the MPI library the program is linked with "
                        "(default: found from the program)")
    parser.add_argument("--np", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds the program may run before it is killed (default {DEFAULT_TIMEOUT_S:g};"
                             " 0: no limit)")
    parser.add_argument("--force-np", action="store_true",
                        help=f"launch even more than {MAX_RANKS_PER_SLOT} ranks per core (refused otherwise)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set a variable in the job's environment (repeatable)")
    parser.add_argument("--launcher", choices=LAUNCHERS, default="mpirun",
                        help="the library's own mpirun, or Slurm's srun")
    parser.add_argument("--hostfile", help="host file for mpirun")
    parser.add_argument("--buffer", type=int, metavar="RECORDS",
                        help="records each rank buffers before writing (default 4096)")
    parser.add_argument("--trace-dir", metavar="DIR",
                        help="where the ranks write their files before they are stored: a "
                        "directory every host can write (default: a temporary one in /tmp)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument("--show", type=int, metavar="TRACE_ID",
                        help="print the summary of a stored trace instead of running a program")
    parser.add_argument("program", nargs=argparse.REMAINDER,
                        help="-- then the program and its arguments")


def _resolved(program: str) -> str:
    """The file a program name stands for: a bare name is looked up on PATH, as the launcher will."""
    if "/" in program:
        return program
    return shutil.which(program) or program


def _library(name: str | None, program: list[str]) -> Library:
    if name:
        return select([name], mpi_only=True)[0]
    found = discover()
    family = linked_family(_resolved(program[0])) if program else None
    matching = [lib for lib in found if lib.family == family]
    if matching:
        return matching[0]
    if len(found) == 1:
        return found[0]
    raise UsageError("trace: cannot tell which MPI library the program uses: give --library "
                     f"({', '.join(lib.name for lib in found) or 'none found'})")


def _request(args: argparse.Namespace) -> TraceRequest:
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        raise UsageError("trace: no program given (commchar trace [options] -- ./app ARGS)")
    if args.np < 1:
        raise UsageError("--np must be at least 1")
    if not (args.timeout >= 0 and math.isfinite(args.timeout)):
        raise UsageError("--timeout must be a number of seconds (0: no limit)")
    if args.buffer is not None and not 64 <= args.buffer <= 1 << 26:
        raise UsageError("--buffer must be between 64 and 67108864 records")
    spec = LaunchSpec(args.launcher, Path(args.hostfile) if args.hostfile else None,
                      parse_env(args.env))
    if args.launcher == "mpirun" and not args.force_np:  # srun knows its allocation
        slots = available_slots(spec)
        if args.np > slots * MAX_RANKS_PER_SLOT:
            raise UsageError(f"--np {args.np} is {args.np // slots} ranks per core on {slots} core(s), more"
                             f" than {MAX_RANKS_PER_SLOT}: give --force-np to launch it anyway")
    return TraceRequest(_library(args.library, program), args.np, program, spec, args.timeout or None,
                        args.buffer, Path(args.trace_dir) if args.trace_dir else None)


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a batch system's TERM stops the trace as cleanly as Ctrl-C


def execute(args: argparse.Namespace, console: Console) -> int:
    if args.show is not None:
        return _show(args, console)
    request = _request(args)
    with work_dir(request.work_dir):  # a folder that cannot be made is refused before the store is
        pass
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with Store(args.db) as store:
        outcome = trace_program(store, request)
    if args.json:
        console.print_json(json.dumps(_as_json(outcome, request.library.name, request.p)))
    else:
        _print(console, outcome, request.library.name, request.p)
    if outcome.status != "complete":
        raise MeasurementError(f"trace {outcome.trace_id} {outcome.status}: {outcome.message}; "
                               "what the ranks wrote is kept")
    return 0


def _show(args: argparse.Namespace, console: Console) -> int:
    if args.program[1:] if args.program[:1] == ["--"] else args.program:
        raise UsageError("trace: --show takes no program")
    with Store(args.db, create=False) as store, tempfile.TemporaryDirectory() as directory:
        row = trace(store, args.show)
        ranks = read_ranks(extract_trace(store, args.show, directory), row["p"])
        readable = [rank for rank, _ in ranks if isinstance(rank, RankTrace)]
        summary = Trace(Path(directory), readable).summary() if readable else None
    outcome = TraceOutcome(row["id"], row["status"], row["exit_status"], row["wall_s"] or 0.0,
                           row["message"], summary)
    if args.json:
        console.print_json(json.dumps(_as_json(outcome, row["library"], row["p"])))
    else:
        _print(console, outcome, row["library"], row["p"])
    return 0


def _as_json(outcome: TraceOutcome, library: str, p: int) -> dict:
    return {
        "trace_id": outcome.trace_id, "status": outcome.status, "library": library,
        "p": p, "exit_status": outcome.exit_status, "wall_s": outcome.wall_s,
        "message": outcome.message,
        "summary": outcome.summary.to_dict() if outcome.summary else None,
    }


def _ms(ns: int) -> str:
    return f"{ns / 1e6:.3f}"


def _print(console: Console, outcome: TraceOutcome, library: str, p: int) -> None:
    console.print(f"trace {outcome.trace_id}: {library}, p = {p}, "
                  f"{outcome.status}, job wall time {outcome.wall_s:.2f} s")
    summary = outcome.summary
    if summary is None:
        return
    ranks = [[str(rank), host, _ms(wall), _ms(mpi), str(records)]
             for rank, (host, wall, mpi, records) in enumerate(zip(summary.hosts, summary.wall_ns,
                                                                  summary.mpi_ns, summary.records))]
    console.print(table_rich(Table("trace-ranks", "ranks",
                                   ["rank", "host", "Init→Finalize (ms)", "in MPI (ms)", "records"], ranks)))
    calls = [[name, str(entry["count"]), str(entry["bytes"]), str(entry["bytes2"]), _ms(entry["ns"])]
             for name, entry in summary.calls.items()]
    console.print(table_rich(Table("trace-calls", "calls (all ranks)",
                                   ["call", "count", "bytes sent", "bytes received", "time (ms)"], calls)))
    if summary.phases:
        phases = [[str(level), *map(_ms, times)] for level, times in summary.phases.items()]
        console.print(table_rich(Table("trace-phases", "phases (from each Pcontrol to the next)",
                                       ["Pcontrol level", *(f"rank {r} (ms)" for r in range(len(summary.hosts)))],
                                       phases)))
    if summary.others:
        named = ", ".join(f"{name} ×{count}" for name, count in summary.others.items())
        console.print(f"calls recorded but not followed (OTHER): {named}")
    for line in summary.partial:
        console.print(f"partial: {line}")
