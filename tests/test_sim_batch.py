"""The simulator's batch mode (`commchar-sim --batch`, `binary.Session`): one process gives
every answer a process per run gives, to the picosecond, errors included, and `commchar
replay` and the calibration of `commchar fit` run one simulator process each."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from _corpus import write_model
from commchar.errors import InputError, UsageError
from commchar.simulate import binary
from commchar.simulate.binary import Session, SimulationError, run_simulator
from commchar.trace.synthetic import exchange_program, write_allreduce_costs

LOGGP = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001, "O": 0.0005, "S": 65536}

pytestmark = pytest.mark.skipif(not binary.default_binary().exists(), reason="simulator not built")


def _model(tmp_path: Path) -> Path:
    ops = {"allreduce:sum": {"segments": [{"n_min": 8, "n_max": 4096, "t_s": 3.0, "t_b": 0.001}],
                             "p_range": [2, 4]}}
    return write_model(tmp_path / "m.json", LOGGP, ops, ("mpich",))


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal results apart from the run's own wall time and memory."""
    a, b = dict(a), dict(b)
    assert a.pop("performance")["wall_s"] >= 0 and b.pop("performance")["wall_s"] >= 0
    assert a == b


def _requests(tmp_path: Path) -> list[list[str]]:
    model = _model(tmp_path)
    trace = tmp_path / "trace"
    exchange_program(trace, p=4, iterations=200, allreduce_every=10)
    costs = write_allreduce_costs(tmp_path / "costs.json", 4)
    replay = ["--replay", str(trace), "--model", str(model), "--unit", "us", "--collectives", "charged",
              "--replay-costs", str(costs)]
    collective = ["--model", str(model), "--unit", "us", "--call-costs", "off", "--p", "4"]
    return [
        [*replay[:6], "--list-signatures"],
        replay, [*replay, "--S", "inf"], replay, [*replay, "--compute-scale", "0.5"],
        [*replay, "--congestion", "flow", "--G", "0.002"],
        *[[*collective, "--collective", alg, "--n", str(n)]
          for alg in ("bcast:binomial", "allreduce:rabenseifner") for n in (8, 4096, 1 << 20)],
        ["--collective", "bcast:binomial", "--n", "100", "--p", "8", "--topology", "torus:2x4",
         "--congestion", "on"],
    ]


def test_one_process_answers_as_a_process_per_run_does(tmp_path: Path):
    requests = _requests(tmp_path)
    with Session() as sim:
        batched = [sim.run(args) for args in requests]
    for args, answer in zip(requests, batched):
        single = run_simulator(args)
        if "--list-signatures" in args:
            assert answer == single and answer["signatures"]
        else:
            _same(answer, single)
            assert answer["makespan_ps"] == single["makespan_ps"] > 0
    # the replay copied for a second run starts afresh: the same answer again
    _same(batched[1], batched[3])


def test_a_failed_request_gives_the_single_runs_error_and_the_process_goes_on(tmp_path: Path):
    model = _model(tmp_path)
    failing = [
        (["--collective", "bcast:nosuch"], UsageError),
        (["--model", str(tmp_path / "missing.json"), "--collective", "bcast"], InputError),
        (["--replay", str(tmp_path / "none")], InputError),
        (["--nosuchflag"], UsageError),
        (["--collective", "bcast", "--progress"], UsageError),
    ]
    good = ["--model", str(model), "--collective", "bcast:binomial", "--n", "64"]
    with Session() as sim:
        for args, error in failing:
            with pytest.raises(error) as batched:
                sim.run(args)
            if "--progress" not in args:
                with pytest.raises(error) as single:
                    run_simulator(args)
                assert str(batched.value) == str(single.value)
            _same(sim.run(good), run_simulator(good))


def test_batch_takes_its_flags_from_the_requests_only():
    done = subprocess.run([str(binary.find_binary()), "--batch", "--n", "8"], capture_output=True,
                          text=True, check=False, input="")
    assert done.returncode == 2
    assert done.stderr.strip() == "commchar-sim: --batch takes every flag from its requests on stdin, not --n"
    done = subprocess.run([str(binary.find_binary()), "--batch"], capture_output=True, text=True,
                          check=False, input='["--list"]\n{"no": 1}\n\n["--emit-goal", "/nonexistent/x"]\n')
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(answers) == 3
    assert "bcast:binomial" in answers[0]
    assert answers[1]["exit_code"] == 2 and "JSON array" in answers[1]["error"]
    assert answers[2]["exit_code"] == 2


def test_a_session_that_loses_its_process_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    script = tmp_path / "sim"
    script.write_text("#!/bin/sh\necho 'commchar-sim: out of order' >&2\nexit 1\n")
    script.chmod(0o755)
    monkeypatch.setenv(binary.ENV_VAR, str(script))
    with pytest.raises(SimulationError, match="^out of order$"):
        with Session() as sim:
            sim.run(["--list"])


def test_replay_and_calibration_start_one_simulator_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Counted by the processes commchar starts: one per replay, one per calibrated model."""
    from commchar import processes
    from commchar.modelfile import load_document
    from commchar.simulate.calibration import add_call_costs
    from commchar.simulate.replay import ReplayRequest, replay

    started: list[list[str]] = []
    real_start = processes.start

    def counting(argv: list[str], **kwargs: Any) -> subprocess.Popen:
        started.append(argv)
        return real_start(argv, **kwargs)

    monkeypatch.setattr(processes, "start", counting)
    model = _model(tmp_path)
    trace = tmp_path / "trace"
    exchange_program(trace, p=2, iterations=50, allreduce_every=10)
    doc = replay(ReplayRequest(trace_dir=trace, model_path=str(model), collectives="expanded",
                               emit_goal=str(tmp_path / "t.goal")))
    assert doc["predictions"]["loggps"]["makespan"] > 0 and (tmp_path / "t.goal").stat().st_size > 0
    assert [a[1:] for a in started] == [["--batch"]]
    started.clear()
    points = [{"library": "mpich", "op": "bcast", "variant": "", "p": 2, "n_bytes": n, "t_us": 3.0 + 0.01 * n,
               "valid": True, "oversubscribed": False} for n in (8, 64, 512, 4096)]
    document, _ = add_call_costs(load_document(model), points)
    assert "bcast" in document.to_json()["libraries"]["mpich"]["loggp"]["call_costs"]["ops"]
    assert [a[1:] for a in started] == [["--batch"]]
