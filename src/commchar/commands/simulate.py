"""`commchar simulate`: discrete-event simulation of collectives, Jacobi and GOAL schedules."""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from commchar import jsonio, outfile
from commchar.errors import UsageError
from commchar.simulate import list_collectives, run_simulator
from commchar.simulate.experiment import LINKS, ROUTINGS
from commchar.tables import table_rich
from commchar.vocabulary import parse_size

NAME = "simulate"
HELP = "simulate message passing (LogGOPS, topologies, congestion) at any scale"

# flags passed to the simulator unchanged: (flag, metavar, help)
_TIME_FLAGS = [
    ("--L", "latency"), ("--o", "overhead at both ends"), ("--o-s", "send overhead"),
    ("--o-r", "receive overhead"), ("--g", "gap between messages"), ("--G", "gap per byte"),
    ("--O", "overhead per byte"), ("--gamma", "computation per reduced byte"),
    ("--hop", "latency per network hop"), ("--op-cost", "jacobi: time of one arithmetic operation"),
]


def configure(parser: argparse.ArgumentParser) -> None:
    what = parser.add_argument_group("what to simulate (one of)")
    what.add_argument("--collective", metavar="OP[:ALG]", help="e.g. allreduce:rabenseifner, bcast:binomial")
    what.add_argument("--goal", metavar="FILE", help="a LogGOPSim GOAL text schedule")
    what.add_argument("--app", choices=["jacobi"], help="an application: jacobi")
    what.add_argument("--experiment", choices=["aggregation"],
                      help="the aggregation/broadcast experiment (hypercube 2-5 and fully connected)")
    what.add_argument("--list", action="store_true", help="list the collective algorithms")
    what.add_argument("--show-selection", action="store_true",
                      help="print which algorithm each library runs per operation and size at --p"
                           " (with --library: that library; --selection: with overrides)")
    parser.add_argument("--n", default="8", metavar="BYTES", help="collective message size (1024, 64K, 1MiB)")
    parser.add_argument("--p", default="2", metavar="P", help="number of ranks")
    parser.add_argument("--unknowns", metavar="N", help="jacobi: unknowns (default 32)")
    parser.add_argument("--iterations", metavar="I", help="jacobi: iterations (default 1)")
    parser.add_argument("--exchange", choices=["direct", "butterfly"], help="jacobi: exchange method")
    net = parser.add_argument_group("network")
    net.add_argument("--topology", default="full", help="full, hypercube[:D], torus:8x8[x8], fattree:K")
    net.add_argument("--congestion", choices=["on", "off", "flow"], default="off",
                     help="on: a link carries one message at a time per direction; flow: messages "
                          "crossing a link share its bandwidth max-min fairly (needs G > 0)")
    net.add_argument("--links", metavar="full-duplex|half-duplex",
                     help="half-duplex: a link carries one message at a time over both directions together "
                          "(default full-duplex; the experiment takes a comma-separated list and sweeps each)")
    net.add_argument("--routing", metavar="cut-through|store-and-forward",
                     help="store-and-forward: each hop receives the whole message before sending it on, and "
                          "ranks on the way (hypercube, torus) spend o_r + o_s forwarding it (default "
                          "cut-through; the experiment takes a comma-separated list)")
    cost = parser.add_argument_group("cost model (LogGOPS; LogGOPSim's defaults in ns)")
    cost.add_argument("--unit", choices=["ns", "us"], default="ns", help="unit of the times given and printed")
    for flag, text in _TIME_FLAGS:
        cost.add_argument(flag, metavar="T", type=float, help=text)
    cost.add_argument("--S", metavar="BYTES", help="longest eager message; longer ones use rendezvous")
    cost.add_argument("--rendezvous", choices=["handshake", "match"], default="handshake",
                      help="a long send completes at match + L (handshake) or at the match (as LogGOPSim)")
    cost.add_argument("--rendezvous-copy", choices=["both", "receiver"],
                      help="who pays O per byte of a rendezvous message: both ends (LogGOPSim) or the receiver"
                           " alone (single-copy transports); default: the model's, else both")
    cost.add_argument("--model", metavar="FILE", help="commchar model file: its loggp section sets the parameters")
    cost.add_argument("--library", metavar="L",
                      help="library of the model file; with an operation alone (--collective allreduce)"
                           " the algorithm this library runs at n and p is simulated")
    cost.add_argument("--selection", metavar="FILE",
                      help="JSON overriding the library's algorithm choice, e.g. {\"allreduce\": \"ring\"}")
    cost.add_argument("--call-costs", choices=["on", "off"], default="on",
                      help="apply the model's per-call collective costs (loggp.call_costs; default on)")
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print the simulator's JSON result")
    out.add_argument("--trace", metavar="FILE", help="write a Chrome trace-event timeline (Perfetto)")
    out.add_argument("--emit-goal", metavar="FILE", help="write the workload as GOAL text instead of simulating")
    out.add_argument("--out", metavar="DIR", default="out/aggregation",
                     help="experiment: directory for plots and results (default out/aggregation)")
    out.add_argument("--delays", metavar="LIST",
                     help="experiment: link delays in us, comma separated (default 11 values, 0.01 to 1000)")
    exp = parser.add_argument_group("aggregation experiment costs (us; --op-cost and --iterations "
                                    "also apply)")
    exp.add_argument("--message-overhead", metavar="US", type=float, default=0.1,
                     help="CPU time per message at each end (default 0.1)")
    exp.add_argument("--value-cost", metavar="US", type=float, default=0.0,
                     help="CPU time per value a message carries, at each end (default 0)")
    exp.add_argument("--bandwidth", metavar="MB/S", type=float,
                     help="link bandwidth in MB/s (= bytes per us; default unlimited)")


def simulator_args(args: argparse.Namespace, staged: dict[str, Path] | None = None) -> list[str]:
    """The simulator's argument list for a parsed `commchar simulate` command; `staged` gives
    where the simulator writes --trace and --emit-goal (commchar.outfile puts them in place)."""
    argv: list[str] = []
    chosen = [name for name in ("collective", "goal", "app") if getattr(args, name)]
    if len(chosen) != 1:
        raise UsageError("give exactly one of --collective, --goal, --app, --experiment, --list")
    if args.collective:
        n = parse_size(args.n, "--n")
        argv += ["--collective", selected_algorithm(args, n), "--n", str(n)]
    if args.goal:
        argv += ["--goal", args.goal]
    if args.app:
        argv += ["--app", args.app]
        for name in ("unknowns", "iterations", "exchange"):
            if getattr(args, name) is not None:
                argv += [f"--{name}", str(getattr(args, name))]
    if not args.goal:
        argv += ["--p", _positive_int(args.p, "--p")]
    argv += ["--topology", args.topology, "--congestion", args.congestion, "--unit", args.unit,
             "--rendezvous", args.rendezvous, "--call-costs", args.call_costs]
    for flag, value, allowed in (("--links", args.links, LINKS), ("--routing", args.routing, ROUTINGS)):
        if value is not None:
            if value not in allowed:
                raise UsageError(f"{flag} must be one of {', '.join(allowed)}, not '{value}'")
            argv += [flag, value]
    if args.rendezvous_copy:
        argv += ["--rendezvous-copy", args.rendezvous_copy]
    for flag, _ in _TIME_FLAGS:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None:
            argv.append(f"{flag}={float(value)!r}")  # '=' keeps a negative value from reading as a flag
    if args.S is not None:
        argv += ["--S", str(parse_size(args.S, "--S"))]
    if args.model:
        model = checked_model(args.model)
        argv += ["--model", args.model]
        if args.gamma is None:
            gamma = gamma_from_model(model, args.library, args.unit)
            if gamma is not None:
                argv.append(f"--gamma={gamma!r}")
    if args.library:
        argv += ["--library", args.library]
    staged = staged or {}
    if args.trace:
        argv += ["--trace", str(staged.get("trace", args.trace))]
    if args.emit_goal:
        argv += ["--emit-goal", str(staged.get("emit_goal", args.emit_goal))]
    return argv


def selected_algorithm(args: argparse.Namespace, n: int) -> str:
    """`op:algorithm` to simulate: as given, or for an operation alone with --library,
    the algorithm that library runs at n and p (commchar.simulate.selection)."""
    from commchar.simulate import selection

    spec = args.collective
    if ":" in spec or not args.library or spec not in selection.OPERATIONS:
        return spec
    overrides = selection.load_overrides(args.selection) if args.selection else None
    if args.library not in selection.LIBRARIES:
        return spec
    return selection.choose(args.library, spec, n, int(_positive_int(args.p, "--p")), overrides=overrides)


def checked_model(path: str) -> Any:
    """The model file through the one reader (commchar.modelfile.load), every library
    checked: the simulator reads only the loggp section, so a file the schema refuses
    is refused here, in the schema's words, before the simulator sees it."""
    from commchar.modelfile import load

    model = load(path)
    model.check_all()
    return model


def gamma_from_model(model: Any, library: str | None, unit: str) -> float | None:
    """Computation per reduced byte from a fitted model (calibration.gamma_us) in `unit`;
    None when the model lacks reduce:sum and reduce:nop or the library is ambiguous."""
    from commchar.simulate.calibration import gamma_us

    libraries = [library] if library else model.libraries()
    if len(libraries) != 1 or libraries[0] not in model.libraries():
        return None  # the simulator itself names the library problem
    gamma = gamma_us(model, libraries[0])
    return None if gamma is None else gamma * (1000.0 if unit == "ns" else 1.0)


def _positive_int(text: str, flag: str) -> str:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"{flag} '{text}' is not a positive integer")
    return text


_CONGESTION_NAMES = {"none": "off", "links": "on", "flow": "flow level"}


def _render(result: dict[str, Any], console: Console) -> None:
    unit = result["unit"]
    fin = result["finish"]
    perf = result["performance"]
    congestion = ", ".join([_CONGESTION_NAMES[result["congestion_model"]],
                            *(result[k] for k in ("links", "routing") if k in result)])
    table = Table(title=f"{result['workload']} on {result['topology']} (congestion {congestion})",
                  title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("makespan", f"{result['makespan']:.3f} {unit}")
    table.add_row("rank finish min / median / mean / max",
                  f"{fin['min']:.3f} / {fin['median']:.3f} / {fin['mean']:.3f} / {fin['max']:.3f} {unit}")
    table.add_row("last rank to finish", str(fin["last_rank"]))
    table.add_row("events (messages, rendezvous)",
                  f"{result['events']} ({result['messages']}, {result['rendezvous_messages']})")
    table.add_row("wall time", f"{perf['wall_s']:.3f} s")
    table.add_row("events per second", f"{perf['events_per_s'] / 1e6:.2f} M")
    if perf.get("peak_rss_bytes"):
        table.add_row("peak memory", f"{perf['peak_rss_bytes'] / 2**20:.1f} MiB")
    params = result["params"]
    table.caption = ("L={L} o_s={o_s} o_r={o_r} g={g} G={G}/B O={O}/B S={S} B gamma={gamma}/B hop={hop} "
                     f"({unit}), rendezvous: {{rendezvous}}").format(**params).replace(
                         "{rendezvous}", params["rendezvous"])
    if params.get("rendezvous_copy"):
        table.caption += f", copied by: {params['rendezvous_copy']}"
    call = params.get("call_cost") or {}
    if call.get("fixed") or call.get("per_byte") or call.get("scale", 1.0) != 1.0:
        first = f"{call['fixed']:g} {unit}"
        if call.get("per_byte"):
            first += f" + {call['per_byte']:g} {unit}/B"
        table.caption += f"; per-call cost of the model: {first} first, every cost above x{call['scale']:.4g}"
    console.print(table)


def show_selection(args: argparse.Namespace, console: Console) -> None:
    from commchar.simulate import selection

    overrides = selection.load_overrides(args.selection) if args.selection else None
    p = int(_positive_int(args.p, "--p"))
    libraries = [args.library] if args.library else list(selection.LIBRARIES)
    sizes = [8 * 4 ** k for k in range(10)]
    for library in libraries:
        table = Table(title=f"{library}: algorithm per operation and size at p = {p}", title_justify="left")
        for name, justify in (("operation", "left"), ("from n (B)", "right"), ("simulated as", "left"),
                              ("library runs", "left")):
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        sources: list[str] = []
        for op in selection.OPERATIONS:
            previous = None
            for n in sizes:
                c = selection.decide(library, op, n, p, overrides=overrides)
                row = (c.algorithm + ("" if c.exact else " ~"), c.library_algorithm)
                if c.source not in sources:
                    sources.append(c.source)
                if row != previous:
                    table.add_row(op, str(n), *row)
                    previous = row
        table.caption = "~ : the nearest schedule the simulator has. Rules: " + "; ".join(sources)
        console.print(table, markup=False)


def _run_with_progress(argv: list[str]) -> dict[str, Any]:
    """Runs the simulator; a run longer than a second shows a bar on stderr: done and time
    left when the workload knows its size (GOAL, a replayed trace), else operations done."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                               TextColumn, TimeElapsedColumn, TimeRemainingColumn)

    from commchar.terminal import console as terminal_console

    bar: Progress | None = None
    task = None

    def update(done: int, total: int | None, _seconds: float) -> None:
        nonlocal bar, task
        if bar is None:
            columns: list[Any] = [TextColumn("simulating"), SpinnerColumn() if total is None else BarColumn(),
                       MofNCompleteColumn() if total else TextColumn("{task.completed} operations"),
                       TimeElapsedColumn()]
            if total:
                columns.append(TimeRemainingColumn())
            bar = Progress(*columns, console=terminal_console(stderr=True), transient=True)
            bar.start()
            task = bar.add_task("simulate", total=total)
        bar.update(task, completed=done)  # type: ignore[arg-type]

    try:
        return run_simulator(argv, on_progress=update)
    finally:
        if bar is not None:
            bar.stop()


def execute(args: argparse.Namespace, console: Console) -> int:
    if args.show_selection:
        show_selection(args, console)
        return 0
    if args.list:
        console.print("\n".join(list_collectives()), markup=False)
        return 0
    if args.experiment:
        from commchar.simulate.experiment import AggregationExperiment, parse_choices, parse_delays, tables

        delays = parse_delays(args.delays) if args.delays else None
        networks = {"links": parse_choices(args.links or LINKS[0], "--links", LINKS),
                    "routings": parse_choices(args.routing or ROUTINGS[0], "--routing", ROUTINGS)}
        experiment = AggregationExperiment(
            delays_us=delays, iterations=int(_positive_int(args.iterations, "--iterations")) if args.iterations else 10,
            op_cost_us=args.op_cost if args.op_cost is not None else 1.0,
            overhead_us=args.message_overhead, value_cost_us=args.value_cost,
            bandwidth_bytes_per_us=args.bandwidth, **networks)
        with Progress(TextColumn("aggregation experiment"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeRemainingColumn(), console=console, transient=True) as progress:
            task = progress.add_task("runs", total=None)
            result = experiment.run(lambda done, total: progress.update(task, completed=done, total=total))
        outdir = Path(args.out)
        try:
            paths = experiment.save(result, outdir)
        except OSError as exc:
            raise UsageError(f"cannot write the results to {outdir}: {exc.strerror or exc}") from None
        if args.json:
            console.print_json(jsonio.dumps(result.as_json()))
        else:
            for table in tables(result):
                console.print(table_rich(table))
            console.print(f"plots and results in {outdir}: " + ", ".join(p.name for p in paths), markup=False)
        return 0
    with ExitStack() as outputs:  # each file the simulator writes is put in place when it succeeds
        staged = {name: outputs.enter_context(outfile.output_path(getattr(args, name)))
                  for name in ("trace", "emit_goal") if getattr(args, name)}
        argv = simulator_args(args, staged)
        if args.emit_goal:
            run_simulator(argv, expect_json=False)
        else:
            outcome = _run_with_progress(argv)
    if args.emit_goal:
        console.print(f"wrote {args.emit_goal}", markup=False)
        return 0
    if args.json:
        console.print_json(jsonio.dumps(outcome))
    else:
        _render(outcome, console)
    return 0
