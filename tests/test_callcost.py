"""Per-call collective costs (loggp.call_costs): the fit recovers known costs, the model
file validates them, and the simulator applies them (and nothing when they are absent)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from commchar.cli import main
from commchar.errors import ModelError
from commchar.modelfile.schema import validate
from commchar.models.callcost import CallCostModel

needs_sim = pytest.mark.usefixtures("simulator")  # fails, not skips, without the simulator

LOGGP = {"L": 0.2, "o_s": 0.1, "o_r": 0.15, "g": 0.05, "G": 0.0001}
CALL_COSTS = {"p": 2, "ops": {
    "allreduce": [{"n_min": 8, "n_max": 4096, "fixed": 0.5, "scale": 2.0},
                  {"n_min": 8192, "n_max": None, "fixed": 4.0, "scale": 3.0}],
    "bcast": [{"n_min": 1, "n_max": None, "fixed": 0.0, "scale": 0.5}],
    "scan": [{"n_min": 8, "n_max": None, "fixed": 0.25, "per_byte": 0.0005, "scale": 1.5}]}}


def model_with(loggp: dict) -> dict:
    return {"format": "commchar-model", "version": 1,
            "libraries": {"openmpi": {"operations": {"bcast": {"segments": [
                {"n_min": 0, "n_max": None, "t_s": 1, "t_b": 0.001}]}}, "loggp": loggp}}}


def test_fit_recovers_a_known_call_cost_per_regime():
    n = np.array([2.0 ** k for k in range(3, 21)])
    bare = 0.4 + 0.0002 * n + 1e-9 * n * n  # any positive simulated time
    truth = np.where(n < 16384, 0.7 + 2.5 * bare, 6.0 + 1.5 * bare)
    fit = CallCostModel(penalty=1.0).fit(n, truth, bare)
    assert [(s["n_min"], s["n_max"]) for s in fit.segments_] == [(8, 8192), (16384, None)]
    for seg, (fixed, scale) in zip(fit.segments_, [(0.7, 2.5), (6.0, 1.5)]):
        assert seg["fixed"] == pytest.approx(fixed, rel=1e-6)
        assert seg["scale"] == pytest.approx(scale, rel=1e-6)
    assert np.allclose(fit.predict(n, bare), truth, rtol=1e-9)


def test_a_cost_per_byte_beyond_the_messages_is_found_and_kept_only_where_it_pays():
    # Open MPI's linear scan: a copy and a temporary buffer cost per byte on top of a
    # message whose protocol switches at 4 KiB; the two-term form cannot follow it
    n = np.array([2.0 ** k for k in range(3, 21)])
    bare = np.where(n < 4096, 0.3 + 0.0001 * n, 2.0 + 0.00008 * n)
    truth = 0.2 + 0.0006 * n + 1.1 * bare
    fit = CallCostModel().fit(n, truth, bare)
    assert fit.terms_ == 3 and len(fit.segments_) == 1
    (seg,) = fit.segments_
    assert (seg["fixed"], seg["per_byte"], seg["scale"]) == (
        pytest.approx(0.2, rel=1e-5), pytest.approx(0.0006, rel=1e-5), pytest.approx(1.1, rel=1e-5))
    assert np.allclose(fit.predict(n, bare), truth, rtol=1e-9)
    # without such a term the simpler form wins and the per-byte cost stays 0
    plain = CallCostModel().fit(n, 0.2 + 1.1 * bare * (1 + 0.01 * np.sin(n)), bare)
    assert plain.terms_ == 2 and all(s["per_byte"] == 0.0 for s in plain.segments_)


def test_costs_stay_non_negative_where_the_collective_beats_its_messages():
    n = np.array([8.0, 64.0, 512.0, 4096.0])
    bare = 1.0 + 0.001 * n
    fit = CallCostModel().fit(n, 0.4 * bare, bare)  # cheaper than the ping-pong messages
    seg = fit.segments_[0]
    assert seg["fixed"] == pytest.approx(0.0, abs=1e-12) and seg["scale"] == pytest.approx(0.4)


def test_one_size_keeps_what_it_can():
    fit = CallCostModel().fit([0], [1.5], [1.0])  # barrier: one size
    assert (fit.segments_[0]["fixed"], fit.segments_[0]["scale"]) == (pytest.approx(0.5), 1.0)


def test_schema_accepts_call_costs_and_names_bad_ones():
    validate(model_with({**LOGGP, "call_costs": CALL_COSTS}))
    for path, value, needle in [
        (("allreduce", 0, "scale"), -1.0, "scale: must be >= 0"),
        (("allreduce", 1, "n_min"), 16, "sorted, disjoint"),
        (("bcast", 0, "fixed"), "x", "fixed: expected a finite number"),
        (("scan", 0, "per_byte"), -0.001, "per_byte: must be >= 0"),
    ]:
        bad = copy.deepcopy(CALL_COSTS)
        bad["ops"][path[0]][path[1]][path[2]] = value
        if path[2] == "n_min":
            bad["ops"]["allreduce"][0]["n_max"] = 32
        with pytest.raises(ModelError, match=needle):
            validate(model_with({**LOGGP, "call_costs": bad}))
    with pytest.raises(ModelError, match="lower-case operation name"):
        validate(model_with({**LOGGP, "call_costs": {"ops": {"allreduce:sum": CALL_COSTS["ops"]["bcast"]}}}))


def _makespan(capsys, path: Path, *argv: str) -> int:
    capsys.readouterr()
    assert main(["simulate", "--model", str(path), "--library", "openmpi", "--unit", "us", "--p", "2",
                 *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["makespan_ps"]


@needs_sim
def test_the_simulator_applies_call_costs_and_old_files_are_unchanged(capsys, tmp_path: Path):
    plain, costed = tmp_path / "plain.json", tmp_path / "costed.json"
    plain.write_text(json.dumps(model_with(LOGGP)))
    costed.write_text(json.dumps(model_with({**LOGGP, "call_costs": CALL_COSTS})))
    for spec, n, fixed, scale in [("allreduce:recursive_doubling", 1024, 0.5, 2.0),
                                  ("allreduce:ring", 65536, 4.0, 3.0), ("bcast:binomial", 64, 0.0, 0.5),
                                  ("scan:linear", 4096, 0.25 + 0.0005 * 4096, 1.5)]:
        run = ("--collective", spec, "--n", str(n))
        bare = _makespan(capsys, plain, *run)
        # one exchange or message at p = 2: o_s + L + o_r + (s-1)G (ring: two of n/2)
        if spec == "bcast:binomial":
            assert bare == round((0.1 + 0.2 + 0.15 + 63 * 0.0001) * 1e6)
        assert _makespan(capsys, costed, *run, "--call-costs", "off") == bare
        assert _makespan(capsys, costed, *run) == pytest.approx(fixed * 1e6 + scale * bare, abs=4)
    # an operation without a table pays its messages only
    assert _makespan(capsys, costed, "--collective", "alltoall:pairwise", "--n", "64") == \
        _makespan(capsys, plain, "--collective", "alltoall:pairwise", "--n", "64")


@needs_sim
def test_calibration_through_the_simulator_recovers_a_known_overhead(tmp_path: Path):
    """Points made from the simulator's own bare time plus a known per-call cost come back out."""
    from commchar.simulate.binary import Session
    from commchar.simulate.calibration import fit_library, simulate_bare
    from commchar.simulate.selection import choose

    path = tmp_path / "m.json"
    path.write_text(json.dumps(model_with(LOGGP)))
    sizes = [2 ** k for k in range(3, 17)]
    points = []
    with Session() as sim:
        for n in sizes:
            bare = simulate_bare(sim, str(path), "openmpi", choose("openmpi", "bcast", n, 2), n, 2, None)
            points.append({"library": "openmpi", "op": "bcast", "variant": "", "p": 2, "n_bytes": n,
                           "t_us": 0.35 + 1.75 * bare, "valid": True, "oversubscribed": False})
        section = fit_library(sim, str(path), "openmpi", points, None)
    (only,) = section["ops"]["bcast"]
    assert section["p"] == 2 and (only["n_min"], only["n_max"]) == (8, None)
    assert only["fixed"] == pytest.approx(0.35, rel=1e-3) and only["scale"] == pytest.approx(1.75, rel=1e-4)


def test_segment_bound_goes_where_the_simulated_messages_switch():
    from commchar.simulate.calibration import bare_switch

    def bare(n: int) -> float:  # a protocol switch at 5000 B
        return 1.0 + 0.001 * n if n < 5000 else 3.0 + 0.0005 * n

    assert bare_switch(bare, (2048, bare(2048)), (4096, bare(4096)), 8192) == 5000
    assert bare_switch(lambda n: 1.0 + 0.001 * n, (2048, 3.048), (4096, 5.096), 8192) is None
