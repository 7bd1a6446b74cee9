"""`commchar fit`: fit Hockney, protocol regimes, collective laws and LogGP/LogGPS to measurements."""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from typing import Any

from rich.console import Console

from commchar.core_distance import by_round_trip
from commchar.errors import UsageError
from commchar.modelfile import ModelDocument, OperationEntry, given, save
from commchar.terminal import styled
from commchar.models.loggp import unknown_parameters
from commchar.models.thresholds import describe
from commchar.tables import Table, table_rich
from commchar.vocabulary import UNIT_CHOICES, UNITS_HELP, unit_system

DEFAULT_DB = "commchar.db"

NAME = "fit"
HELP = "fit communication models (Hockney, regimes, laws in p, LogGP/LogGPS) to measured points"


def configure(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("input (one of; default --db commchar.db)")
    source.add_argument("--db", help=f"commchar database, with --run (default ./{DEFAULT_DB})")
    source.add_argument("--run", type=int, action="append", metavar="ID",
                        help="run to fit (repeatable, e.g. one per library; default: every run in --db)")
    source.add_argument("--csv", metavar="FILE",
                        help="CSV with columns op, p, n_bytes, t_us (library, variant optional);"
                             " one row per point or per sample (samples become medians)")
    source.add_argument("--json", metavar="FILE", help="JSON list of point objects (commchar export --format json)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the model file here (JSON)")
    parser.add_argument("--units", choices=UNIT_CHOICES, default="si", help=UNITS_HELP)
    parser.add_argument("--regime-penalty", type=float, metavar="X", default=None,
                        help="extra BIC charge (in ln N) per protocol breakpoint (default 4.5); lower finds"
                             " more regimes: closer fits of curved data, more spurious thresholds")
    parser.add_argument("--oversubscribed", choices=("exclude", "include"), default="exclude",
                        help="points measured with more ranks than cores: exclude (default) leaves them out"
                             " wherever dedicated points of the same operation exist; include fits them too;"
                             " either way every operation fitted with them is marked")
    parser.add_argument("--call-costs", choices=("on", "off"), default="on",
                        help="on (default): also fit each collective's per-call cost for the simulator"
                             " (loggp.call_costs; needs the simulator, `make sim`)")
    parser.add_argument("--holdout-sizes", type=int, metavar="K",
                        help="also report the median relative error predicting every K-th interior size"
                             " left out of the fit")
    parser.add_argument("--holdout-p", type=int, action="append", metavar="P", default=[],
                        help="with --holdout-sizes: also leave out every collective point at this p")
    parser.add_argument("--np", metavar="LIST",
                        help="fit only the points measured at these process counts (2,4,8 or 2:8), to check"
                             " the laws in p at the others (bench/laws_extrapolation.py)")


def _read(args: argparse.Namespace) -> tuple[list[dict], list[dict], dict[str, Any]]:
    from commchar.models.inputs import read_csv, read_json, read_store

    chosen = [name for name in ("db", "csv", "json") if getattr(args, name)]
    if not chosen:
        args.db = DEFAULT_DB  # as run, report and runs
    elif len(chosen) != 1:
        raise UsageError("commchar fit: give exactly one of --db, --csv, --json")
    if args.run and not args.db:
        raise UsageError("commchar fit: --run needs --db")
    if args.db:
        return read_store(args.db, args.run or [])
    if args.csv:
        return read_csv(args.csv), [], {"runs": [{"csv": args.csv}]}
    return read_json(args.json), [], {"runs": [{"json": args.json}]}


def _at_np(points: list[dict], text: str) -> list[dict]:
    from commchar.measure.plan import parse_np

    wanted = set(parse_np(text))
    kept = [pt for pt in points if pt["p"] in wanted]
    if not kept:
        found = ",".join(str(q) for q in sorted({pt["p"] for pt in points}))
        raise UsageError(f"commchar fit: no point at --np {text} (measured at p = {found or 'none'})")
    return kept


def execute(args: argparse.Namespace, console: Console) -> int:
    penalty = args.regime_penalty
    if penalty is not None and not 0 <= penalty <= 1000:
        raise UsageError(f"commchar fit: --regime-penalty must be in [0, 1000], got {penalty:g}")
    points, failures, facts = _read(args)  # a bad input is said before the fitting stack loads
    if args.np is not None:
        points = _at_np(points, args.np)
    from commchar.models.document_fit import fit_document
    from commchar.models.inputs import receiver_delays
    from commchar.models.regimes import DEFAULT_PENALTY

    penalty = DEFAULT_PENALTY if penalty is None else penalty
    model = fit_document(points, failures, units=unit_system(args.units), runs=facts.get("runs"),
                         receiver_delay_us=receiver_delays(facts), penalty=penalty,
                         oversubscribed=args.oversubscribed)
    if args.db:  # how the runs' sizes were chosen, and the CIs the adaptive rule judged
        from commchar.measure.sizechoice import size_choice

        model = model.with_provenance(replace(model.provenance_or_empty(),
                                              size_choice=size_choice(args.db, args.run or [])))
    from commchar.simulate.calibration import calibrated

    model = calibrated(model, points, call_costs=args.call_costs == "on")
    provenance = model.provenance_or_empty()
    if args.output:
        save(model, args.output)
        count = len(model.libraries)
        console.print(f"model of {count} librar{'y' if count == 1 else 'ies'}"
                      f" ({given(provenance.points, 0)} points) written to {args.output}")
    else:
        for table in summary_tables(model):
            console.print(table_rich(table))
    if args.holdout_sizes is not None or args.holdout_p:
        from commchar.models.validation import holdout_errors

        every = 3 if args.holdout_sizes is None else args.holdout_sizes  # 0 is an error, not the default
        result = holdout_errors(points, every, args.holdout_p, penalty, args.oversubscribed)
        console.print(table_rich(holdout_table(result)))
        console.print(holdout_summary(result), markup=False)
    for line in size_choice_lines(model):
        console.print(line, markup=False, highlight=False)
    missed = missed_points(model)
    if missed:
        console.print(styled(("missed by more than 10%:", "red"), " " + "; ".join(missed)))
    left = given(provenance.oversubscribed_excluded, [])
    if left:
        ps = sorted({q for e in left for q in e["p"]})
        console.print(f"oversubscribed points left out of {len(left)} operation(s) that have dedicated ones"
                      f" (p={','.join(map(str, ps))}, {sum(e['points'] for e in left)} points);"
                      " --oversubscribed include fits them", markup=False, highlight=False)
    for library, found in sorted(given(provenance.core_distance, {}).items()):
        if found.get("mixed"):
            levels = ", ".join(f"{st['measurements']} at {st['rtt_ns']:g} ns" for st in found["states"])
            console.print(styled(("cores moved:", "red"),
                                 f" {library}: the host moved ranks 0 and 1 during the run (points: {levels});"
                                 f" {found.get('left_out', 0)} point(s) outside the main state left out"),
                          markup=False, highlight=False)
            own = found.get("own_state_by_operation") or {}
            for rtt, labels in by_round_trip({label: entry["rtt_ns"] for label, entry in own.items()}):
                console.print(styled(("cores moved:", "red"),
                                     f" {library}: fitted at {rtt:g} ns, where most of their own points lie:"
                                     f" {', '.join(labels)}; their model is of that state, not the main one:"
                                     " measure them again"),
                              markup=False, highlight=False)
    if given(provenance.oversubscribed, []):
        console.print(styled(("fitted from oversubscribed jobs:", "yellow"),
                             " " + ", ".join(given(provenance.oversubscribed, []))))
    for library, lib in model.libraries.items():
        if given(lib.imported_from, ""):
            console.print(styled(("note:", "yellow"), f" {library}: {lib.imported_from}"))
    for library, lib in sorted(model.libraries.items()):
        for note in unknown_parameters(lib.loggp):
            console.print(styled(("loggp:", "yellow"), f" {library}: {note}"), markup=False, highlight=False)
    for note in given(provenance.skipped, ()):
        console.print(styled(("skipped:", "yellow"), f" {note}"))
    return 0


def size_choice_lines(model: ModelDocument) -> list[str]:
    """One line per adaptive run: how many series met the CI target, how many still asked."""
    lines = []
    for run in (given(model.provenance_or_empty().size_choice, None) or {}).get("runs", []):
        modelled = [s for s in run["series"] if "ci_met" in s]
        if run["rule"] == "adaptive" and modelled:
            lines.append(f"sizes of run {run['run_id']}: adaptive, {sum(s['sizes'] for s in run['series'])}"
                         f" points; predicted times known to {100 * run['ci_target']:g}% in"
                         f" {sum(s['ci_met'] for s in modelled)} of {len(modelled)} series,"
                         f" {sum(bool(s['open']) for s in modelled)} still asking for sizes"
                         " (provenance.size_choice)")
    return lines


def _g(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return "-"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def _ci(ci: list | None) -> str:
    return f"[{_g(ci[0], 3)}, {_g(ci[1], 3)}]" if ci else ""


def _breaks(bps: list[dict]) -> str:
    """Where each new regime starts: between the last size of one and the first of the next."""
    return ", ".join(describe(b["after"] + 1, b["at"] + 1) for b in bps) or "-"


def _threshold(lg: dict, name: str) -> str:
    """A LogGPS threshold with the interval of sizes that brackets it."""
    bracket = lg.get(f"{name}_interval")
    return _g(lg.get(name)) + (f" in {describe(*bracket)}" if bracket else "")


def summary_tables(model: ModelDocument) -> list[Table]:
    from commchar.models.laws import Law

    units = given(model.provenance_or_empty().units, {})
    bw, pi = units["bandwidth"], units["specific_performance"]
    p2p: list[list[str]] = []
    coll: list[list[str]] = []
    peak: list[list[str]] = []
    loggp: list[list[str]] = []
    errors: list[list[str]] = []
    for library, lib in model.libraries.items():
        for key, op in lib.operations.items():
            errors.append(_error_row(library, key, op))
            if op.kind == "p2p":
                h = given(op.fit, {})["hockney"]
                m = given(op.metrics, {})
                p2p.append([library, key, _g(h["t_s"]), _g(h["t_b"]),
                            f"{_g(m['Bw_as'])} {_ci(m['ci95'].get('Bw_as'))}", _g(m["n_half"]),
                            _g(m["pi_s"]), _g(h["r2"], 3), _g(h["max_rel_residual"], 2),
                            _breaks(given(op.breakpoints, []))])
                continue
            laws = given(op.laws, {})
            cell = lambda t: (f"{Law(laws[t]['form'], laws[t]['params']).expr(3)}  {laws[t]['complexity']}"  # noqa: E731
                              if t in laws else "-")
            coll.append([library, key, cell("t_s"), cell("t_b"), cell("t_c"), str(len(op.segments)),
                         _breaks(given(op.breakpoints, []))])
            metrics = given(op.metrics, {})
            pk = metrics.get("peak") or {}
            if pk:
                rcc = ", ".join(f"{p}:{_g(r.get('r_cc'), 3)}" for p, r in metrics["per_p"].items() if "r_cc" in r)
                bus = ", ".join(f"{p}:{_g(r.get('busbw'), 3)}" for p, r in metrics["per_p"].items() if "busbw" in r)
                peak.append([library, key, f"{pk['p_range'][0]}-{pk['p_range'][1]}", _g(pk.get("Bw_pag")),
                             _g(pk.get("pi_pag")), _g(pk.get("n_half_mag")), rcc or "-", bus or "-"])
        lg = given(lib.loggp, None) or given(lib.loggp_partial, None)
        if lg:
            loggp.append([library, *(_g(lg.get(k)) for k in ("L", "o_s", "o_r", "g", "G", "O")),
                          _threshold(lg, "S"), _threshold(lg, "s"), "; ".join(lg.get("notes", [])) or "-"])
    tables = [
        Table("fit-errors", "Relative error of each model at its own measured points (in-sample), at sizes held"
              " out of a second fit, and of the mean fit (the replay's) at the measured means",
              ["library", "operation", "regimes", "in-sample median", "in-sample max", "> 10%",
               "held-out median", "held-out max", "mean fit median", "mean fit max"], errors),
        Table("fit-p2p", "Point-to-point: Hockney fit over all sizes (R^2 on relative error);"
              " Bw_as from the last regime, pi_s from the first",
              ["library", "operation", "t_s (us)", "t_b (us/B)", f"Bw_as ({bw}) [95% CI]", "n_half (B)",
               f"pi_s ({pi})", "R^2", "max rel res", "next regime starts in (B)"], p2p),
        Table("fit-collectives", "Collectives: laws in p (first regime's t_s, last regime's t_b, t_c)",
              ["library", "operation", "t_s(p)", "t_b(p)", "t_c(p)", "regimes", "regimes start in"], coll),
        Table("fit-peaks", "Collectives: peak aggregated metrics",
              ["library", "operation", "p", f"Bw_pag ({bw})", f"pi_pag ({pi})", "n_half_mag (B)", "r_cc(p)",
               f"busbw ({bw}) at largest n"], peak),
        Table("fit-loggp", "LogGP / LogGPS", ["library", "L (us)", "o_s (us)", "o_r (us)", "g (us)", "G (us/B)",
              "O (us/B)", "S (B)", "s (B)", "notes"], loggp),
    ]
    return [t for t in tables if t.rows]


def _pct(errors: dict | None, name: str) -> str:
    value = (errors or {}).get(name)
    return f"{100 * value:.1f}%" if isinstance(value, (int, float)) else "-"


def _error_row(library: str, key: str, op: OperationEntry) -> list[str]:
    errors = given(op.errors, {})
    inside = errors.get("in_sample")
    worst = (inside or {}).get("worst") or {}
    at = f" at {worst['n_bytes']} B" if "n_bytes" in worst else ""
    over = (inside or {}).get("over_10pct")
    return [library, key, str(len(op.segments)), _pct(inside, "median"), _pct(inside, "max") + at,
            "-" if over is None else str(over), _pct(errors.get("held_out"), "median"),
            _pct(errors.get("held_out"), "max"), _pct(errors.get("mean_in_sample"), "median"),
            _pct(errors.get("mean_in_sample"), "max")]


def missed_points(model: ModelDocument) -> list[str]:
    """'library operation: k of N points' for every operation missing a measured point by more than 10%."""
    out = []
    for library, lib in model.libraries.items():
        for key, op in lib.operations.items():
            inside = given(op.errors, {}).get("in_sample") or {}
            if inside.get("over_10pct"):
                out.append(f"{library} {key}: {inside['over_10pct']} of {inside['points']} points"
                           f" (largest {100 * inside['max']:.0f}% at {inside['worst']['n_bytes']} B)")
    return out


def holdout_summary(result: dict) -> str:
    text = (f"Held-out prediction: median relative error {result['overall']['median']:.2%}"
            f" over {result['overall']['points']} points"
            + "".join(f"; {k} {v['median']:.2%} ({v['points']} points)" for k, v in result["by_kind"].items()))
    if result.get("neighbour_floor") is not None:
        text += (f". Interpolating each held-out size between its measured neighbours gives"
                 f" {result['neighbour_floor']:.2%}: the noise of the measurements themselves.")
    return text


def holdout_table(result: dict) -> Table:
    rows = [[name, str(row["points"]), f"{row['median']:.2%}", f"{row['max']:.2%}"]
            for name, row in result["per_operation"].items()]
    return Table("fit-holdout", "Held-out prediction per operation",
                 ["library operation", "held-out points", "median rel. error", "max rel. error"], rows)
