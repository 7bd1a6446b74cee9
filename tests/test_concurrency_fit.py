"""The node's shared bandwidth from synthetic `mbw` points with known parameters."""

from __future__ import annotations

import numpy as np
import pytest

from commchar.errors import InputError
from commchar.modelfile import ModelFile
from commchar.models import fit_points
from commchar.models.concurrency import ConcurrencyModel
from tests.test_models_coldstart import _loggp_points

SIZES = (8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 1048576)


def _mbw(rng: np.random.Generator, ps, a=0.1, g=8e-5, c=0.05, g_node=2.5e-5, noise=0.01,
         library="lib") -> list[dict]:
    """One slot of k = p // 2 pairs: max(a + g n, k (c + g_node n)), with log-normal noise."""
    pts = []
    for p in ps:
        k = p // 2
        for n in SIZES:
            t = max(a + g * n, k * (c + g_node * n)) * float(np.exp(rng.normal(0, noise)))
            pts.append({"library": library, "op": "mbw", "variant": "", "p": p, "n_bytes": n,
                        "t_us": t, "valid": True, "oversubscribed": False})
    return pts


def test_known_node_bandwidth_and_progress_cost_are_recovered():
    rng = np.random.default_rng(3)
    model = ConcurrencyModel().fit(_mbw(rng, (2, 4, 8, 16)))
    prm = model.params_
    assert prm is not None
    assert prm["B_node"] == pytest.approx(40000.0, rel=0.03)  # 1 / 2.5e-5 us/B: 40 GB/s
    assert prm["c_node"] == pytest.approx(0.05, rel=0.15)
    assert prm["pair"]["G"] == pytest.approx(8e-5, rel=0.03)
    assert prm["pair"]["a"] == pytest.approx(0.1, rel=0.1)
    assert prm["pairs"] == [1, 2, 4, 8] and prm["p_range"] == [2, 16]
    assert prm["rel_rms"] < 0.03
    # the aggregate bandwidth saturates at B_node as pairs are added
    big = 1 << 20
    agg = [k * big / float(model.predict(big, 2 * k)) for k in (1, 2, 4, 8, 16)]
    assert agg == sorted(agg) and agg[-1] == pytest.approx(prm["B_node"], rel=0.01)


def test_pairs_that_never_slow_each_other_leave_the_node_bandwidth_undetermined():
    rng = np.random.default_rng(4)
    model = ConcurrencyModel().fit(_mbw(rng, (2, 4), g_node=1e-7, c=0.0))
    assert model.params_ is None
    assert "at least" in model.notes_[0]


def test_one_pair_only_gives_a_lower_bound_and_no_pair_is_an_error():
    rng = np.random.default_rng(5)
    model = ConcurrencyModel().fit(_mbw(rng, (2,)))
    assert model.params_ is None and "one pair only" in model.notes_[0]
    with pytest.raises(InputError, match="one pair"):
        ConcurrencyModel().fit(_mbw(rng, (4, 8)))


def test_the_fitted_model_file_carries_a_valid_concurrency_section():
    rng = np.random.default_rng(6)
    pts = _mbw(rng, (2, 4, 8)) + _loggp_points(rng)
    for i, pt in enumerate(pts):
        pt.setdefault("valid", True)
        pt.setdefault("oversubscribed", False)
        pt.setdefault("library_version", "1")
        pt.setdefault("run_id", 1)
        pt["point_id"] = i
    doc = fit_points(pts)
    section = doc["libraries"]["lib"]["concurrency"]
    assert section["G_node"] == pytest.approx(2.5e-5, rel=0.03)
    assert "mbw" not in doc["libraries"]["lib"]["operations"]
    model = ModelFile.from_dict(doc)
    assert model.concurrency("lib")["B_node"] == pytest.approx(1 / section["G_node"])
    # a broken section is refused with its path
    doc["libraries"]["lib"]["concurrency"]["G_node"] = 0
    with pytest.raises(Exception, match="concurrency.G_node"):
        ModelFile.from_dict(doc).check_all()


def test_pairs_slower_than_sharing_explains_are_held_to_one_pairs_terms_with_a_note():
    # time-shared cores: every slot at two pairs costs a scheduler quantum, whatever n
    rng = np.random.default_rng(7)
    pts = _mbw(rng, (2,)) + [dict(pt, p=4, t_us=250.0) for pt in _mbw(rng, (2,))]
    prm = ConcurrencyModel().fit(pts).params_
    assert prm is not None
    assert prm["G_node"] <= prm["pair"]["G"] * (1 + 1e-9) and prm["c_node"] <= prm["pair"]["a"] * (1 + 1e-9)
    model = ConcurrencyModel().fit(pts)
    assert any("held to one pair's own" in note for note in model.notes_)
    assert model.params_["rel_rms"] > 0.3  # far from the measured slots, and said so
