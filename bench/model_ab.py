#!/usr/bin/env python3
"""One part of the model on the same measurements: every row of a stored validation
replayed twice, with the model as `commchar validate` fits it and without the part,
against the program's measured time and the kernel's probe of the same operation.
Nothing is measured; the models are fitted again from the validation's own runs.

    --compare O_r              the receiver's own copy (loggp.regimes[].O_r,
                               models/receive_copy.py) against LogGOPSim's receiver
    --compare exchange_excess  what a small exchange costs beyond the model
                               (loggp.exchange_excess) against nothing
    --compare model_runs       each point the median of the model's runs against
                               the model of its first run alone
    --compare copy_footprint   what a copy costs once a rank's buffers outgrow the
                               caches (loggp.copy_footprint) against nothing
    --compare self_footprint   messages to oneself charged their own footprint curves
                               (copy_footprint.self_by_size) against the others'
    --compare held_bytes       the footprint curves 0 up to the footprint every size's
                               probe took within the host's noise at (copy_footprint.held_bytes,
                               models/copy_footprint.py) against each size's curve
                               from 0 at its own one pair
    --compare cold_start       a program's first sends and each pair's first rendezvous
                               (loggp.cold_start) against a program warm from its start
    --compare noise            the node's detours drawn in the library (loggp.noise)
                               against none
    --compare send_post        a non-blocking send's measured post (loggp.send_post,
                               replayed with --posted-sends measured) against a
                               blocking send's o_s + (s-1)O (the default)
    --compare written_send     what a message costs whose sender wrote its buffer
                               since its last send (loggp.written_send) against nothing
    --compare burst            what two messages each way that one wait completed cost
                               beyond the model's two (exchange_excess.burst and burst_eager,
                               simulate/burst.py), shared by the pairs, against a single
                               exchange's excess charged to every rendezvous pair and
                               nothing to an eager one
    --compare misaligned_copy  what a copy costs whose receive buffer lies in the slow class
                               ahead of its send buffer (loggp.misaligned_copy) against nothing
    --compare written_exchange what such a message costs received in an exchange
                               (written_send.exchange_ends) against what one message
                               alone pays
    --compare regime_latency   each eager size regime's own L (its fixed time beyond the
                               PRTT overheads, models/plogp.py) against that time split
                               into its o_s and o_r under the global L (the whole fit
                               again, O_r and the exchange's excess included)
    --compare measured_means   a charged collective at a size the model's runs measured
                               paying their mean (mean.measured, ModelFile.charged_time)
                               against the mean fit at every size
    --compare line_bytes       the misaligned copy's slow class by the cache line, where the
                               probe's 80 bytes ahead paid as 16 ahead did
                               (misaligned_copy.line_bytes, models/misaligned_copy.py)
                               against the class within 31 bytes ahead
    --compare both_places      in a class by the line, each size charged the mean of the
                               probe's 16 and 80 bytes ahead excesses
                               (models/misaligned_copy.py) against 16 ahead's alone
    --compare second_message   the receiver's copy O_r fitted from a second message each
                               way (exchange:isend2 less exchange:isend,
                               models/receive_copy.py) against the single exchange's fit
                               (the whole fit again without those points)

    chrt -f 10 python3 bench/validation.py --library mpich,openmpi --repeat 3 --db v.db
    python3 bench/model_ab.py --from-db v.db [--compare O_r] [--programs ring_sendrecv,halo2d]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


COMPARED = ("O_r", "exchange_excess", "burst", "model_runs", "copy_footprint", "self_footprint", "cold_start", "noise",
            "send_post", "written_send", "written_exchange", "regime_latency", "second_message",
            "measured_means", "line_bytes", "both_places", "held_bytes", "misaligned_copy")


def _models(db: str, run_ids: list[int], library: str, directory: Path, compare: str) -> dict[str, Path]:
    """The validation's model of its runs fitted again, with the part (`with`) and without it
    (`without`)."""
    from commchar.modelfile import save
    from commchar.validate.core import fit_runs

    name = "-".join(map(str, run_ids))
    fitted = directory / f"run{name}.json"
    save(fit_runs(db, run_ids)[0], fitted)
    without = directory / f"run{name}-without-{compare}.json"
    if compare == "model_runs":
        save(fit_runs(db, run_ids[:1])[0], without)
        return {"with": fitted, "without": without}
    if compare == "regime_latency":
        save(_fit_without_regime_latency(db, run_ids), without)
        return {"with": fitted, "without": without}
    if compare == "second_message":
        save(_fit_without_second_message(db, run_ids), without)
        return {"with": fitted, "without": without}
    if compare == "both_places":
        save(_fit_with(db, run_ids, "misaligned_copy_section", _sixteen_ahead_alone,
                       lambda loggp: False, compare), without)
        return {"with": fitted, "without": without}
    if compare == "held_bytes":
        save(_fit_with(db, run_ids, "copy_footprint_section", _each_size_alone,
                       lambda loggp: "held_bytes" in (loggp.get("copy_footprint") or {}), compare), without)
        return {"with": fitted, "without": without}
    doc = json.loads(fitted.read_text())
    loggp = doc["libraries"][library]["loggp"]
    if compare == "measured_means":
        for entry in doc["libraries"][library]["operations"].values():
            (entry.get("mean") or {}).pop("measured", None)
    elif compare == "O_r":
        for key in ("regimes", "regimes_median"):
            for regime in loggp.get(key) or []:
                regime.pop("O_r", None)
    elif compare == "line_bytes":
        from commchar.models.misaligned_copy import SLOW_AHEAD

        copy = loggp.get("misaligned_copy") or {}
        copy.pop("line_bytes", None)
        copy["slow_ahead"] = list(SLOW_AHEAD)
    elif compare == "self_footprint":
        (loggp.get("copy_footprint") or {}).pop("self_by_size", None)
    elif compare == "written_exchange":
        (loggp.get("written_send") or {}).pop("exchange_ends", None)
    elif compare == "burst":
        for key in ("burst", "burst_eager"):
            (loggp.get("exchange_excess") or {}).pop(key, None)
    else:
        loggp.pop(compare, None)
    without.write_text(json.dumps(doc))
    return {"with": fitted, "without": without}


def _fit_with(db: str, run_ids: list[int], name: str, replacement: Any,
              still_there: Callable[[dict[str, Any]], bool], compare: str) -> Any:
    """The model of the runs fitted with `commchar.models.assemble.<name>` replaced; stops
    with one line where a library's loggp section still shows the part (`still_there`): the
    fit no longer takes it from there, and the comparison would measure nothing."""
    from unittest import mock

    from commchar.models import assemble
    from commchar.validate.core import fit_runs

    with mock.patch.object(assemble, name, replacement):
        model = fit_runs(db, run_ids)[0]
    if any(still_there(fitted.loggp) for fitted in model.libraries.values() if isinstance(fitted.loggp, dict)):
        raise SystemExit(f"model_ab: the fit no longer takes its part from assemble.{name}; "
                         f"--compare {compare} cannot take it out")
    return model


def _fit_without_regime_latency(db: str, run_ids: list[int]) -> Any:
    """The model of the runs with every size regime's fixed time split into its overheads
    under the global L: size_regimes as if no size were eager."""
    from commchar.models import plogp

    def split(loggp: dict[str, Any], segments: list[dict[str, Any]]) -> Any:
        return plogp.size_regimes({k: v for k, v in loggp.items() if k != "S"}, segments)

    return _fit_with(db, run_ids, "size_regimes", split,
                     lambda loggp: any("L" in regime for regime in loggp.get("regimes") or []), "regime_latency")


def _sixteen_ahead_alone(points: list[dict], skipped: list[str], library: str) -> Any:
    """misaligned_copy_section with each size's step 16 ahead's excess alone."""
    from unittest import mock

    from commchar.models import misaligned_copy

    with mock.patch.object(misaligned_copy, "_both_places", lambda steps, line: steps):
        return misaligned_copy.misaligned_copy_section(points, skipped, library)


def _each_size_alone(points: list[dict], exchange_points: list[dict], skipped: list[str], library: str) -> Any:
    """copy_footprint_section with each size's curve from 0 at its own one pair, no footprint
    taken as held by the caches."""
    from unittest import mock

    from commchar.models import copy_footprint

    with mock.patch.object(copy_footprint, "held_bytes", lambda rows: None):
        return copy_footprint.copy_footprint_section(points, exchange_points, skipped, library)


def _fit_without_second_message(db: str, run_ids: list[int]) -> Any:
    """The model of the runs with every regime's O_r fitted from the single exchange, as if
    no second message each way had been measured."""
    return _fit_with(db, run_ids, "second_message_times", lambda points, statistic: {},
                     lambda loggp: bool((loggp.get("receive_copy") or {}).get("second")), "second_message")


def _predicted(db: str, trace_id: int, model: Path, library: str, iterations: int,
               posted_sends: str = "blocking") -> float:
    from commchar.simulate.replay import ReplayRequest, replay
    from commchar.store import Store
    from commchar.store.traces import extract_trace
    from commchar.validate.core import loop_time

    with Store(db, readonly=True) as store, tempfile.TemporaryDirectory(prefix="bench-rc-") as tmp:
        directory = extract_trace(store, trace_id, tmp)
        doc = replay(ReplayRequest(trace_dir=directory, model_path=str(model), library=library,
                                   posted_sends=posted_sends))
    return (loop_time(doc["predictions"]["loggps"]["ranks"], "predicted") or 0.0) / iterations


def _in_state(row: dict[str, Any], runs: list[dict[str, Any]]) -> bool:
    """Whether the validation's median counts the row: its loop ran in its model's state of
    the cores, or no repeat of its case did (commchar.validate.core.summarize)."""
    def same(r: dict[str, Any]) -> bool:
        return (r.get("core_distance") or {}).get("match", "unknown") != "differs"

    case = [r for run in runs for r in run["rows"]
            if (r["library"], r["program"], r["bytes"]) == (row["library"], row["program"], row["bytes"])]
    return same(row) or not any(same(r) for r in case)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-db", metavar="DB", required=True, help="a store holding a validation")
    parser.add_argument("--compare", choices=COMPARED, default="O_r", help="the part of the model (default O_r)")
    parser.add_argument("--programs", help="comma-separated (default: every program of the validation)")
    args = parser.parse_args()
    from commchar.store import Store
    from commchar.validate.store import validations

    with Store(args.from_db, readonly=True) as store:
        found = validations(store)
    if not found:
        print(f"model_ab: no validation stored in {args.from_db}", file=sys.stderr)
        return 2
    result = found[-1]["result"]
    wanted = set(args.programs.split(",")) if args.programs else None
    errors: dict[tuple[str, str, int], dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-rc-models-") as tmp:
        for run in result["runs"]:
            models = _models(args.from_db, run.get("model_run_ids") or [run["model_run_id"]], run["library"],
                             Path(tmp), args.compare)
            for row in run["rows"]:
                if (wanted and row["program"] not in wanted) or not _in_state(row, result["runs"]):
                    continue
                cell = errors.setdefault((run["library"], row["program"], row["bytes"]), {})
                for name, model in models.items():
                    # the simulator charges the post only when asked to
                    posted = "measured" if args.compare == "send_post" and name == "with" else "blocking"
                    t = _predicted(args.from_db, row["trace_id"], model, run["library"], row["iterations"], posted)
                    cell.setdefault(name, []).append(100.0 * (t - row["measured_us"]) / row["measured_us"])
                    if row.get("probe_us"):
                        cell.setdefault(f"{name}/probe", []).append(100.0 * (t - row["probe_us"]) / row["probe_us"])
    print(f"LogGPS error (%), median over the {result['options']['repeat']} run(s) of one validation that "
          f"its table counts (smallest..largest): the model as fitted (with) and without {args.compare}, "
          "against the program's time and against the kernel's probe of the same operation")
    print(f"{'library':8s} {'program':15s} {'bytes':>7s} {'with':>22s} {'without':>22s} {'with/probe':>10s} "
          f"{'without/probe':>13s}")

    def cell_text(values: list[float] | None, wide: bool) -> str:
        if not values:
            return "-"
        text = f"{statistics.median(values):+.1f}"
        return f"{text} ({min(values):+.1f}..{max(values):+.1f})" if wide else text

    moved: list[tuple[float, float]] = []
    for (library, program, n), cell in errors.items():
        print(f"{library:8s} {program:15s} {n:7d} {cell_text(cell.get('with'), True):>22s} "
              f"{cell_text(cell.get('without'), True):>22s} {cell_text(cell.get('with/probe'), False):>10s} "
              f"{cell_text(cell.get('without/probe'), False):>13s}")
        if cell.get("with") != cell.get("without"):
            moved.append((abs(statistics.median(cell["with"])), abs(statistics.median(cell["without"]))))
    within = [sum(1 for pair in moved if pair[i] <= 10.0) for i in (0, 1)]
    print(f"{len(moved)} of {len(errors)} rows moved; of those, within 10%: {within[0]} with {args.compare}, "
          f"{within[1]} without")
    cells = list(errors.values())
    for name in ("with", "without"):
        rows = sum(1 for c in cells if c.get(name) and abs(statistics.median(c[name])) <= 10.0)
        repeats = sum(1 for c in cells for e in c.get(name) or [] if abs(e) <= 10.0)
        print(f"{name} {args.compare}: {rows} of {len(cells)} rows within 10% (median of their repeats), "
              f"{repeats} of {sum(len(c.get(name) or []) for c in cells)} repeats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
