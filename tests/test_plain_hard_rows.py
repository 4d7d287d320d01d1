"""IHT's plain projection of rows (``solvers._base._hard_rows``) against the ``Hard`` operator it stands for."""

import numpy as np
import pytest

from sparse_estimators.solvers._base import _hard_rows
from sparse_estimators.thresholding import Hard


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("k", [1, 4, 9, 12])
def test_hard_rows_is_hard_thresholding(m, order, k):
    rng = np.random.default_rng(7 * m + k)
    V = np.asarray(rng.standard_normal((9, m)), order=order)
    V[2] = V[5]  # (a tie in magnitude: the same rows must win)
    V[6] = 0.0
    out, support = _hard_rows(V, k)
    ref, ref_support = Hard()(V, k, return_support=True)
    np.testing.assert_array_equal(support, ref_support)
    np.testing.assert_array_equal(out, ref)
    assert out.dtype == np.float64 and out.shape == V.shape
    # the kept rows are the k largest norms, unchanged; the others are zero
    kept = np.zeros(9, bool)
    kept[support] = True
    assert kept.sum() == min(k, 9)
    np.testing.assert_array_equal(out[kept], V[kept])
    assert not out[~kept].any()
    norms = np.linalg.norm(V, axis=1)
    if k < 9:
        assert norms[kept].min() >= norms[~kept].max()
