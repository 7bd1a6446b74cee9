#!/usr/bin/env python3
"""Where the adaptive rule stops the first-touch probe, checked on stored runs.

Under `--sizes adaptive` the first-touch probe `touch` measures 64 KiB to 4 MiB
and adds 16 MiB, then 64 MiB, only while the last step still moved its cost
per byte (fresh less resident, per byte) by more than 10% and 2 noise levels
(docs/method.md "Which sizes"); a receive into fresh memory past the largest
size measured is charged at that size's cost per byte. This prints, for every
run of the stores given whose probe measured beyond 4 MiB (a grid or dense
run, or an adaptive run whose rule asked), per library: the cost per byte at
each size from 1 MiB, what the rule asks for after 4 MiB and after 16 MiB
(with the default noise floor and with the largest, MAX_FLOOR), and the
seconds the 16 and 64 MiB pairs took; then, over the runs, how often 16 MiB
was asked for and how far its cost per byte lay from 4 MiB's.

Nothing is measured; `commchar run --np 2` (grid) or bench/adaptive_accuracy.py's
dense reference gives such stores.

    python3 bench/touch_steps.py DB [DB ...]
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
from commchar.models.regimes import DEFAULT_NOISE_FLOOR  # noqa: E402
from commchar.store import Store  # noqa: E402

MiB = 1 << 20
FLOORS = (("default", DEFAULT_NOISE_FLOOR), ("largest", MAX_FLOOR))


def wall_seconds(db: Path) -> dict[tuple[int, str, str, str, int], float]:
    """Each point's wall time (the store's point dicts leave it out), by run, library, op,
    variant and size."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return {(r, lib, op, v or "", n): w or 0.0 for r, lib, op, v, n, w in con.execute(
            "SELECT run_id, library, op, variant, n_bytes, wall_s FROM points WHERE p = 2")}


def touch_points(db: Path) -> dict[str, dict[int, list[dict]]]:
    """The first-touch probe's valid p = 2 points of a store, by library and run."""
    if not db.is_file():
        raise InputError(f"no database {db}")
    out: dict[str, dict[int, list[dict]]] = {}
    with Store(db, readonly=True) as store:
        for pt in store.points():
            if pt["p"] == 2 and pt["valid"] and pt["op"] == "touch":
                out.setdefault(pt["library"], {}).setdefault(pt["run_id"], []).append(pt)
    return out


def touch_costs(points: list[dict]) -> dict[int, float]:
    """The first touch's cost per byte (ns) at each size from 1 MiB with both variants."""
    pairs: dict[int, dict[str, float]] = {}
    for pt in points:
        pairs.setdefault(pt["n_bytes"], {})[pt["variant"]] = pt["t_us"]
    return {n: (pair["fresh"] - pair["resident"]) * 1e3 / n for n, pair in sorted(pairs.items())
            if len(pair) == 2 and n >= MiB}


def touch_asks(points: list[dict], library: str, last: int) -> dict[str, int | None]:
    """What the extension asks for with the probe measured up to `last`, per floor."""
    upto = [pt for pt in points if pt["n_bytes"] <= last]
    return {name: touch_extension(upto, {library: floor}).get(library) for name, floor in FLOORS}


def touch_line(points: list[dict], walls: dict, run_id: int, library: str) -> str | None:
    per_byte = touch_costs(points)
    sizes = sorted(per_byte)
    if not any(n > 4 * MiB for n in sizes):
        return None
    costs = ", ".join(f"{n // MiB} MiB {per_byte[n]:.3f}" for n in sizes)
    asks = [f"after {last // MiB} MiB, {name} floor: " + (f"{wanted // MiB} MiB" if wanted else "nothing")
            for last in (4 * MiB, 16 * MiB) if last in sizes
            for name, wanted in touch_asks(points, library, last).items()]
    seconds = {n: sum(w for (r, lib, op, _, m), w in walls.items()
                      if r == run_id and lib == library and op == "touch" and m == n)
               for n in (16 * MiB, 64 * MiB) if n in sizes}
    took = "; ".join(f"the {n // MiB} MiB pair took {s:.2f} s" for n, s in seconds.items())
    return f"  touch: ns a byte at {costs}; asks {', '.join(asks)}; {took}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path, nargs="+")
    args = parser.parse_args()
    steps: list[float] = []  # per run, the cost per byte at 16 MiB relative to 4 MiB's
    asked = {name: 0 for name, _ in FLOORS}
    for db in args.db:
        try:
            runs = touch_points(db)
        except InputError as exc:
            print(f"touch_steps: {exc}", file=sys.stderr)
            return 2
        walls = wall_seconds(db)
        for library, by_run in runs.items():
            for run_id, mine in by_run.items():
                line = touch_line(mine, walls, run_id, library)
                if line is None:
                    continue
                print(f"{db} run {run_id} {library}\n{line}")
                per_byte = touch_costs(mine)
                if 4 * MiB in per_byte and 16 * MiB in per_byte:
                    steps.append(per_byte[16 * MiB] / per_byte[4 * MiB] - 1)
                    for name, wanted in touch_asks(mine, library, 4 * MiB).items():
                        asked[name] += wanted is not None
    if steps:
        print(f"first touch over {len(steps)} runs: after 4 MiB the rule asks for 16 MiB in "
              + " and ".join(f"{asked[name]} ({name} floor)" for name, _ in FLOORS)
              + f"; the cost per byte at 16 MiB against 4 MiB: median {100 * statistics.median(steps):+.1f}%,"
              f" from {100 * min(steps):+.1f}% to {100 * max(steps):+.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
