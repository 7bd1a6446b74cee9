"""LogGP / LogGPS parameters from synthetic PRTT and rendezvous points."""

from __future__ import annotations

import numpy as np
import pytest

from commchar.models import LogGPModel, fit_points

L, O_S, O_R, G_SMALL, G_BYTE, O_BYTE = 0.6, 0.25, 0.3, 0.4, 0.00008, 0.00002
SIZES = [0] + [2**k for k in range(0, 23)]


def _loggp_points(S: int, rng: np.random.Generator, delay_key: str | None = "delay_us") -> list[dict]:
    pts = []
    for n in SIZES:
        gap = (G_SMALL + max(n - 1, 0) * G_BYTE) * np.exp(rng.normal(0, 0.005))
        prtt1 = 2 * (O_S + L + O_R + max(n - 1, 0) * G_BYTE) * np.exp(rng.normal(0, 0.005))
        extra = {"prtt1_us": prtt1, "prttm_us": prtt1 + 7 * gap, "m": 8, "d_us": 2 * prtt1,
                 "o_s_us": (O_S + O_BYTE * n) * np.exp(rng.normal(0, 0.005)),
                 "o_r_us": O_R * np.exp(rng.normal(0, 0.005)), "gap_us": gap}
        extra["prttmd_us"] = prtt1 + 7 * (extra["d_us"] + extra["o_s_us"])
        pts.append({"library": "lib", "op": "loggp", "variant": "", "p": 2, "n_bytes": n,
                    "t_us": prtt1 / 2, "extra": extra})
        blocked = (O_S + O_BYTE * n) if n < S else 2000.0 + 0.0001 * n
        rextra = {delay_key: 2000.0} if delay_key else {}
        pts.append({"library": "lib", "op": "rndv", "variant": "", "p": 2, "n_bytes": n,
                    "t_us": blocked * np.exp(rng.normal(0, 0.01)), "extra": rextra})
    return pts


@pytest.mark.parametrize("S", [4096, 65536, 262144])
def test_loggp_parameters_and_rendezvous_threshold_recovered(S):
    model = LogGPModel().fit(_loggp_points(S, np.random.default_rng(S)))
    q = model.params_
    assert q["S"] == S
    assert model.delay_us_ == 2000.0
    assert q["G"] == pytest.approx(G_BYTE, rel=0.03)
    assert q["g"] == pytest.approx(G_SMALL, rel=0.05)
    assert q["o_s"] == pytest.approx(O_S, rel=0.05)
    assert q["O"] == pytest.approx(O_BYTE, rel=0.1)
    assert q["o_r"] == pytest.approx(O_R, rel=0.05)
    assert q["L"] == pytest.approx(L, rel=0.05)
    assert model.predict([1000])[0] == pytest.approx(O_S + 999 * G_BYTE + L + O_R, rel=0.03)


def test_receiver_delay_defaults_to_the_kernel_default_with_a_note():
    model = LogGPModel().fit(_loggp_points(8192, np.random.default_rng(1), delay_key=None))
    assert model.params_["S"] == 8192 and model.delay_us_ == 2000.0
    assert any("assumed the kernel default" in note for note in model.notes_)
    # a delay given by the caller (from the run's kernel options) wins
    assert LogGPModel(receiver_delay_us=10000.0).fit(
        _loggp_points(8192, np.random.default_rng(1), None)).params_["S"] is None


def test_negative_latency_is_clamped_with_a_note():
    pts = _loggp_points(8192, np.random.default_rng(2))
    for pt in pts:
        if pt["op"] == "loggp":
            pt["extra"]["o_r_us"] = 5.0  # overheads larger than half the round trip
    model = LogGPModel().fit(pts)
    assert model.params_["L"] == 0.0
    assert any("L clamped to 0" in note for note in model.notes_)


def test_overheads_without_a_size_below_S_are_unknown_with_a_note():
    # as when the small sizes were measured in another state of the ranks' cores and left out
    pts = [pt for pt in _loggp_points(8192, np.random.default_rng(3))
           if pt["op"] == "rndv" or pt["n_bytes"] >= 8192]
    model = LogGPModel().fit(pts)
    assert model.params_["S"] == 8192
    assert model.params_["o_s"] == 0.0 and model.params_["o_r"] == 0.0
    assert any("o_s, O and o_r unknown (0)" in note and "below S = 8192 B" in note
               for note in model.notes_)
    # with sizes below S there is no such note
    assert not any("unknown (0)" in note for note in
                   LogGPModel().fit(_loggp_points(8192, np.random.default_rng(3))).notes_)


def test_model_file_loggp_section_is_valid():
    from commchar.modelfile import validate

    pts = _loggp_points(16384, np.random.default_rng(3))
    for n in SIZES:  # a library needs at least one operation
        pts.append({"library": "lib", "op": "pingpong", "variant": "send", "p": 2, "n_bytes": n,
                    "t_us": 0.5 + 0.0001 * n})
    model = fit_points(pts)
    validate(model)
    section = model["libraries"]["lib"]["loggp"]
    assert section["S"] == 16384 and section["receiver_delay_us"] == 2000.0
    assert {"L", "o_s", "o_r", "g", "G", "O"} <= section.keys()


def test_rendezvous_copy_follows_the_transport_rule_and_is_validated():
    import copy

    from commchar.errors import ModelError
    from commchar.modelfile import validate

    def fitted(library):
        pts = [pt | {"library": library} for pt in _loggp_points(16384, np.random.default_rng(4))]
        pts += [{"library": library, "op": "pingpong", "variant": "send", "p": 2, "n_bytes": n,
                 "t_us": 0.5 + 0.0001 * n} for n in SIZES]
        return fit_points(pts)

    # on one host both Debian libraries pull a rendezvous message with one copy at the receiver
    model = fitted("openmpi")
    assert model["libraries"]["openmpi"]["loggp"]["rendezvous_copy"] == "receiver"
    other = fitted("vendor")["libraries"]["vendor"]["loggp"]
    assert other["rendezvous_copy"] == "both" and any("both ends" in n for n in other["notes"])
    from commchar.models.transport import rendezvous_copy

    assert rendezvous_copy("mpich on-node")[0] == "receiver"
    assert rendezvous_copy("mpich off-node")[0] == "both"
    bad = copy.deepcopy(model)
    bad["libraries"]["openmpi"]["loggp"]["rendezvous_copy"] = "sender"
    with pytest.raises(ModelError, match="rendezvous_copy"):
        validate(bad)
