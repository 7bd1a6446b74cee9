#!/usr/bin/env python3
"""How well a fast (adaptive) run's model predicts a dense reference of the same machine.

The reference is a dense characterization at p = 2 (`commchar run --sizes dense`:
every power of two and the midpoints between them, 1% at each) of each
library, measured once per machine into a database you choose and reused
after. A fast run is `commchar run --np 2 --sizes adaptive` (`--sizes` names
another rule, e.g. grid; or give a database of one with --fast). Both are fitted as `commchar fit` fits
them; the fast run's model then predicts every reference point of every
operation it models (p = 2), and this prints per operation the median and
worst relative error, the sizes each run measured, and over all operations the
median, the worst and how many reference sizes are missed by more than 10%.
An error is relative to the reference time, or to FLOOR_US where the
reference is shorter: a zero-byte collective that the library returns from
at once takes a few nanoseconds, and two runs' 4 ns and 7 ns differ by 75%
where neither is a communication time (the raw figures are printed beside,
with how many sizes the floor changes).
Each run's line is followed by its drift: how far its own times lie from the
reference's at the sizes both measured (median), a floor under its error
that comes from the machine, not the sizes.
The probes whose model is a set of parameters rather than a curve (loggp,
rndv, touch, coldstart) are compared parameter by parameter (LogGP's L, o_s,
o_r, g, G and S; the first-touch cost per byte; the cold start's extra per
message).

A host that moves the ranks' cores (docs/method.md, "Where the ranks' cores
are") makes a store of two machines: the fast run is fitted as `commchar fit`
keeps it (its main state, on full-speed cores where enough points were), and
is compared with the reference's points measured in that state on full-speed
cores only (docs/method.md, "A slowed core"); a line per run says how many
those are. Where that leaves no reference point of any operation the fast run
models (a host that slowed the cores through a whole small reference), every
reference point is scored, and a line says the score mixes the cores' states.

    python bench/adaptive_accuracy.py --reference ~/.cache/commchar/reference.db
        [--library openmpi,mpich] [--fast DB] [--ops OPS] [--repeat 1] [--by-operation]
        [--sizes adaptive|grid]
    python bench/adaptive_accuracy.py --paired K [--library ...] [--ops OPS] [--repeat 1]

With --paired K there is no stored reference: a dense run and a fast run
measure K operations at a time, in turn (dense first in every other group),
each group's two runs seconds apart, and the fast runs' model is scored
against those dense runs. A host that drifts over minutes then moves the
score far less (the drift line says how much is left); the rule runs on K
operations at a time, so a coarse series borrows the scatter of its group's
series rather than of every series.

A library missing from the reference is measured into it first (a minute
or two per library on a 2-core machine). `--ops` limits both runs to some
operations (a reference measured so holds only those). Bars: median <= 3%,
worst <= 10%.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from commchar.core_distance import Cores, in_main_state_of, point_pairs, point_slowed, rtt_pair, split
from commchar.errors import InputError
from commchar.measure.operations import parse_ops
from commchar.models import fit_points
from commchar.models.assemble import fit_models
from commchar.models.core_distance_policy import keep_one_state
from commchar.models.inputs import read_store
from commchar.store import Store

MEDIAN_BAR = 0.03
WORST_BAR = 0.10
# below this a reference time is no communication (a library's early return from a zero-byte
# call): about three ticks of a 16 ns clock and one read of it. An error is relative to
# max(reference, FLOOR_US).
FLOOR_US = 0.05
# model-file parameters compared for the probes that are not size curves: (section path, name)
PARAMETERS = (("loggp", "L"), ("loggp", "o_s"), ("loggp", "o_r"), ("loggp", "g"), ("loggp", "G"),
              ("loggp", "S"), ("loggp.first_touch", "per_byte"), ("loggp.cold_start", "messages"),
              ("loggp.cold_start", "o_s"))


def commchar(*args: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "commchar", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=3600)
    return time.monotonic() - started


def libraries_in(db: Path) -> set[str]:
    if not db.exists():
        return set()
    with Store(db, readonly=True) as store:
        return {lib for run in store.runs() for lib in (run["options"] or {}).get("libraries") or []
                if (run["options"] or {}).get("sizes") == "dense" and run["status"] == "complete"}


def dense_runs(db: Path, library: str) -> list[int]:
    with Store(db, readonly=True) as store:
        return [run["id"] for run in store.runs() if (run["options"] or {}).get("sizes") == "dense"
                and library in ((run["options"] or {}).get("libraries") or []) and run["status"] == "complete"][-1:]


def points_of(db: Path, library: str, runs: list[int]) -> list[dict]:
    points, _, _ = read_store(db, runs)
    return [pt for pt in points if pt["library"] == library and pt["p"] == 2 and pt["valid"]
            and not pt.get("oversubscribed")]


def curve_misses(fast: list[dict], reference: list[dict], library: str
                 ) -> dict[str, list[tuple[int, float, float]]]:
    """Per operation key (size, |predicted - reference|, reference time) at every reference
    size the fast model models."""
    models = fit_models(fast).get(library, {})
    misses: dict[str, list[tuple[int, float, float]]] = {}
    for pt in reference:
        key = f"{pt['op']}:{pt['variant']}" if pt["variant"] else pt["op"]
        model = models.get(key)
        if model is None:
            continue
        predicted = float(model.predict(np.array([float(pt["n_bytes"])]), np.array([2.0]))[0])
        misses.setdefault(key, []).append((int(pt["n_bytes"]), abs(predicted - pt["t_us"]), pt["t_us"]))
    return misses


def relative(misses: dict[str, list[tuple[int, float, float]]], floor: float = FLOOR_US
             ) -> dict[str, list[tuple[int, float]]]:
    """Each miss relative to the reference time, or to `floor` where the reference is shorter."""
    return {key: [(n, miss / max(t, floor)) for n, miss, t in rows] for key, rows in misses.items()}


def drift(fast: list[dict], reference: list[dict]) -> list[float]:
    """Relative differences of a fast run's times from the reference's at the sizes both measured:
    the machine's move between the two runs, which no choice of sizes removes."""
    ref = {(pt["op"], pt["variant"], pt["n_bytes"]): pt["t_us"] for pt in reference}
    return [abs(pt["t_us"] - ref[k]) / max(ref[k], FLOOR_US) for pt in fast
            if (k := (pt["op"], pt["variant"], pt["n_bytes"])) in ref]


def section(model: dict, library: str, path: str) -> dict[str, Any]:
    lib = model["libraries"].get(library, {})
    first, _, rest = path.partition(".")
    node = lib.get(first) or lib.get(first + "_partial") or {}
    return (node.get(rest) or {}) if rest else node


def parameter_errors(fast: list[dict], reference: list[dict], library: str) -> list[tuple[str, float, float]]:
    """(parameter, fast, reference) for the probes' parameters both models have."""
    probes = [[pt for pt in pts if pt["op"] in ("loggp", "rndv", "touch", "coldstart")] for pts in (fast, reference)]
    if not all(probes):
        return []
    try:
        models = [fit_points(pts, held_out_every=None) for pts in probes]
    except InputError as exc:
        print(f"  probes not compared: {exc}")
        return []
    out = []
    for path, name in PARAMETERS:
        values = [section(m, library, path).get(name) for m in models]
        if all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
            out.append((f"{path}.{name}", float(values[0]), float(values[1])))  # type: ignore[arg-type]
    return out


def sizes_per_op(points: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pt in points:
        key = f"{pt['op']}:{pt['variant']}" if pt["variant"] else pt["op"]
        counts[key] = counts.get(key, 0) + 1
    return counts


def in_fast_state(fast: list[dict], reference: list[dict]) -> tuple[list[dict], list[dict], str]:
    """The fast run's points as `commchar fit` keeps them (its main state of the ranks' cores,
    on full-speed cores where enough were), the reference's points measured in that state on
    full-speed cores (against the floor of the fast run's copies; those without round trips or
    copies count as in it), and a line saying which: a model of one state says nothing of
    another's times (docs/method.md, "Where the ranks' cores are", "A slowed core"), and a
    reference measured over minutes holds several."""
    kept, _ = keep_one_state(fast)
    cores = Cores.of(fast)
    full = [pt for pt in reference if not point_slowed(pt, cores.floor_ns)]
    slowed = (f"; {len(reference) - len(full)} of its points measured on a slowed core left out"
              if len(full) < len(reference) else "")
    fast_pairs = point_pairs(kept)
    main = split(fast_pairs)
    if main is None:
        return kept, full, "no round trips: every reference point compared" + slowed
    with_pairs = [(pt, rtt_pair(pt.get("extra"))) for pt in full]
    inside = iter(in_main_state_of(fast_pairs, [pair for _, pair in with_pairs if pair is not None]))
    same = [pt for pt, pair in with_pairs if pair is None or next(inside)]
    lo, hi = min(main.members[main.main()]), max(main.members[main.main()])
    return kept, same, (f"the fast run's main state ({lo:.0f}-{hi:.0f} ns round trips, {len(kept)} of"
                        f" {len(fast)} points) holds {len(same)} of the reference's {len(reference)}"
                        + slowed)


def report(library: str, fast: list[dict], reference: list[dict], seconds: float | None,
           by_operation: bool) -> bool:
    measured, whole = len(fast), reference
    fast, reference, state = in_fast_state(fast, reference)
    print(f"  cores: {state}")
    misses = curve_misses(fast, reference, library)
    if not any(misses.values()) and len(reference) < len(whole):
        # the host held the cores slowed or apart through every operation's reference points:
        # a score of them all, said to mix states, rather than none
        reference = whole
        misses = curve_misses(fast, reference, library)
        print("  cores: no operation left in the fast run's state on full-speed cores:"
              " scored against every reference point, whatever its cores' state")
    errors = relative(misses)
    raw = [e for pairs in relative(misses, 0.0).values() for _, e in pairs]
    # the reference's own model at its own sizes: where it misses too, the reference point is
    # no better known than the fast model (a descheduled size, a bimodal one)
    own = {key: dict(pairs) for key, pairs in relative(curve_misses(reference, reference, library)).items()}
    fast_n, ref_n = sizes_per_op(fast), sizes_per_op(reference)
    every = [e for pairs in errors.values() for _, e in pairs]
    if by_operation:
        print(f"  {'operation':22} {'fast':>5} {'ref':>5} {'median':>7} {'worst':>7}  at"
              f"{'':10} reference's own fit there")
        for key, pairs in sorted(errors.items()):
            n, worst = max(pairs, key=lambda ne: ne[1])
            median = statistics.median(e for _, e in pairs)
            flag = "  <- over 10%" if worst > WORST_BAR else ""
            print(f"  {key:22} {fast_n.get(key, 0):5d} {ref_n.get(key, 0):5d} {100 * median:6.1f}% "
                  f"{100 * worst:6.1f}%  {n:>9} B {100 * own.get(key, {}).get(n, math.nan):6.1f}%{flag}")
    for name, mine, theirs in parameter_errors(fast, reference, library):
        rel = abs(mine - theirs) / abs(theirs) if theirs else float("inf") if mine else 0.0
        print(f"  {name:30} fast {mine:.4g}  reference {theirs:.4g}  ({100 * rel:.1f}%)")
    if not every:
        print(f"{library:8} no operation of the reference is modelled by the fast run")
        return False
    median, worst = statistics.median(every), max(every)
    over = sum(e > WORST_BAR for e in every)
    both = sum(e > WORST_BAR and own.get(key, {}).get(n, 0.0) > WORST_BAR
               for key, pairs in errors.items() for n, e in pairs)
    ok = median <= MEDIAN_BAR and worst <= WORST_BAR
    timing = f" in {seconds:.1f} s" if seconds is not None else ""
    print(f"{library:8} fast run {measured} points{timing}, reference {len(reference)}: {len(errors)}"
          f" operations, {len(every)} reference sizes: median error {100 * median:.2f}%, worst"
          f" {100 * worst:.1f}%, {over} beyond 10% ({both} of them missed by the reference's own"
          f" model too) (bars {100 * MEDIAN_BAR:g}% / {100 * WORST_BAR:g}%:"
          f" {'met' if ok else 'not met'}); relative to the reference alone: median"
          f" {100 * statistics.median(raw):.2f}%, worst {100 * max(raw):.1f}%,"
          f" {sum(e > WORST_BAR for e in raw)} beyond 10%")
    moved = drift(fast, reference)
    if moved:
        print(f"  drift: at the {len(moved)} sizes both measured, the fast run's own times lie"
              f" {100 * statistics.median(moved):.2f}% from the reference's (median),"
              f" {sum(e > WORST_BAR for e in moved)} beyond 10%")
    return ok


def paired(library: str, ops: str | None, group: int, sizes: str, by_operation: bool) -> bool:
    """The reference and the fast run measured `group` operations at a time, in turn (which
    goes first alternating from group to group), so that the two runs of an operation lie
    seconds apart rather than minutes: what is left of the error is the rule's and the
    noise's, less the host's drift. Each group's fast run is the rule on those operations
    alone (a series too short for a scatter of its own takes the pooled misses of the
    group's series, not of every series)."""
    names = list(dict.fromkeys(o.op for o in parse_ops(ops)))
    groups = [names[i:i + group] for i in range(0, len(names), group)]
    spent = {"dense": 0.0, sizes: 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {"dense": Path(tmp) / "reference.db", sizes: Path(tmp) / "fast.db"}
        for k, chosen in enumerate(groups):
            for rule in (("dense", sizes) if k % 2 == 0 else (sizes, "dense")):
                spent[rule] += commchar("run", "--db", str(dbs[rule]), "--library", library, "--np", "2",
                                        "--sizes", rule, "--ops", ",".join(chosen))
        reference, fast = (points_of(dbs[rule], library, []) for rule in ("dense", sizes))
    print(f"{library:8} paired: {len(groups)} groups of at most {group} operation(s), reference"
          f" {len(reference)} points in {spent['dense']:.1f} s, fast {len(fast)} points in"
          f" {spent[sizes]:.1f} s (a launch and start per group)")
    return report(library, fast, reference, None, by_operation)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", type=Path, help="the dense reference database")
    parser.add_argument("--library", default="openmpi,mpich")
    parser.add_argument("--fast", type=Path, help="a fast run's database instead of a new run")
    parser.add_argument("--ops", help="measure these operations only (default: every default one)")
    parser.add_argument("--repeat", type=int, default=1, help="fast runs per library, each compared")
    parser.add_argument("--by-operation", action="store_true", help="print every operation's errors")
    parser.add_argument("--sizes", default="adaptive", help="the fast run's size rule (adaptive)")
    parser.add_argument("--paired", type=int, metavar="K", default=0,
                        help="measure a reference and a fast run K operations at a time, in turn,"
                             " (no --reference then)")
    args = parser.parse_args()
    if args.paired < 0:
        parser.error("--paired: K must be 1 or more (0: off)")
    if (args.reference is None) == (args.paired == 0):
        parser.error("give --reference DB, or --paired K")
    if args.paired and args.fast:
        parser.error("--fast: a paired comparison measures its own fast runs (no --fast with --paired)")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    all_ok = True
    for library in args.library.split(","):
        if args.paired:
            for _ in range(max(args.repeat, 1)):
                all_ok &= paired(library, args.ops, args.paired, args.sizes, args.by_operation)
            continue
        args.reference.parent.mkdir(parents=True, exist_ok=True)
        if library not in libraries_in(args.reference):
            seconds = commchar("run", "--db", str(args.reference), "--library", library, "--np", "2",
                               "--sizes", "dense", *(["--ops", args.ops] if args.ops else []))
            print(f"{library:8} reference measured into {args.reference} in {seconds:.1f} s")
        reference = points_of(args.reference, library, dense_runs(args.reference, library))
        for _ in range(1 if args.fast else max(args.repeat, 1)):
            with tempfile.TemporaryDirectory() as tmp:
                if args.fast:
                    db, took = args.fast, None
                else:
                    db = Path(tmp) / "fast.db"
                    took = commchar("run", "--db", str(db), "--library", library, "--np", "2",
                                    "--sizes", args.sizes, *(["--ops", args.ops] if args.ops else []))
                fast = points_of(db, library, [])
                all_ok &= report(library, fast, reference, took, args.by_operation)
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
