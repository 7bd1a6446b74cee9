import subprocess
import sys

import numpy as np
import pytest
from scipy.special import chdtri, chdtrc

from commchar.models._chi2 import chi2_upper_quantile, chi2_upper_quantiles, chi2_upper_tail

KS = np.concatenate([np.arange(1, 121), [150, 255, 400, 511, 701, 1200]])


@pytest.mark.parametrize("alpha", [0.5, 0.4999, 0.1, 0.05, 0.01, 1e-3, 1e-6, 1e-12])
def test_the_quantile_is_scipys_chdtri(alpha):
    """The levels the regime fit asks for (1 - confidence, confidence in [0.5, 0.999999])."""
    mine = np.array([chi2_upper_quantile(int(k), alpha) for k in KS])
    np.testing.assert_allclose(mine, chdtri(KS, alpha), rtol=1e-13)


@pytest.mark.parametrize("alpha", [0.9, 0.999, 0.999999])
def test_a_lower_tail_quantile_is_as_close_as_the_upper_tail_allows(alpha):
    """1 - alpha is what the tail holds there: it loses the digits that 1 - tail cancels."""
    mine = np.array([chi2_upper_quantile(int(k), alpha) for k in KS])
    np.testing.assert_allclose(mine, chdtri(KS, alpha), rtol=1e-9)


def test_the_tail_is_scipys_chdtrc():
    for k in (1, 2, 3, 4, 7, 30, 31, 400):
        for x in (1e-3, 0.5, 1.0, k / 2.0, float(k), 3.0 * k + 10.0):
            assert chi2_upper_tail(x, k) == pytest.approx(float(chdtrc(k, x)), rel=1e-11, abs=1e-300)
    assert chi2_upper_tail(0.0, 5) == 1.0 and chi2_upper_tail(-1.0, 2) == 1.0


def test_an_array_of_degrees_keeps_its_shape():
    dof = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 40.0]])
    np.testing.assert_allclose(chi2_upper_quantiles(dof, 0.01), chdtri(dof, 0.01), rtol=1e-10)
    assert chi2_upper_quantiles(dof, 0.01).shape == (2, 3)


@pytest.mark.parametrize("k, alpha", [(0, 0.05), (3, 0.0), (3, 1.0)])
def test_out_of_range_is_refused(k, alpha):
    with pytest.raises(ValueError):
        chi2_upper_quantile(k, alpha)


def test_a_regime_fit_with_noise_leaves_scipy_unloaded():
    """The adaptive rule fits regimes between two measuring jobs: scipy.special's import
    (most of 0.2 s) would be wall time of every characterization."""
    code = ("import sys; from commchar.models.regimes import SegmentedHockneyModel\n"
            "n = [1, 2, 4, 8, 16, 32, 64, 128]; t = [1.0 + 0.01 * x for x in n]\n"
            "SegmentedHockneyModel(bootstrap=0).fit(n, t, noise=[0.01] * 8)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
