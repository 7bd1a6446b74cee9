#!/usr/bin/env python3
"""What a model says between the sizes either side of the rendezvous threshold S: the gap
closed at S, and the nearer segment's line held within the gap's ends.

Per library, the rndv probe first finds S (`commchar run --ops rndv --np 2`, refined to the
byte). Then `--repeat` runs of every operation at p = 2 at sizes around it: the dense grid
(powers of two and the midpoints) from a sixteenth of the grid size below S to eight times
the one above, fitted, and sizes inside the gap between those two (S - 1, S, S + 1 and four
more evenly in log up to the upper one), held out. Each run's points less the held-out
ones are fitted twice as `commchar fit` fits them: with the rndv probe's points (S known:
the gap that holds it is closed at S for the series whose messages are n bytes,
segment_gaps.close_at) and without them (S unknown: a size in the gap takes the segment
with the nearer bound). Both models predict the held-out sizes of the same run, so no
drift between runs enters, and this prints per run and library the held-out sizes'
median error, how many are missed by more than 10% and by more than 25%, and the worst,
for both fits.

    python bench/threshold_gap.py [--library mpich,openmpi] [--repeat 3] [--db DIR]
    python bench/threshold_gap.py --from-db DIR [--library mpich,openmpi]

With --from-db, the runs a previous `--db DIR` stored are scored again as this
checkout fits them, nothing measured: a change to the fit compared on the same points.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_accuracy import commchar, points_of, relative, curve_misses  # noqa: E402

from commchar.errors import InputError  # noqa: E402
from commchar.measure.plan import DENSE, rule_sizes  # noqa: E402
from commchar.models.loggp import LogGPModel  # noqa: E402
from commchar.store import Store  # noqa: E402

HELD_IN_LOG = 4  # held-out sizes evenly in log between S + 1 and the grid size above S


def threshold(db: Path, library: str) -> int | None:
    """The first size the rndv probe saw wait for the receiver, where bracketed."""
    rndv = [pt for pt in points_of(db, library, []) if pt["op"] == "rndv"]
    bracket = LogGPModel().fit(rndv).threshold() if rndv else None
    return None if bracket is None else bracket[1]


def sizes_around(S: int) -> tuple[list[int], list[int], int, int]:
    """(sizes fitted, sizes held out, the grid size below S, the one above)."""
    grid = rule_sizes(1 << 31, DENSE)
    below = max(n for n in grid if n < S)
    above = min(n for n in grid if n >= S and n > below)
    fitted = [n for n in grid if max(below // 16, 1) <= n <= above * 8 and not below < n < above]
    inside = {S - 1, S, S + 1} | {round((S + 1) * (above / (S + 1)) ** (k / (HELD_IN_LOG + 1)))
                                  for k in range(1, HELD_IN_LOG + 1)}
    return fitted, sorted(n for n in inside if below < n < above), below, above


def score(points: list[dict], library: str, below: int, above: int, with_probe: bool
          ) -> list[tuple[float, str, int]]:
    """(error, operation, size) at every held-out size of one run's points; the fit takes the
    rndv probe's points (all of its sizes) only `with_probe`."""
    def held(pt: dict) -> bool:
        return below < pt["n_bytes"] < above and pt["op"] != "rndv"

    fitted = [pt for pt in points if not held(pt) and (with_probe or pt["op"] != "rndv")]
    errors = relative(curve_misses(fitted, [pt for pt in points if held(pt)], library))
    return [(e, key, n) for key, rows in errors.items() for n, e in rows]


def line(errors: list[tuple[float, str, int]]) -> str:
    worst = max(errors)
    values = [e for e, _, _ in errors]
    return (f"median {100 * statistics.median(values):5.1f}%, beyond 10%: {sum(e > 0.10 for e in values):3d},"
            f" beyond 25%: {sum(e > 0.25 for e in values):3d}, worst {100 * worst[0]:3.0f}% ({worst[1]} {worst[2]} B)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="mpich,openmpi")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", type=Path, help="folder for the databases (default: a temporary one)")
    parser.add_argument("--from-db", type=Path, metavar="DIR",
                        help="score the runs stored in DIR by an earlier --db DIR again, measuring nothing")
    args = parser.parse_args()
    if args.repeat < 1:
        print("threshold_gap: --repeat must be at least 1", file=sys.stderr)
        return 2
    if args.from_db is not None and not args.from_db.is_dir():
        print(f"threshold_gap: --from-db {args.from_db}: no such folder", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.from_db or args.db or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for library in args.library.split(","):
            probe = folder / f"rndv_{library}.db"
            db = folder / f"gap_{library}.db"
            if args.from_db is None:
                commchar("run", "--db", str(probe), "--library", library, "--np", "2", "--ops", "rndv")
            elif not (probe.is_file() and db.is_file()):
                print(f"{library:8} {folder} holds no runs of it")
                continue
            S = threshold(probe, library)
            if S is None:
                print(f"{library:8} the rndv probe saw no rendezvous threshold: nothing to hold out")
                continue
            fitted, held, below, above = sizes_around(S)
            sizes = ",".join(str(n) for n in sorted(fitted + held))
            print(f"{library:8} S = {S} B; fitted {fitted[0]} to {fitted[-1]} B, held out {len(held)} sizes"
                  f" between {below} and {above} B")
            if args.from_db is None:
                for _ in range(args.repeat):
                    commchar("run", "--db", str(db), "--library", library, "--np", "2", "--sizes", sizes,
                             "--no-refine")
            with Store(db, readonly=True) as store:
                runs = sorted(r["id"] for r in store.runs())
            # a stored folder is scored whole; a measured one, the runs just measured
            scored = runs if args.from_db is not None else runs[-args.repeat:]
            for run in scored:
                points = points_of(db, library, [run])
                closed, nearer = (score(points, library, below, above, probe) for probe in (True, False))
                print(f"  run {run}: {len(closed)} held-out points; gap closed at S: {line(closed)}")
                print(f"  {'':{len(str(run)) + 6}}{'':{len(str(len(closed))) + 19}}nearer bound:   {line(nearer)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:
        print(f"threshold_gap: `commchar {' '.join(exc.cmd[3:])}` failed with exit code {exc.returncode}",
              file=sys.stderr)
        sys.exit(1)
    except InputError as exc:  # a store that is no commchar database, or not a readable one
        print(f"threshold_gap: {exc}", file=sys.stderr)
        sys.exit(1)
