#!/usr/bin/env python3
"""The corpus's prediction against its measurement: each of Debian's applications
in tests/test_corpus_*.py (HPCC, LAMMPS's melt, ScaLAPACK's LU driver), on the same
small input, traced at p = 2 ROUNDS times with each library its package links (the
programs taken in turn within a round), each trace replayed under the model without
flags; the table gives the median over the rounds of the measured makespan (the
trace's, Init to Finalize: bench/tracer_overhead.py gives what the tracer adds to it)
and of the LogGPS and LogGP predictions, the error of the medians and the range of
the rounds' own errors.

    python bench/corpus_predict.py [--model MODEL.json] [--rounds 3] [--apps hpcc,lammps,xdlu]

Without --model, a model of this machine is measured and fitted first, in the same
minutes (`commchar run --np 2` with every library the corpus needs, then `commchar fit`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_corpus_hpcc import INPUT as HPCC_INPUT  # noqa: E402
from test_corpus_lammps import _input as lammps_input  # noqa: E402
from test_corpus_scalapack import LU_DAT  # noqa: E402

# each program and the libraries its Debian package links
APPS = {"hpcc": ["openmpi"], "lammps": ["openmpi"], "xdlu": ["openmpi", "mpich"]}

XDLU = "/usr/lib/x86_64-linux-gnu/scalapack/{library}-tests/xdlu"


def _commchar(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commchar", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def _round(app: str, library: str, model: str, work: Path) -> tuple[float, float, float]:
    """(measured, LogGPS, LogGP) makespans in us of one traced run."""
    if app == "hpcc":
        shutil.copy(HPCC_INPUT, work / "hpccinf.txt")
        argv = ["hpcc"]
    elif app == "lammps":
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


def _fresh_model(work: Path) -> str:
    libraries = sorted({lib for libs in APPS.values() for lib in libs})
    db, model = work / "model.db", work / "model.json"
    for argv in (["run", "--db", str(db), "--np", "2", "--library", ",".join(libraries)],
                 ["fit", "--db", str(db), "-o", str(model)]):
        done = _commchar(*argv, cwd=work)
        if done.returncode != 0:
            raise SystemExit(f"commchar {argv[0]}: {done.stderr.strip()}")
    return str(model)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model of this machine (default: measure and fit one first)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--apps", default=",".join(APPS), help="comma-separated, of " + ", ".join(APPS))
    args = parser.parse_args()
    apps = [a.strip() for a in args.apps.split(",") if a.strip()]
    unknown = [a for a in apps if a not in APPS]
    if unknown or not apps:
        raise SystemExit(f"--apps: unknown {', '.join(unknown) or 'empty list'} (use {', '.join(APPS)})")
    with tempfile.TemporaryDirectory(prefix="corpus-model-") as model_dir:
        model = str(Path(args.model).resolve()) if args.model else _fresh_model(Path(model_dir))
        cases = [(app, library) for app in apps for library in APPS[app]]
        rounds: dict[tuple[str, str], list[tuple[float, float, float]]] = {c: [] for c in cases}
        for _ in range(args.rounds):
            for app, library in cases:
                with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
                    rounds[(app, library)].append(_round(app, library, model, Path(tmp)))
    print("| program | library | measured ms | LogGPS ms | error | rounds' errors | LogGP ms | error |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |")
    for (app, library), runs in rounds.items():
        measured, gps, gp = (statistics.median(column) for column in zip(*runs))
        errors = sorted(100 * (r[1] - r[0]) / r[0] for r in runs)
        print(f"| {app} | {library} | {measured / 1e3:.1f} | {gps / 1e3:.1f} | "
              f"{100 * (gps - measured) / measured:+.1f}% | {errors[0]:+.1f}..{errors[-1]:+.1f}% | "
              f"{gp / 1e3:.1f} | {100 * (gp - measured) / measured:+.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
