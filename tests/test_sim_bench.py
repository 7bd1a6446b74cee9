"""bench/sim_bench.py's comparison of two builds: alternated runs, the median ratio, and a
differing makespan caught."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from commchar.simulate import binary

BENCH = Path(__file__).resolve().parents[1] / "bench" / "sim_bench.py"
CASE = "p=4096 torus:64x64 congestion"  # a small case: 0.3 M events


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), "--only", CASE, *args], capture_output=True,
                          text=True, timeout=300)


def test_a_baseline_runs_in_turn_and_its_median_ratio_is_printed():
    done = bench("--baseline", str(binary.find_binary()), "--rounds", "2")
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if CASE in x)
    assert "median ratio" in line and "over 2 rounds" in line and "DIFFERS" not in line


def test_a_baseline_that_computes_another_makespan_fails(tmp_path: Path):
    other = tmp_path / "slower-network"
    # the real simulator, with a longer latency than the default the bench runs
    other.write_text(f'#!/bin/sh\nexec "{binary.find_binary()}" "$@" --L 5000\n')
    other.chmod(0o755)
    done = bench("--baseline", str(other), "--rounds", "1")
    assert done.returncode == 1
    assert "makespan DIFFERS" in done.stdout and "the makespan differs from the baseline's" in done.stdout


def test_a_missing_baseline_is_one_line_and_exit_2(tmp_path: Path):
    done = bench("--baseline", str(tmp_path / "nope"))
    assert done.returncode == 2 and done.stderr.strip() == f"sim_bench: {tmp_path / 'nope'} is missing"
