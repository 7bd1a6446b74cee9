#!/usr/bin/env python3
"""The model against the validation programs: `commchar validate` per library,
then one plain table of measured and predicted time per iteration with the
errors (median over --repeat runs, each with its own freshly fitted model, and
the spread: smallest .. largest error), the span of the LogGPS replay's noise draws, and
the target (|LogGPS error| <= 10%, LogGPS no further off than LogGP by more than half
that span, the resolution of a prediction that is the draws' median) per row.

    python3 bench/validation.py --library mpich,openmpi --repeat 3
    python3 bench/validation.py --library mpich --programs ring_sendrecv --sizes 32K --repeat 5
    python3 bench/validation.py --precision 0.01 --max-time 1   (the model measured to 1%)
    python3 bench/validation.py --from-db v.db   (the last validation stored there, nothing run)
    python3 bench/validation.py --from-db a.db b.db c.db   (their last validations pooled: the
        median and spread over every repeat of all of them)
    python3 bench/validation.py --from-db v.db --first-pass   (each row as first measured, before
        the programs whose launches all ran on a slowed core were launched again)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

TARGET = 10.0


def _err(x: float | None) -> str:
    return "     -" if x is None else f"{x:+6.1f}%"


def _spread(pair: list[float] | None) -> str:
    return "" if not pair else f"{pair[0]:+.1f}..{pair[1]:+.1f}"


STRICT = 0.05  # points: LogGPS no further off than LogGP, rounding aside


def _resolution(e: dict) -> float:
    """How much further off than LogGP a LogGPS error may be and still count as no further:
    half the span of the LogGPS replay's noise draws (the prediction is their median, known no
    better), at least STRICT."""
    span = e.get("loggps_draw_span_pct")
    return max(STRICT, span / 2.0) if span is not None else STRICT


def _met(e: dict, strict: bool = False) -> bool:
    """Within the target under LogGPS, and LogGPS no further off than LogGP (strict: by more
    than rounding; else by more than the noise draws resolve), repeat by repeat: the median
    over repeats of |LogGPS error| - |LogGP error| (a validation stored without it: the
    difference of the two medians)."""
    gps, gp = e["loggps_error_pct"], e["loggp_error_pct"]
    slack = STRICT if strict else _resolution(e)
    further = e.get("loggps_further_pct")
    if further is None and gp is not None and gps is not None:
        further = abs(gps) - abs(gp)
    return gps is not None and abs(gps) <= TARGET and (further is None or further <= slack)


def print_table(doc: dict, markdown: bool = False) -> bool:
    """Prints the summary (a Markdown table with markdown); True when every row meets the target."""
    repeats = doc["options"]["repeat"]
    print(f"p = {doc['options']['np']}, {doc['options']['iterations']} iterations, "
          f"median of {repeats} run(s); times in us per iteration; probe: the kernel's mean of the "
          "same operation in the model's run; drift: its change when measured again after the programs")
    for run in doc["runs"]:
        if run["repeat"] == 1:
            lg = run["loggp"]
            print(f"  {run['library']}: S = {lg.get('S')} B, L = {lg.get('L'):.3g}, o_s = {lg.get('o_s'):.3g}, "
                  f"o_r = {lg.get('o_r'):.3g}, g = {lg.get('g'):.3g}, G = {lg.get('G'):.3g} us/B (first repeat)")
    columns = ["library", "program", "bytes", "measured", "traced", "probe", "drift", "LogGPS", "error", "spread",
               "LogGP", "error", "spread", "draws", "cores", "target"]
    if markdown:
        print("| " + " | ".join(columns) + " |")
        print("| " + " | ".join("---" if c in ("library", "program", "target") else "---:" for c in columns) + " |")
    else:
        print(f"{'library':8s} {'program':15s} {'bytes':>7s} {'measured':>9s} {'traced':>9s} {'probe':>9s} "
              f"{'drift':>7s} {'LogGPS':>9s} {'error':>7s} {'spread':>13s} {'LogGP':>9s} {'error':>7s} "
              f"{'spread':>13s} {'draws':>6s} {'cores':>5s}  target")
    ok = True
    for e in doc["summary"]:
        gps, gp = e["loggps_error_pct"], e["loggp_error_pct"]
        met = _met(e)
        ok &= met
        probe = "" if e.get("probe_us") is None else f"{e['probe_us']:.3f}"
        traced = "" if e.get("traced_us") is None else f"{e['traced_us']:.3f}"
        cells = [e["library"], e["program"], str(e["bytes"]), f"{e['measured_us']:.3f}", traced, probe,
                 _err(e.get("probe_drift_pct")).strip(), f"{e['loggps_us']:.3f}", _err(gps).strip(),
                 _spread(e["loggps_error_range"]),
                 f"{e['loggp_us']:.3f}", _err(gp).strip(), _spread(e["loggp_error_range"]),
                 "" if e.get("loggps_draw_span_pct") is None else f"{e['loggps_draw_span_pct']:.1f}%",
                 f"{e.get('repeats_in_state', e['repeats'])}/{e['repeats']}", "met" if met else "NOT met"]
        if markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print(f"{cells[0]:8s} {cells[1]:15s} {cells[2]:>7s} {cells[3]:>9s} {cells[4]:>9s} {cells[5]:>9s} "
                  f"{cells[6]:>7s} {cells[7]:>9s} {cells[8]:>7s} {cells[9]:>13s} {cells[10]:>9s} {cells[11]:>7s} "
                  f"{cells[12]:>13s} {cells[13]:>6s} {cells[14]:>5s}  {cells[15]}")
    rows = doc["summary"]
    within = [e for e in rows if e["loggps_error_pct"] is not None and abs(e["loggps_error_pct"]) <= TARGET]
    quiet = [e for e in rows if e.get("loggps_quiet_error_pct") is not None]
    if quiet:
        calm = [e for e in quiet if abs(e["loggps_quiet_error_pct"]) <= TARGET]
        print("noise: " + ", ".join(f"{e['library']} {e['program']} {e['bytes']} {_err(e['loggps_error_pct']).strip()}"
                                    f" (without {_err(e['loggps_quiet_error_pct']).strip()})" for e in quiet))
        print(f"noise: without the node's detours {len(calm)} of {len(quiet)} rows would be within {TARGET:g}% "
              "under LogGPS (the same traces replayed without them)")
    both = [e for e in within if _met(e)]
    strict = [e for e in within if _met(e, strict=True)]
    print(f"{len(within)} of {len(rows)} rows within {TARGET:g}% under LogGPS, {len(both)} of them with LogGPS "
          f"no further off than LogGP beyond half the span of its noise draws ({len(strict)} by no more than "
          f"{STRICT:g} point)")
    drifted = [e for e in rows if e.get("probe_drift_pct") is not None]
    if drifted:
        moved = [e for e in drifted if abs(e["probe_drift_pct"]) > TARGET]
        kept = [e for e in drifted if abs(e["probe_drift_pct"]) <= TARGET]
        print(f"drift: the probe moved by more than {TARGET:g}% between the model's run and the end of the "
              f"programs in {len(moved)} of {len(drifted)} rows with a probe; {sum(1 for e in kept if _met(e))} "
              f"of the other {len(kept)} are within {TARGET:g}%")
    apart = [e for e in rows if e.get("repeats_in_state", e["repeats"]) == 0]
    print(f"cores: the repeats whose loop ran with the ranks' cores in the main state of their model's points "
          f"(the medians are of those); {len(apart)} row(s) had none and are the median of every repeat")
    slowed = [(r["core_distance"]["slowed"], len(r.get("launches_us") or [])) for run in doc.get("runs") or []
              for r in run["rows"] if (r.get("core_distance") or {}).get("slowed") is not None]
    if slowed:
        print(f"slowed: {sum(s for s, _ in slowed)} of {sum(n for _, n in slowed)} launches kept ran with a core the "
              "host slowed (their copy within L1 beyond 1.1 times the model's floor), left out of their row's "
              "median where another launch was not")
    from commchar.validate.core import slowed_only

    every = [r for run in doc.get("runs") or [] for r in run["rows"] if r.get("loggps_error_pct") is not None]
    for name, group in (("all", [r for r in every if slowed_only(r)]),
                        ("none", [r for r in every if not (r.get("core_distance") or {}).get("slowed")])):
        if group:
            errors = sorted(abs(r["loggps_error_pct"]) for r in group)
            print(f"slowed: repeats' rows {name} of whose kept launches ran slowed: {len(group)}, median |LogGPS "
                  f"error| {statistics.median(errors):.1f}%, {sum(e <= TARGET for e in errors)} within {TARGET:g}%")
    again = [r for run in doc.get("runs") or [] for r in run["rows"] if (r.get("core_distance") or {}).get("passes")]
    if again:
        still = sum(slowed_only(r) for r in again)
        print(f"slowed: {len(again)} row(s) whose launches all ran slowed were launched again after their repeat's "
              f"other rows; {len(again) - still} then ran at full speed, {still} never did")
    loads = [e["load_avg_1m"] for e in rows if e.get("load_avg_1m") is not None]
    if loads:
        print(f"1-minute load average while the programs ran: {min(loads):.2f} to {max(loads):.2f} "
              f"on {os.cpu_count()} core(s)")
    return ok


def last_validation(db: str) -> dict | None:
    """The result of the last validation stored in db (None: none there)."""
    from commchar.store import Store
    from commchar.validate.store import validations

    with Store(db, readonly=True) as store:
        found = validations(store)
    return found[-1]["result"] if found else None


def pooled(docs: list[dict]) -> dict:
    """One validation of every repeat of several: their runs renumbered in order, the summary
    (median, spread) over all of them."""
    from commchar.validate.core import summarize

    runs, offset = [], 0
    for doc in docs:
        runs += [run | {"repeat": run["repeat"] + offset} for run in doc["runs"]]
        offset += doc["options"]["repeat"]
    options = docs[0]["options"] | {"repeat": offset}
    return {**docs[0], "options": options, "runs": runs, "summary": summarize(runs)}


def first_pass(doc: dict) -> dict:
    """The validation as it stood before its rows launched again (validate's --slowed-passes):
    each such row's first measured time and the errors against it, the summary again."""
    from commchar.validate.core import errors_into, summarize

    def before(row: dict) -> dict:
        first = (row.get("core_distance") or {}).get("first_measured_us")
        if first is None:
            return row
        out = row | {"measured_us": first}
        errors_into(out)
        return out

    runs = [run | {"rows": [before(row) for row in run["rows"]]} for run in doc["runs"]]
    return {**doc, "runs": runs, "summary": summarize(runs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--sizes", default="256,4K,32K,256K")
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--programs", help="comma-separated (default: all)")
    parser.add_argument("--launches", help="untraced runs of each program, their median measured (validate's default)")
    parser.add_argument("--model-launches", help="runs of the model, each point their median (validate's default)")
    parser.add_argument("--slowed-passes", help="passes launching again the programs whose launches all ran on a "
                        "slowed core (validate's default)")
    parser.add_argument("--precision", help="the model's measurement: CI target (validate's default)")
    parser.add_argument("--max-time", help="the model's measurement: most seconds a point (validate's default)")
    parser.add_argument("--db", help="keep everything in this store (default: a temporary one)")
    parser.add_argument("--from-db", metavar="DB", nargs="+",
                        help="print the last validation stored in DB, run nothing; with several, their repeats "
                             "pooled into one table")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/validation.md)")
    parser.add_argument("--first-pass", action="store_true",
                        help="with --from-db: each row as measured before it was launched again for a slowed "
                             "core (the same validation without --slowed-passes)")
    args = parser.parse_args()
    if args.from_db:
        docs = []
        for db in args.from_db:
            doc = last_validation(db)
            if doc is None:
                print(f"validation: no validation stored in {db}", file=sys.stderr)
                return 2
            docs.append(first_pass(doc) if args.first_pass else doc)
        # summarized again: a stored validation's table as today's summary has it
        return 0 if print_table(pooled(docs), args.markdown) else 1
    with tempfile.TemporaryDirectory(prefix="bench-validation-") as tmp:
        db = args.db or str(Path(tmp) / "validation.db")
        argv = [sys.executable, "-m", "commchar", "validate", "--db", db, "--library", args.library,
                "--repeat", str(args.repeat), "--np", str(args.np), "--sizes", args.sizes,
                "--iterations", str(args.iterations), "--json"]
        if args.programs:
            argv += ["--programs", args.programs]
        for flag, value in (("--precision", args.precision), ("--max-time", args.max_time),
                            ("--launches", args.launches), ("--model-launches", args.model_launches),
                            ("--slowed-passes", args.slowed_passes)):
            if value is not None:
                argv += [flag, value]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"validation: {(done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]}", file=sys.stderr)
        return 2
    return 0 if print_table(json.loads(done.stdout), args.markdown) else 1


if __name__ == "__main__":
    sys.exit(main())
