#!/usr/bin/env python3
"""Where the adaptive rule stops the LogGP and first-touch probes, checked on stored runs.

Under `--sizes adaptive` the `loggp` probe measures its coarse grid up to 1 MiB
(not 4 MiB), and the first-touch probe `touch` starts at 64 KiB to 4 MiB and
adds 16 MiB, then 64 MiB, only while the last step still moved its cost per
byte (docs/method.md "Which sizes"). This prints, for every run of the stores
given that measured beyond those sizes (a grid or dense run), per library:

- LogGP: G (the gap per byte of the gap series' last regime) and g fitted from
  every `loggp` size and from the sizes up to 1 MiB only, their difference, and
  the seconds the larger points took;
- first touch: the cost per byte (fresh less resident, per byte) at each size
  from 1 MiB, what the rule asks for after 4 MiB and after 16 MiB (with the
  default noise floor and with the largest, MAX_FLOOR), and the seconds of
  the 16 and 64 MiB pairs.

With `--reference DB` (bench/adaptive_accuracy.py's dense reference), the last
line gives how far each run's two values of G lie from the reference's own
(fitted from every size), median and worst over the runs: whether leaving out
the larger sizes costs the model anything beyond the run-to-run drift.

Nothing is measured; `commchar run --np 2` (grid) or bench/adaptive_accuracy.py's
dense reference gives such stores.

    python3 bench/probe_sizes.py DB [DB ...] [--reference DB]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from commchar.errors import InputError  # noqa: E402
from commchar.measure.adaptive import MAX_FLOOR, touch_extension  # noqa: E402
from commchar.measure.operations import OPERATIONS  # noqa: E402
from commchar.models.loggp import LogGPModel  # noqa: E402
from commchar.models.regimes import DEFAULT_NOISE_FLOOR  # noqa: E402
from commchar.store import Store  # noqa: E402

MiB = 1 << 20


def wall_seconds(db: Path) -> dict[tuple[int, str, str, str, int], float]:
    """Each point's wall time (the store's point dicts leave it out), by run, library, op,
    variant and size."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return {(r, lib, op, v or "", n): w or 0.0 for r, lib, op, v, n, w in con.execute(
            "SELECT run_id, library, op, variant, n_bytes, wall_s FROM points WHERE p = 2")}


def loggp_fits(points: list[dict]) -> tuple[dict, dict] | None:
    """LogGP's parameters from every loggp size and from those up to the adaptive rule's
    largest; None when the points have no larger size."""
    top = OPERATIONS["loggp"].adaptive_max_bytes or MiB
    probe = [pt for pt in points if pt["op"] in ("loggp", "rndv")]
    if not any(pt["op"] == "loggp" and pt["n_bytes"] > top for pt in probe):
        return None
    return (LogGPModel().fit(probe).params_,
            LogGPModel().fit([pt for pt in probe if not (pt["op"] == "loggp" and pt["n_bytes"] > top)]).params_)


def loggp_line(points: list[dict], walls: dict, run_id: int, library: str) -> str | None:
    top = OPERATIONS["loggp"].adaptive_max_bytes or MiB
    try:
        fits = loggp_fits(points)
    except InputError as exc:
        return f"  loggp: not fitted ({exc})"
    if fits is None:
        return None
    every, up_to = fits
    seconds = sum(w for (r, lib, op, _, n), w in walls.items()
                  if r == run_id and lib == library and op == "loggp" and n > top)
    change = (up_to["G"] / every["G"] - 1) * 100 if every["G"] else float("nan")
    return (f"  loggp: G {every['G'] * 1e6:.1f} ps/B from every size, {up_to['G'] * 1e6:.1f} up to"
            f" {top // MiB} MiB ({change:+.1f}%); g {every['g']:.3f} / {up_to['g']:.3f} us;"
            f" the sizes above took {seconds:.2f} s")


def touch_line(points: list[dict], walls: dict, run_id: int, library: str) -> str | None:
    pairs: dict[int, dict[str, float]] = {}
    for pt in points:
        if pt["op"] == "touch":
            pairs.setdefault(pt["n_bytes"], {})[pt["variant"]] = pt["t_us"]
    sizes = sorted(n for n, pair in pairs.items() if len(pair) == 2 and n >= MiB)
    if not any(n > 4 * MiB for n in sizes):
        return None
    costs = ", ".join(f"{n // MiB} MiB {(pairs[n]['fresh'] - pairs[n]['resident']) * 1e3 / n:.3f}"
                      for n in sizes)
    asks = []
    for last in (4 * MiB, 16 * MiB):
        if last not in sizes:
            continue
        upto = [pt for pt in points if pt["op"] == "touch" and pt["n_bytes"] <= last]
        for name, floor in (("default", DEFAULT_NOISE_FLOOR), ("largest", MAX_FLOOR)):
            wanted = touch_extension(upto, {library: floor}).get(library)
            asks.append(f"after {last // MiB} MiB, {name} floor: "
                        + (f"{wanted // MiB} MiB" if wanted else "nothing"))
    seconds = {n: sum(w for (r, lib, op, _, m), w in walls.items()
                      if r == run_id and lib == library and op == "touch" and m == n)
               for n in (16 * MiB, 64 * MiB) if n in sizes}
    took = "; ".join(f"the {n // MiB} MiB pair took {s:.2f} s" for n, s in seconds.items())
    return f"  touch: ns a byte at {costs}; asks {', '.join(asks)}; {took}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path, nargs="+")
    parser.add_argument("--reference", type=Path, help="a dense reference: G's distance from it")
    args = parser.parse_args()
    reference: dict[str, float] = {}
    if args.reference:
        try:
            for library, points in probe_points(args.reference).items():
                fits = [loggp_fits(mine) for mine in points.values()]
                reference.update({library: fit[0]["G"] for fit in fits if fit and fit[0]["G"] > 0})
        except InputError as exc:
            print(f"probe_sizes: {exc}", file=sys.stderr)
            return 2
    off: tuple[list[float], list[float]] = ([], [])
    for db in args.db:
        try:
            runs = probe_points(db)
        except InputError as exc:
            print(f"probe_sizes: {exc}", file=sys.stderr)
            return 2
        walls = wall_seconds(db)
        for library, by_run in runs.items():
            for run_id, mine in by_run.items():
                lines = [line for line in (loggp_line(mine, walls, run_id, library),
                                           touch_line(mine, walls, run_id, library)) if line]
                if lines:
                    print(f"{db} run {run_id} {library}")
                    print("\n".join(lines))
                fits = loggp_fits(mine) if library in reference else None
                for kept, fit in zip(off, fits or ()):
                    kept.append(abs(fit["G"] / reference[library] - 1))
    if off[0]:
        print(f"G against the reference's, over {len(off[0])} runs: from every size median"
              f" {100 * statistics.median(off[0]):.1f}%, worst {100 * max(off[0]):.1f}%; up to 1 MiB"
              f" median {100 * statistics.median(off[1]):.1f}%, worst {100 * max(off[1]):.1f}%")
    return 0


def probe_points(db: Path) -> dict[str, dict[int, list[dict]]]:
    """The probes' valid p = 2 points of a store, by library and run."""
    if not db.is_file():
        raise InputError(f"no database {db}")
    out: dict[str, dict[int, list[dict]]] = {}
    with Store(db, readonly=True) as store:
        for pt in store.points():
            if pt["p"] == 2 and pt["valid"] and pt["op"] in ("loggp", "rndv", "touch"):
                out.setdefault(pt["library"], {}).setdefault(pt["run_id"], []).append(pt)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
