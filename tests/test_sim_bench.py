"""The benches' comparison of two builds (bench/build_compare.py, used by sim_bench.py and
replay_bench.py): alternated runs, the median ratio, and a differing makespan caught."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from commchar.simulate import binary

BENCH = Path(__file__).resolve().parents[1] / "bench" / "sim_bench.py"
REPLAY_BENCH = BENCH.with_name("replay_bench.py")
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


def test_the_replay_bench_compares_builds_and_catches_another_makespan(tmp_path: Path):
    other = tmp_path / "slower-network"
    other.write_text(f'#!/bin/sh\nexec "{binary.find_binary()}" "$@" --L 5000\n')
    other.chmod(0o755)
    runs = {}
    for name, baseline in (("same", binary.find_binary()), ("other", other)):
        runs[name] = subprocess.run([sys.executable, str(REPLAY_BENCH), "--calls", "20000", "--baseline",
                                     str(baseline), "--rounds", "2"], capture_output=True, text=True, timeout=300)
    same, differs = runs["same"], runs["other"]
    assert same.returncode == 0, same.stderr
    assert same.stdout.count("median ratio") == 2 and "DIFFERS" not in same.stdout
    assert differs.returncode == 1 and differs.stdout.count("makespan DIFFERS") == 2
    assert "FAILED collectives expanded: the makespan differs from the baseline's" in differs.stdout
