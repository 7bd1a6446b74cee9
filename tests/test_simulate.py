"""`commchar simulate`: the verb drives the real Rust simulator (built by `make sim`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commchar.cli import main

pytestmark = pytest.mark.usefixtures("simulator")  # fails, not skips, without the simulator


# the one operation a model file must hold at least (a library without operations is refused)
PINGPONG = {"pingpong:send": {"kind": "p2p", "segments": [{"n_min": 0, "n_max": None, "t_s": 1.0, "t_b": 0.001}]}}

def simulate_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["simulate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def one_line_error(capsys, argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "Traceback" not in err
    return code, err


def test_binomial_bcast_matches_its_closed_form(capsys):
    out = simulate_json(capsys, "--collective", "bcast:binomial", "--n", "1K", "--p", "8")
    # k (2o + L + (s-1)G) with LogGOPSim's defaults in ns
    assert out["makespan_ps"] == 3 * (2 * 1500 + 2500 + 1023 * 6) * 1000
    assert out["events"] == 21 and out["messages"] == 7
    assert out["performance"]["peak_rss_bytes"] > 0


def test_text_output_names_the_figures(capsys):
    capsys.readouterr()
    assert main(["simulate", "--collective", "allreduce:ring", "--n", "64K", "--p", "6",
                 "--topology", "torus:3x2", "--congestion", "on", "--hop", "100"]) == 0
    text = capsys.readouterr().out
    for word in ("makespan", "events", "wall time", "peak memory", "torus:3x2"):
        assert word in text


def test_a_model_file_calibrates_the_run(capsys, tmp_path: Path):
    model = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
             "libraries": {"openmpi": {"operations": PINGPONG,
                                       "loggp": {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1,
                                                 "G": 0.001, "S": 65536, "s": 4096}}}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    out = simulate_json(capsys, "--collective", "bcast:binomial", "--n", "1001", "--p", "4",
                        "--model", str(path), "--unit", "us")
    # per hop o_s + L + o_r + (s-1)G = 0.5 + 2 + 0.75 + 1.0 us
    assert out["makespan_ps"] == 2 * 4_250_000
    assert out["params"]["S"] == 65535


def test_a_threshold_refined_to_the_byte_switches_protocol_at_that_byte(capsys, tmp_path: Path):
    loggp = {"L": 1.0, "o_s": 0.5, "o_r": 0.5, "g": 0.2, "G": 0.001, "S": 12000, "S_interval": [12000, 12001]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"format": "commchar-model", "version": 1,
                                "libraries": {"lib": {"operations": {}, "loggp": loggp}}}))
    run = ("--collective", "bcast:binomial", "--p", "2", "--model", str(path), "--unit", "us")
    eager, rendezvous = (simulate_json(capsys, *run, "--n", n) for n in ("11999", "12000"))
    assert eager["params"]["S"] == 11999  # the simulator's largest eager message: S - 1
    # eager: the sender is done after its overhead; from S it waits for the receiver's reply
    assert eager["finish"]["min"] == 0.5 and rendezvous["finish"]["min"] > 0.5
    assert rendezvous["events"] == eager["events"] + 1


def test_model_regimes_price_messages_by_size(capsys, tmp_path: Path):
    loggp = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001,
             "regimes": [{"n_min": 0, "n_max": 1024, "o_s": 0.25, "o_r": 0.5, "G": 0.004},
                         {"n_min": 2048, "n_max": None, "o_s": 1.0, "o_r": 1.5, "G": 0.002, "O": 0.003}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"format": "commchar-model", "version": 1,
                                "libraries": {"lib": {"operations": PINGPONG, "loggp": loggp}}}))
    run = ("--collective", "bcast:binomial", "--p", "2", "--model", str(path), "--unit", "us")
    # one message: o_s + L + o_r + (s-1)max(G, O) with the regime's o_s, o_r, G, O
    assert simulate_json(capsys, *run, "--n", "1001")["makespan_ps"] == (250_000 + 2_000_000 + 500_000
                                                                        + 1000 * 4_000)
    assert simulate_json(capsys, *run, "--n", "4097")["makespan_ps"] == (1_000_000 + 2_000_000 + 1_500_000
                                                                        + 4096 * 3_000)
    # an explicit flag overrides every regime
    assert simulate_json(capsys, *run, "--n", "1001", "--G", "0.001")["makespan_ps"] == (
        250_000 + 2_000_000 + 500_000 + 1000 * 1_000)


def test_emitted_goal_runs_unchanged(capsys, tmp_path: Path):
    goal = tmp_path / "rab.goal"
    capsys.readouterr()
    assert main(["simulate", "--collective", "allreduce:rabenseifner", "--n", "1M", "--p", "16",
                 "--emit-goal", str(goal)]) == 0
    assert goal.read_text().startswith("num_ranks 16")
    generated = simulate_json(capsys, "--collective", "allreduce:rabenseifner", "--n", "1M", "--p", "16")
    from_goal = simulate_json(capsys, "--goal", str(goal))
    assert from_goal["makespan_ps"] == generated["makespan_ps"]


def test_same_input_same_output(capsys, tmp_path: Path):
    runs = []
    for i in range(2):
        trace = tmp_path / f"t{i}.json"
        out = simulate_json(capsys, "--collective", "alltoall:direct", "--n", "4K", "--p", "9",
                            "--topology", "torus:3x3", "--congestion", "on", "--hop", "50",
                            "--trace", str(trace))
        out.pop("performance")
        runs.append((out, trace.read_bytes()))
    assert runs[0] == runs[1]
    events = json.loads(runs[0][1])["traceEvents"]
    assert {e["name"] for e in events} == {"send", "recv"} and all(e["ph"] == "X" for e in events)


def test_jacobi_app(capsys):
    seq = simulate_json(capsys, "--app", "jacobi", "--unknowns", "16", "--p", "1", "--iterations", "2",
                        "--op-cost", "1", "--unit", "us")
    assert seq["makespan"] == pytest.approx(2 * 16 * 31)
    par = simulate_json(capsys, "--app", "jacobi", "--unknowns", "16", "--p", "4", "--iterations", "2",
                        "--op-cost", "1", "--unit", "us", "--exchange", "direct")
    assert par["makespan"] < seq["makespan"]


@pytest.mark.parametrize("argv, code, needle", [
    (["--collective", "allreduce:nonsense"], 2, "unknown collective"),
    (["--collective", "allreduce:rabenseifner", "--p", "6", "--topology", "hypercube"], 2, "power-of-two"),
    (["--collective", "bcast", "--n", "12X"], 2, "is not a byte count"),
    (["--collective", "bcast", "--p", "0"], 2, "positive integer"),
    (["--collective", "bcast", "--topology", "torus:2"], 2, "torus shape"),
    (["--collective", "bcast", "--p", "9", "--topology", "hypercube:3"], 2, "fewer than 9"),
    (["--collective", "bcast", "--L", "-1"], 2, "not a non-negative time"),
    (["--goal", "/nonexistent.goal"], 2, "cannot read GOAL file"),
    (["--collective", "bcast", "--goal", "x"], 2, "exactly one"),
    (["--collective", "bcast", "--congestion", "flow", "--G", "0"], 2, "--congestion flow"),
])
def test_bad_input_is_one_line(capsys, argv, code, needle):
    got, err = one_line_error(capsys, ["simulate", *argv])
    assert got == code and needle in err and err.startswith("commchar: error:")


def test_bad_goal_and_model_files(capsys, tmp_path: Path):
    goal = tmp_path / "bad.goal"
    goal.write_text("num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n")
    code, err = one_line_error(capsys, ["simulate", "--goal", str(goal)])
    assert code == 2 and "bad.goal:3" in err
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"format": "commchar-model", "version": 1, "libraries": {"x": {"operations": PINGPONG}}}))
    code, err = one_line_error(capsys, ["simulate", "--collective", "bcast", "--model", str(model)])
    assert code == 2 and "no library has a loggp section" in err
    # a file the schema refuses is refused in the schema's words (here: no version)
    model.write_text(json.dumps({"format": "commchar-model", "libraries": {"x": {"operations": PINGPONG}}}))
    code, err = one_line_error(capsys, ["simulate", "--collective", "bcast", "--model", str(model)])
    assert code == 2 and "version" in err


def test_deadlocked_schedule_is_reported(capsys, tmp_path: Path):
    goal = tmp_path / "dead.goal"
    goal.write_text("num_ranks 2\nrank 0 {\n}\nrank 1 {\nr: recv 8b from 0 tag 0\n}\n")
    code, err = one_line_error(capsys, ["simulate", "--goal", str(goal)])
    assert code == 1 and "deadlock" in err


def test_missing_binary_says_make_sim(capsys, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("COMMCHAR_SIM", str(tmp_path / "nope"))
    code, err = one_line_error(capsys, ["simulate", "--collective", "bcast"])
    assert code == 1 and "make sim" in err


def test_list_names_every_algorithm(capsys):
    capsys.readouterr()
    assert main(["simulate", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert len(names) == 24 and {"allreduce:rabenseifner", "barrier:dissemination", "scan:linear",
                                  "gather:linear_sync", "reduce_scatter:pairwise"} <= set(names)


@pytest.mark.slow
def test_aggregation_experiment(capsys, tmp_path: Path):
    capsys.readouterr()
    assert main(["simulate", "--experiment", "aggregation", "--delays", "0.1,1000", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "crossover delay" in text and "sequential baseline" in text
    result = json.loads((tmp_path / "results.json").read_text())
    assert len(result["points"]) == 2 * 4 * 2 * 2 * 2
    assert result["sequential_us"]["32"] == pytest.approx(10 * 32 * 63)
    for name in ("aggregation_elapsed.png", "aggregation_speedup.svg"):
        assert (tmp_path / name).stat().st_size > 1000
    # on a fully connected machine the direct method wins once delays are long
    full32 = [c for c in result["crossovers"] if c["arch"] == "full" and c["N"] == 32 and c["congestion"] == "off"]
    assert full32[0]["crossover_delay_us"] is not None and full32[0]["after"] == "direct faster"


def test_a_models_reduction_cost_calibrates_gamma(tmp_path):
    """gamma is reduce:sum minus reduce:nop per byte at p = 2 (0.005 - 0.002 = 0.003 us/B)."""
    import json

    from commchar.commands.simulate import checked_model, gamma_from_model

    segment = {"n_min": 0, "n_max": None, "t_s": "1"}
    model = {"format": "commchar-model", "version": 1, "libraries": {"lib": {
        "operations": {
            "reduce:sum": {"n_range": [0, 1048576], "segments": [{**segment, "t_b": "0.002", "t_c": "0.003"}]},
            "reduce:nop": {"n_range": [0, 1048576], "segments": [{**segment, "t_b": "0.002"}]},
        },
        "loggp": {"L": 1, "o_s": 1, "o_r": 1, "g": 1, "G": 0.001}}}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    model = checked_model(str(path))
    assert abs(gamma_from_model(model, None, "us") - 0.003) < 1e-12
    assert abs(gamma_from_model(model, "lib", "ns") - 3.0) < 1e-9


@pytest.mark.slow
def test_aggregation_costs_are_flags_and_rank_the_methods(tmp_path: Path, capsys):
    """The study-like setting: on the 5-cube at a 10 us delay, direct < butterfly (with or
    without congestion: links are full duplex) < direct with congestion < sequential."""
    study = ["simulate", "--experiment", "aggregation", "--delays", "10", "--op-cost", "1",
             "--value-cost", "1", "--message-overhead", "0.01"]
    assert main([*study, "--out", str(tmp_path / "a")]) == 0
    result = json.loads((tmp_path / "a" / "results.json").read_text())
    assert result["settings"]["value_cost_us"] == 1 and result["settings"]["overhead_us"] == 0.01
    cube = {(p["method"], p["congestion"]): p["elapsed_us"] for p in result["points"]
            if p["arch"] == "hypercube" and p["N"] == 32}
    assert cube[("direct", "off")] < cube[("butterfly", "off")] == cube[("butterfly", "on")]
    assert cube[("butterfly", "on")] < cube[("direct", "on")] < result["sequential_us"]["32"]
    assert {p["congestion"] for p in result["points"]} == {"off", "on"}  # flow needs a bandwidth
    from commchar.simulate.experiment import AggregationExperiment

    argv = AggregationExperiment(bandwidth_bytes_per_us=8, value_cost_us=2)._args(
        32, 32, "hypercube:5", "direct", "on", 10.0)
    assert argv[argv.index("--G") + 1] == "0.125" and argv[argv.index("--O") + 1] == "0.25"
    capsys.readouterr()
    assert main(["simulate", "--experiment", "aggregation", "--value-cost", "-1"]) == 2
    assert "--value-cost" in capsys.readouterr().err


@pytest.mark.slow
def test_flow_level_congestion_in_the_aggregation_experiment(tmp_path: Path):
    """Given a bandwidth, the experiment adds the flow-level network: the butterfly's
    messages have their links to themselves under every model, and the direct
    method's, sharing bandwidth, stay near the congestion-free times where a link
    held for each message's whole delay makes them queue."""
    assert main(["simulate", "--experiment", "aggregation", "--delays", "10", "--bandwidth", "8",
                 "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "results.json").read_text())
    cube = {(p["method"], p["congestion"]): p["elapsed_us"] for p in result["points"]
            if p["arch"] == "hypercube" and p["N"] == 32}
    assert {c for _, c in cube} == {"off", "on", "flow"}
    assert cube[("butterfly", "off")] == cube[("butterfly", "on")] == cube[("butterfly", "flow")]
    assert abs(cube[("direct", "flow")] / cube[("direct", "off")] - 1) < 0.05
    assert cube[("direct", "flow")] * 2 < cube[("direct", "on")]


def test_a_long_run_reports_progress_and_the_same_result() -> None:
    from commchar.simulate.binary import run_simulator

    # 100 M events: about 3 s, three times the report interval (the 2^18-rank
    # Rabenseifner case once used here fell under a second as the engine got faster)
    args = ["--collective", "allreduce:ring", "--n", "1048576", "--p", "4096"]
    seen: list[tuple[int, int | None, float]] = []
    reported = run_simulator(args, on_progress=lambda *a: seen.append(a))
    assert seen, "a run of over a second reports at least once"
    done = [d for d, _, _ in seen]
    assert done == sorted(done) and all(total is None for _, total, _ in seen)
    assert reported["makespan"] == run_simulator(args)["makespan"]
