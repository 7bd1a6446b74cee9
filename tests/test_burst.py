"""A burst of rendezvous exchanges (simulate/burst.py): what the kernel's two messages each
way took beyond the simulator's own two, per rendezvous size, in the model file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commchar.modelfile import load_document, save, validate

needs_sim = pytest.mark.usefixtures("simulator")  # fails, not skips, without the simulator

S = 8192
LOGGP = {"L": 0.5, "o_s": 0.2, "o_r": 0.25, "g": 0.3, "G": 0.0001, "S": S, "rendezvous_copy": "receiver",
         "exchange_excess": {"statistic": "mean", "steps": [[1, 0.02]],
                             "rendezvous": [[16384, 0.4], [65536, 0.6]]}}


def _model(tmp_path: Path, loggp: dict) -> Path:
    doc = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
           "provenance": {"source": "test"},
           "libraries": {"lib": {"version": "test 1.0", "operations": {"pingpong:send": {
               "kind": "p2p", "segments": [{"n_min": 0, "n_max": None, "t_s": 1.0, "t_b": 0.001}]}},
               "loggp": loggp}}}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    return path


def _burst(n: int, t_mean: float) -> dict:
    return {"library": "lib", "op": "exchange", "variant": "isend2", "n_bytes": n, "p": 2, "valid": True,
            "t_us": t_mean * 0.98, "t_mean_us": t_mean}


def test_the_schedule_posts_receives_then_sends_and_waits_for_the_burst_before():
    from commchar.simulate.burst import burst_schedule

    text = burst_schedule(4096, 2)
    rank0 = text.split("rank 1 {")[0]
    assert "r0_0: recv 4096b from 1 tag 0" in rank0 and "s0_1: send 4096b to 1 tag 1" in rank0
    # the second burst waits for all four of the first, the first for nothing
    assert "s1_0 requires r0_1" in rank0 and "r1_0 requires s0_0" in rank0
    assert not any(line.startswith(("r0_", "s0_")) and "requires" in line for line in rank0.splitlines())


@needs_sim
def test_each_rendezvous_size_keeps_what_the_probe_took_beyond_the_simulated_burst(tmp_path: Path):
    from commchar.simulate.binary import Session
    from commchar.simulate.burst import add_burst_excess, simulated_burst_us

    path = _model(tmp_path, LOGGP)
    with Session() as sim:
        model_us = {n: simulated_burst_us(sim, str(path), "lib", n, str(tmp_path)) for n in (16384, 65536)}
    # the model's own burst: two rendezvous messages each way cost more than one
    assert model_us[65536] > model_us[16384] > 0
    points = [_burst(16384, model_us[16384] + 0.5), _burst(65536, model_us[65536] + 0.25),
              _burst(4096, 9.0),  # eager: no burst step
              {**_burst(65536, 1.0), "library": "other"}]
    calibrated = add_burst_excess(load_document(path), points)
    excess = calibrated.libraries["lib"].loggp["exchange_excess"]
    burst = dict(excess["burst"])
    assert set(burst) == {16384, 65536}
    assert burst[16384] == pytest.approx(0.5, abs=1e-3) and burst[65536] == pytest.approx(0.25, abs=1e-3)
    # an eager size keeps its own step, apart from the rendezvous ones
    with Session() as sim:
        eager_us = simulated_burst_us(sim, str(path), "lib", 4096, str(tmp_path))
    assert dict(excess["burst_eager"]) == {4096: pytest.approx(9.0 - eager_us, abs=1e-3)}
    out = tmp_path / "calibrated.json"
    save(calibrated, out)
    validate(json.loads(out.read_text()))
    # a probe faster than the model's own burst leaves nothing, never a negative excess
    fast = add_burst_excess(load_document(path), [_burst(16384, 0.01)])
    assert dict(fast.libraries["lib"].loggp["exchange_excess"]["burst"]) == {16384: 0.0}


@needs_sim
def test_a_model_without_an_exchange_excess_or_without_the_probe_is_unchanged(tmp_path: Path):
    from commchar.simulate.burst import add_burst_excess

    no_exchange = {key: value for key, value in LOGGP.items() if key != "exchange_excess"}
    path = _model(tmp_path, no_exchange)
    assert add_burst_excess(load_document(path), [_burst(16384, 5.0)]) == load_document(path)
    path = _model(tmp_path, LOGGP)
    assert add_burst_excess(load_document(path), [{**_burst(4096, 5.0), "variant": "isend"}]) == load_document(path)


@needs_sim
def test_no_step_where_the_bursts_buffers_outgrow_what_the_footprint_curves_hold(tmp_path: Path):
    from commchar.simulate.burst import add_burst_excess

    held = {**LOGGP, "copy_footprint": {"statistic": "mean", "held_bytes": 4 * 16384,
                                        "by_size": [{"n": 65536, "steps": [[262144, 1e-5]]}]}}
    path = _model(tmp_path, held)
    calibrated = add_burst_excess(load_document(path), [_burst(16384, 50.0), _burst(65536, 90.0)])
    assert [n for n, _ in calibrated.libraries["lib"].loggp["exchange_excess"]["burst"]] == [16384]
