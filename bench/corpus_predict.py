#!/usr/bin/env python3
"""The corpus's prediction against its measurement: each of Debian's applications
in tests/test_corpus_*.py (LAMMPS's melt, ScaLAPACK's LU driver), on the same small
input, traced at p = 2 ROUNDS times with each library its package links, each
trace replayed under the model without flags; the table gives the median over
the rounds of the measured makespan (the trace's, Init to Finalize) and of the
LogGPS and LogGP predictions, and the error of the medians.

    python bench/corpus_predict.py --model MODEL.json [--rounds 3]

MODEL.json: a model of this machine (`commchar run` then `commchar fit`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_corpus_lammps import _input as lammps_input  # noqa: E402
from test_corpus_scalapack import LU_DAT  # noqa: E402

XDLU = "/usr/lib/x86_64-linux-gnu/scalapack/{library}-tests/xdlu"


def _commchar(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def _round(app: str, library: str, model: str, work: Path) -> tuple[float, float, float]:
    """(measured, LogGPS, LogGP) makespans in us of one traced run."""
    if app == "lammps":
        argv = ["lmp", "-in", lammps_input(work).name, "-log", "none"]
    else:
        (work / "LU.dat").write_text(LU_DAT)
        argv = [XDLU.format(library=library)]
    db = work / "t.db"
    db.unlink(missing_ok=True)
    traced = _commchar("trace", "--db", str(db), "--library", library, "--np", "2", "--", *argv,
                       cwd=work)
    if traced.returncode != 0:
        raise SystemExit(f"{app} ({library}): {traced.stderr.strip()}")
    replayed = _commchar("replay", "--db", str(db), "--trace", "1", "--model", model, "--library",
                         library, "--json", cwd=work)
    if replayed.returncode != 0:
        raise SystemExit(f"{app} ({library}): {replayed.stderr.strip()}")
    doc = json.loads(replayed.stdout)
    return (doc["measured"]["makespan"], doc["predictions"]["loggps"]["makespan"],
            doc["predictions"]["loggp"]["makespan"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    model = str(Path(args.model).resolve())
    print("| program | library | measured ms | LogGPS ms | error | LogGP ms | error |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for app, libraries in (("lammps", ["openmpi"]), ("scalapack-xdlu", ["openmpi", "mpich"])):
        for library in libraries:
            rounds = []
            for _ in range(args.rounds):
                with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
                    rounds.append(_round(app, library, model, Path(tmp)))
            measured, gps, gp = (statistics.median(column) for column in zip(*rounds))
            print(f"| {app} | {library} | {measured / 1e3:.1f} | {gps / 1e3:.1f} | "
                  f"{100 * (gps - measured) / measured:+.1f}% | {gp / 1e3:.1f} | "
                  f"{100 * (gp - measured) / measured:+.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
