import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commchar.models import _lsq

SIZES = st.sampled_from([0.0, 1.0, 2.0, 4.0, 16.0, 1024.0, 65536.0, 4194304.0])
TIMES = st.floats(1e-3, 1e4, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(SIZES, TIMES), min_size=1, max_size=12), st.booleans())
def test_one_fit_in_floats_is_the_array_solve_to_the_bit(points, nonneg):
    """Steep times (a < 0 unconstrained), decreasing ones (b < 0) and a single size (det 0)
    take every branch of the active set."""
    x = np.array([p[0] for p in points]) / 4194304.0
    y = np.array([p[1] for p in points])
    m = _lsq.moments(x, y, 1.0 / (y * y))
    a, b, _ = _lsq.solve(m, nonneg)
    assert _lsq.solve_one(tuple(float(v) for v in m), nonneg) == (float(a), float(b))


@pytest.mark.parametrize("times, expected", [([1.0, 3.0, 5.0], "a"), ([3.0, 2.0, 1.0], "b")])
def test_a_negative_parameter_is_held_at_zero(times, expected):
    a, b = _lsq.relative_fit(np.array([1.0, 2.0, 3.0]), np.array(times))
    assert (a == 0.0) if expected == "a" else (b == 0.0)
    assert a >= 0.0 and b >= 0.0
