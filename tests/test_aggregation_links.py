"""The aggregation experiment with half-duplex links and store-and-forward routing: the
published ranking on the 5-cube and a crossover delay that falls as the hypercube grows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commchar.cli import main
from commchar.errors import UsageError
from commchar.simulate.experiment import AggregationExperiment

HD, SAF = "half-duplex", "store-and-forward"
RANKED_DELAYS = [0.3, 0.5, 1.0, 3.0, 10.0, 30.0]


@pytest.fixture(scope="module")
def study():
    """The study-like costs (an operation and a value's handling alike, messages nearly free
    besides), 8-byte values over 8 B/us links, hypercubes only: about 150 simulator runs."""
    experiment = AggregationExperiment(
        delays_us=[0.03, 0.1, 0.2, *RANKED_DELAYS], op_cost_us=1, value_cost_us=1, overhead_us=0.01,
        bandwidth_bytes_per_us=8, links=(HD,), routings=(SAF,), architectures=("hypercube",),
        congestion=("off", "on"))
    return experiment.run()


def test_the_5_cube_ranks_the_methods_as_published(study):
    assert study.models == [("off", "full-duplex", SAF), ("on", HD, SAF)]
    times = {(method, congestion): study.elapsed("hypercube", 5, method, congestion, links, SAF)
             for method in ("direct", "butterfly") for congestion, links in (("off", "full-duplex"), ("on", HD))}
    sequential = study.sequential_us[5]
    for i, delay in enumerate(study.delays_us):
        ranked = [times["direct", "off"][i], times["butterfly", "off"][i], times["butterfly", "on"][i],
                  times["direct", "on"][i], sequential]
        if delay in RANKED_DELAYS:
            assert ranked == sorted(ranked) and len(set(ranked)) == 5, f"delay {delay}: {ranked}"
        # a half-duplex link makes the butterfly's swaps wait: congestion slows it at every delay
        assert times["butterfly", "on"][i] > times["butterfly", "off"][i], f"delay {delay}"
    # below the crossover the direct method with congestion beats the butterfly with it
    assert times["direct", "on"][0] < times["butterfly", "on"][0]


def test_the_crossover_delay_falls_as_the_hypercube_grows(study):
    crossings = []
    for dim in (2, 3, 4, 5):
        delay, after = study.crossover("hypercube", dim, "on", HD, SAF)
        assert delay is not None and after == "butterfly faster", (dim, delay, after)
        crossings.append(delay)
    assert crossings == sorted(crossings, reverse=True) and len(set(crossings)) == 4, crossings
    assert crossings[0] > 2 * crossings[-1]


@pytest.mark.slow
def test_the_command_sweeps_the_link_models_beside_todays(tmp_path: Path, capsys):
    assert main(["simulate", "--experiment", "aggregation", "--delays", "1", "--links", "full-duplex,half-duplex",
                 "--routing", "store-and-forward,cut-through", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "half-duplex links, store-and-forward" in " ".join(text.split())
    result = json.loads((tmp_path / "results.json").read_text())
    models = {(p["congestion"], p["links"], p["routing"]) for p in result["points"]}
    # without congestion no link is shared: those runs are made once, as full duplex
    assert models == {("off", "full-duplex", "cut-through"), ("off", "full-duplex", SAF),
                      ("on", "full-duplex", "cut-through"), ("on", "full-duplex", SAF),
                      ("on", HD, "cut-through"), ("on", HD, SAF)}
    assert {(c["links"], c["routing"]) for c in result["crossovers"]} == {
        ("full-duplex", "cut-through"), ("full-duplex", SAF), (HD, "cut-through"), (HD, SAF)}
    # today's model alone gives the points it always gave
    today = {(p["arch"], p["N"], p["method"], p["congestion"]): p["elapsed_us"] for p in result["points"]
             if (p["links"], p["routing"]) == ("full-duplex", "cut-through")}
    assert main(["simulate", "--experiment", "aggregation", "--delays", "1", "--out", str(tmp_path / "t")]) == 0
    plain = json.loads((tmp_path / "t" / "results.json").read_text())
    assert {(p["arch"], p["N"], p["method"], p["congestion"]): p["elapsed_us"] for p in plain["points"]} == today


def test_unknown_link_models_are_refused(capsys):
    capsys.readouterr()
    assert main(["simulate", "--experiment", "aggregation", "--links", "simplex"]) == 2
    assert "--links 'simplex'" in capsys.readouterr().err
    assert main(["simulate", "--app", "jacobi", "--routing", "wormhole"]) == 2
    assert "--routing must be one of" in capsys.readouterr().err
    with pytest.raises(UsageError):
        AggregationExperiment(congestion=("flow",))  # no bandwidth to share


def test_a_single_run_passes_the_options_to_the_simulator(capsys):
    capsys.readouterr()
    base = ["simulate", "--app", "jacobi", "--unknowns", "8", "--p", "8", "--exchange", "butterfly",
            "--topology", "hypercube:3", "--congestion", "on", "--unit", "us", "--hop", "5", "--json"]
    assert main(base) == 0
    today = json.loads(capsys.readouterr().out)
    assert main([*base, "--links", "half-duplex", "--routing", "store-and-forward"]) == 0
    half = json.loads(capsys.readouterr().out)
    assert half["links"] == "half-duplex" and half["routing"] == "store-and-forward"
    assert "links" not in today and half["makespan"] > today["makespan"]
    assert main(base[:-1] + ["--links", "half-duplex", "--routing", "store-and-forward"]) == 0
    assert "(congestion on, half-duplex, store-and-forward)" in " ".join(capsys.readouterr().out.split())
