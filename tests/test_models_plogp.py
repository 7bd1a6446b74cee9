"""Size-dependent LogGP costs (loggp.regimes) from the ping-pong regimes."""

from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import pytest

from commchar.models import fit_points
from commchar.models.plogp import size_regimes

LOGGP = {"L": 0.1, "o_s": 0.08, "o_r": 0.12, "g": 0.1, "G": 0.00007, "O": 0.00009}
SEGMENTS = [{"n_min": 0, "n_max": 16, "t_s": 0.3, "t_b": 0.0},
            {"n_min": 32, "n_max": 8192, "t_s": 0.5, "t_b": 0.0003},
            {"n_min": 16384, "n_max": None, "t_s": 1.5, "t_b": 0.00007}]


def test_each_regime_reproduces_its_ping_pong_segment():
    regimes = size_regimes(LOGGP, SEGMENTS)
    assert [(r["n_min"], r["n_max"]) for r in regimes] == [(0, 16), (32, 8192), (16384, None)]
    for seg, reg in zip(SEGMENTS, regimes):
        assert reg["G"] == seg["t_b"]
        # o_s : o_r as measured by PRTT
        assert reg["o_s"] * LOGGP["o_r"] == pytest.approx(reg["o_r"] * LOGGP["o_s"])
        for n in (seg["n_min"] + 1, (seg["n_max"] or 1 << 22)):
            end_to_end = reg["o_s"] + LOGGP["L"] + reg["o_r"] + (n - 1) * max(reg["G"], reg["O"])
            assert end_to_end == pytest.approx(seg["t_s"] + seg["t_b"] * n)
    # O never exceeds the regime's G (else the receiver's copy would outlast the segment's time)
    assert [r["O"] for r in regimes] == [0.0, 0.00009, 0.00007]


def test_overheads_are_clamped_and_expressions_give_nothing():
    low = size_regimes(LOGGP, [{"n_min": 0, "n_max": None, "t_s": 0.01, "t_b": 0.0001}])
    assert low[0]["o_s"] == 0.0 and low[0]["o_r"] == 0.0
    zero = size_regimes(LOGGP | {"o_s": 0.0, "o_r": 0.0}, [{"n_min": 0, "n_max": None, "t_s": 1.1, "t_b": 0.0}])
    assert zero[0]["o_s"] == zero[0]["o_r"] == pytest.approx(0.5)
    assert size_regimes(LOGGP, [{"n_min": 0, "n_max": None, "t_s": "0.3*log2(p)", "t_b": 0.0}]) is None


def _points(rng: np.random.Generator) -> list[dict]:
    """PRTT points of a LogGP machine and ping-pong points with an eager and a long regime."""
    L, o_s, o_r, g, G = 0.1, 0.08, 0.12, 0.1, 0.00007
    pts = []
    for n in [0] + [2**k for k in range(0, 21)]:
        noise = float(np.exp(rng.normal(0, 0.003)))
        gap = g + max(n - 1, 0) * G
        prtt1 = 2 * (o_s + L + o_r + max(n - 1, 0) * G)
        extra = {"prtt1_us": prtt1, "prttm_us": prtt1 + 7 * gap, "m": 8, "d_us": 2 * prtt1,
                 "o_s_us": o_s, "o_r_us": o_r, "gap_us": gap}
        extra["prttmd_us"] = prtt1 + 7 * (extra["d_us"] + o_s)
        pts.append({"library": "lib", "op": "loggp", "variant": "", "p": 2, "n_bytes": n,
                    "t_us": prtt1 / 2, "extra": extra})
        one_way = (0.5 + 0.0003 * n) if n <= 8192 else (1.5 + 0.00007 * n)
        pts.append({"library": "lib", "op": "pingpong", "variant": "send", "p": 2, "n_bytes": n,
                    "t_us": one_way * noise})
    return pts


def test_fit_writes_valid_regimes_the_simulator_uses(tmp_path):
    from commchar.modelfile import validate
    from commchar.simulate.binary import SimulationError, find_binary

    model = fit_points(_points(np.random.default_rng(5)))
    validate(model)
    section = model["libraries"]["lib"]["loggp"]
    regimes = section["regimes"]
    eager = next(r for r in regimes if r["n_min"] <= 1024 <= (r["n_max"] or math.inf))
    assert eager["G"] == pytest.approx(0.0003, rel=0.02)
    one_kib = eager["o_s"] + section["L"] + eager["o_r"] + 1023 * eager["G"]
    assert one_kib == pytest.approx(0.5 + 0.0003 * 1024, rel=0.02)
    try:
        sim = find_binary()  # the build commchar runs
    except SimulationError as exc:
        pytest.fail(str(exc))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    out = subprocess.run([str(sim), "--model", str(path), "--unit", "us", "--collective",
                          "bcast:binomial", "--n", "1024", "--p", "2", "--json"],
                         capture_output=True, text=True, check=True)
    # one eager message: the regime's cost, not the long-message G (the simulator
    # holds times in whole ps and per-byte costs in whole ps/B)
    ps = [round(x * 1e6) for x in (eager["o_s"], section["L"], eager["o_r"], eager["G"])]
    assert json.loads(out.stdout)["makespan_ps"] == ps[0] + ps[1] + ps[2] + 1023 * ps[3]


def test_the_simulators_regimes_come_from_the_means_and_the_medians_stay_beside_them():
    """A program's time is the sum of its calls' means: with every ping-pong mean 25% above
    its median, loggp.regimes (what the simulator prices messages with) follow the means,
    loggp.regimes_median the medians."""
    pts = _points(np.random.default_rng(6))
    for pt in pts:
        if pt["op"] == "pingpong":
            pt.update({"t_mean_us": 1.25 * pt["t_us"], "t_std_us": 0.01 * pt["t_us"], "reps": 100})
    section = fit_points(pts)["libraries"]["lib"]["loggp"]
    assert section["regimes_statistic"] == "mean"

    def at_one_kib(regimes: list[dict]) -> float:
        r = next(r for r in regimes if r["n_min"] <= 1024 <= (r["n_max"] or math.inf))
        return r["o_s"] + section["L"] + r["o_r"] + 1023 * r["G"]

    assert at_one_kib(section["regimes"]) == pytest.approx(1.25 * (0.5 + 0.0003 * 1024), rel=0.02)
    assert at_one_kib(section["regimes_median"]) == pytest.approx(0.5 + 0.0003 * 1024, rel=0.02)


def test_an_eager_regime_keeps_the_prtt_overheads_and_takes_the_rest_as_its_latency():
    # S = 4096, the first rendezvous size: the segment of 32 to 8192 B is cut there, its
    # eager part ending at 4095 B; that part costs 0.5 us
    # fixed, more than the PRTT's o_s + L + o_r (0.3), so it keeps 0.08 + 0.12 and its
    # own L is 0.5 + t_b - 0.2; its rendezvous part and the long segment split as before
    loggp = LOGGP | {"S": 4096}
    regimes = size_regimes(loggp, SEGMENTS)
    assert [(r["n_min"], r["n_max"]) for r in regimes] == [(0, 16), (32, 4095), (4096, 8192), (16384, None)]
    small, eager, cut, long = regimes
    assert (eager["o_s"], eager["o_r"]) == (LOGGP["o_s"], LOGGP["o_r"])
    assert eager["L"] == pytest.approx(0.5 + 0.0003 - 0.2)
    for reg, seg in ((small, SEGMENTS[0]), (eager, SEGMENTS[1]), (cut, SEGMENTS[1]), (long, SEGMENTS[2])):
        for n in (reg["n_min"] + 1, reg["n_max"] or 1 << 22):
            end_to_end = reg["o_s"] + reg.get("L", LOGGP["L"]) + reg["o_r"] + (n - 1) * max(reg["G"], reg["O"])
            assert end_to_end == pytest.approx(seg["t_s"] + seg["t_b"] * n)
    # the small segment's fixed time (0.3) is the PRTT's: nothing left for a latency of its own
    assert "L" not in small and "L" not in cut and "L" not in long
    assert cut["o_s"] * LOGGP["o_r"] == pytest.approx(cut["o_r"] * LOGGP["o_s"])
