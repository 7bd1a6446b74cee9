"""The simulator's two builds (scripts/build-sim.sh): the profile-optimized binary computes
exactly what the plain one does, and commchar runs whichever is newer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from commchar.simulate import binary
from commchar.trace.synthetic import exchange_program, write_allreduce_costs

WORKLOADS = [
    *(["--collective", alg, "--p", "16", "--n", "4096"] for alg in
      ("allreduce:rabenseifner", "allreduce:ring", "bcast:binomial", "alltoall:pairwise",
       "scan:linear", "gather:linear_sync", "barrier:dissemination")),
    ["--collective", "allreduce:rabenseifner", "--p", "64", "--n", "1048576", "--rendezvous", "match"],
    *(["--collective", "allreduce:rabenseifner", "--p", "64", "--n", "65536", "--topology", "torus:8x8",
       "--congestion", model, "--hop", "50"] for model in ("on", "flow")),
    ["--app", "jacobi", "--p", "8", "--unknowns", "256", "--iterations", "3"],
]


def result(sim: Path, args: list[str]) -> dict:
    done = subprocess.run([str(sim), *args, "--json"], capture_output=True, text=True, timeout=120,
                          check=True)
    out = json.loads(done.stdout)
    out.pop("performance")  # wall time and memory: the only fields a build may change
    return out


needs_optimized = pytest.mark.skipif(not binary.OPTIMIZED_BINARY.exists(),
                                     reason="no profile-optimized build (scripts/build-sim.sh needs llvm-profdata)")


@needs_optimized
@pytest.mark.parametrize("args", WORKLOADS, ids=" ".join)
def test_the_optimized_build_computes_what_the_plain_build_does(args):
    assert result(binary.OPTIMIZED_BINARY, args) == result(binary.PLAIN_BINARY, args)


@needs_optimized
@pytest.mark.parametrize("mode", ["expanded", "charged"])
def test_the_optimized_build_replays_a_trace_as_the_plain_build_does(tmp_path: Path, mode: str):
    trace = tmp_path / "trace"
    exchange_program(trace, p=4, iterations=500, allreduce_every=10)
    args = ["--replay", str(trace), "--unit", "us", "--S", "65535", "--collectives", mode]
    if mode == "charged":
        costs = write_allreduce_costs(tmp_path / "costs.json", 4)
        args += ["--replay-costs", str(costs)]
    plain = result(binary.PLAIN_BINARY, args)
    assert plain["messages"] > 0 and result(binary.OPTIMIZED_BINARY, args) == plain


def test_the_newer_build_is_run(monkeypatch, tmp_path: Path):
    plain, optimized = tmp_path / "release" / "commchar-sim", tmp_path / "pgo" / "commchar-sim"
    monkeypatch.setattr(binary, "PLAIN_BINARY", plain)
    monkeypatch.setattr(binary, "OPTIMIZED_BINARY", optimized)
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    assert binary.default_binary() == plain  # nothing built: the plain path, for the error
    for path in (plain, optimized):
        path.parent.mkdir()
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    os.utime(plain, (1_000, 1_000))
    os.utime(optimized, (2_000, 2_000))
    assert binary.find_binary() == optimized
    os.utime(plain, (3_000, 3_000))  # a plain `cargo build` after a source change
    assert binary.find_binary() == plain
    optimized.chmod(0o644)
    os.utime(optimized, (4_000, 4_000))
    assert binary.find_binary() == plain  # a file that cannot run is no build
