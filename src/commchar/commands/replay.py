"""`commchar replay`: predict a traced program from a model file (LogGPS and LogGP).

    commchar replay --db commchar.db --trace 3 --model m.json
    commchar replay --dir traces/ --model m.json --library mpich --collectives expanded --json
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from commchar.errors import UsageError
from commchar.simulate.replay import MODES, POSTED_SENDS, ReplayRequest, charge_notes, replay

NAME = "replay"
HELP = "predict a traced program's time from a model file, LogGPS against LogGP, with each rank's breakdown"


def configure(parser: argparse.ArgumentParser) -> None:
    src = parser.add_argument_group("the trace (one of)")
    src.add_argument("--dir", metavar="D", help="a trace directory (rank-<r>.cctrace files)")
    src.add_argument("--trace", type=int, metavar="ID", help="a trace stored by `commchar trace` (with --db)")
    parser.add_argument("--db", default="commchar.db", help="SQLite database of --trace (default ./commchar.db)")
    parser.add_argument("--model", required=True, metavar="FILE", help="model file (commchar fit)")
    parser.add_argument("--library", metavar="L",
                        help="library of the model (default: the trace's, or the model's only one)")
    parser.add_argument("--collectives", choices=MODES, default="charged",
                        help="charged: each call costs the model's T(n, p) after all members arrive; "
                             "expanded: the library's algorithm as messages (default charged)")
    parser.add_argument("--compute-scale", type=float, default=1.0, metavar="X",
                        help="multiply the computation between MPI calls by X (0.5: a CPU twice as fast)")
    parser.add_argument("--topology", default="full", help="full, hypercube[:D], torus:AxB[xC], fattree:K")
    parser.add_argument("--congestion", choices=["on", "off", "flow"], default="off",
                        help="on: a link carries one message at a time; flow: messages on a link "
                             "share its bandwidth (see commchar simulate --help)")
    parser.add_argument("--other-as-compute", action="store_true",
                        help="replay MPI calls the replay cannot follow as computation instead of refusing")
    parser.add_argument("--cold-start", choices=["on", "off"], default="on",
                        help="charge each rank's first sends the model's cold start (loggp.cold_start, "
                             "the coldstart probe's fit): a traced program starts cold (default on)")
    parser.add_argument("--posted-sends", choices=POSTED_SENDS, default="blocking",
                        help="what an eager message MPI_Isend starts costs its sender: a blocking send's "
                             "o_s + (s-1)O (default), or the library's measured post (loggp.send_post, the "
                             "post probe's means) where that holds the copy and costs less")
    parser.add_argument("--noise", choices=["on", "off"], default="on",
                        help="draw the node's detours (loggp.noise, the noise probe's fit) where they hold a "
                             "rank inside the library (default on, where the model has them)")
    parser.add_argument("--noise-runs", type=int, default=5, metavar="K",
                        help="seeds drawn under noise; the run of the median time is the answer (default 5)")
    parser.add_argument("--emit-goal", metavar="FILE", help="also write the expanded schedule as GOAL")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def execute(args: argparse.Namespace, console: Console) -> int:
    if (args.dir is None) == (args.trace is None):
        raise UsageError("give exactly one of --dir D and --trace ID")
    if args.dir is not None:
        doc = replay(_request(args, Path(args.dir), args.library))
        return _show(doc, args, console)
    from commchar.store import Store
    from commchar.store.trace_predictions import save_prediction
    from commchar.store.traces import extract_trace, trace

    with Store(args.db, create=False) as store:
        info = trace(store, args.trace)
        if info["status"] != "complete":
            raise UsageError(f"trace {args.trace} is {info['status']}: only a complete trace can be replayed")
        with tempfile.TemporaryDirectory(prefix="commchar-trace-") as tmp:
            directory = extract_trace(store, args.trace, tmp)
            doc = replay(replace(_request(args, directory, args.library or info["library"]),
                                 label=f"trace {args.trace}"))
        doc["trace"].update({"db": str(args.db), "id": args.trace, "library": info["library"],
                             "dir": None, "program": info["program"]})
        doc["prediction_id"] = save_prediction(store, args.trace, doc)
    return _show(doc, args, console)


def _request(args: argparse.Namespace, directory: Path, library: str | None) -> ReplayRequest:
    return ReplayRequest(trace_dir=directory, model_path=args.model, library=library,
                         collectives=args.collectives, compute_scale=args.compute_scale,
                         topology=args.topology, congestion=args.congestion, emit_goal=args.emit_goal,
                         other_as_compute=args.other_as_compute, cold_start=args.cold_start,
                         posted_sends=args.posted_sends, noise=args.noise, noise_runs=args.noise_runs)


def _show(doc: dict[str, Any], args: argparse.Namespace, console: Console) -> int:
    if args.json:
        console.print_json(json.dumps(doc))
    else:
        render(doc, console)
        if args.emit_goal:
            console.print(f"wrote {args.emit_goal}", markup=False)
    return 0


def _bytes(s: float | None) -> str:
    return "none" if s is None else f"{int(s)} B"


def _cold(cold: dict[str, Any] | None) -> str:
    return "" if not cold else f", first {cold['messages']} sends a rank cold"


def _noise(noise: dict[str, Any] | None) -> str:
    if not noise:
        return ""
    spread = noise["makespans"]["loggps"]
    measured = (f"noise of p={noise.get('measured_p')} ({100 * (noise.get('measured_fraction') or 0):.2f}% of a rank,"
                f" {100 * (noise.get('fraction') or 0):.2f}% drawn beyond the costs' own)")
    if noise["runs"] < 2:
        return f", {measured}"
    return f", {measured}, median of {noise['runs']} draws ({spread[0]:.1f}..{spread[-1]:.1f} us)"


def _err(pct: float | None) -> str:
    return "" if pct is None else f"{pct:+.1f}%"


def render(doc: dict[str, Any], console: Console) -> None:
    """Measured against both predictions per rank, LogGPS's breakdown, phases when marked."""
    gps, gp = doc["predictions"]["loggps"], doc["predictions"]["loggp"]
    tr = doc["trace"]
    where = f"trace {tr['id']}" if tr.get("id") is not None else tr["dir"]
    table = Table(title=f"{where}: p={tr['p']}, {tr['calls']} MPI calls; model {doc['model']['library']} "
                        f"(S = {_bytes(doc['model']['S'])}), collectives {doc['collectives']}, "
                        f"compute x{doc['compute_scale']:g}{_cold(doc['model'].get('cold_start'))}"
                        f"{', Isends at their measured post' if doc.get('posted_sends') == 'measured' else ''}"
                        f"{_noise(doc.get('noise'))}",
                  title_justify="left")
    for col in ("rank", "measured us", "LogGPS us", "error", "LogGP us", "error"):
        table.add_column(col, justify="right")
    for a, b in zip(gps["ranks"], gp["ranks"]):
        table.add_row(str(a["rank"]), f"{a['measured']:.1f}", f"{a['predicted']:.1f}", _err(a["error_pct"]),
                      f"{b['predicted']:.1f}", _err(b["error_pct"]))
    table.add_row("all", f"{doc['measured']['makespan']:.1f}", f"{gps['makespan']:.1f}", _err(gps["error_pct"]),
                  f"{gp['makespan']:.1f}", _err(gp["error_pct"]), style="bold")
    console.print(table)
    parts = Table(title="predicted breakdown (LogGPS)", title_justify="left")
    for col in ("rank", "computation us", "communication us", "sync wait us"):
        parts.add_column(col, justify="right")
    for a in gps["ranks"]:
        parts.add_row(str(a["rank"]), f"{a['compute']:.1f}", f"{a['communication']:.1f}", f"{a['sync_wait']:.1f}")
    console.print(parts)
    if any(len(r["phases"]) > 1 for r in gps["ranks"]):
        phases = Table(title="phases (Pcontrol)", title_justify="left")
        for col in ("rank", "phase", "level", "measured us", "LogGPS us", "error", "LogGP us", "error"):
            phases.add_column(col, justify="right")
        for a, b in zip(gps["ranks"], gp["ranks"]):
            for pa, pb in zip(a["phases"], b["phases"]):
                phases.add_row(str(a["rank"]), str(pa["phase"]), "" if pa["level"] is None else str(pa["level"]),
                               f"{pa['measured']:.1f}", f"{pa['predicted']:.1f}", _err(pa["error_pct"]),
                               f"{pb['predicted']:.1f}", _err(pb["error_pct"]))
        console.print(phases)
    sigs = doc["signatures"]
    if sigs:
        coll = Table(title="collective calls", title_justify="left")
        for col in ("call", "p", "n B", "calls", "replayed", "algorithm", "cost us", "from"):
            coll.add_column(col, justify="right")
        for s in sigs:
            coll.add_row(s["call"], str(s["p"]), str(s["n"]), str(s["calls"]), s["mode"], s["algorithm"] or "default",
                         "" if s["cost_us"] is None else f"{s['cost_us']:.2f}", s.get("cost_basis") or "")
        console.print(coll)
    for note in charge_notes(doc):
        console.print(note, markup=False)
    for warning in doc["warnings"]:
        console.print(f"warning: {warning}", markup=False)
