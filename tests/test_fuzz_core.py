"""Fuzz round on the sparse core: scale, dtypes, constraints, weights and degenerate data, against references.

Each expectation comes from outside the code under test: the l2 norms of
rows and groups from ``math.hypot`` (scaled, no overflow or underflow) and
the operators' positive homogeneity ``P(a z) = a P(z)`` at any scale; the
coefficients of ``positive=True`` fits from ``scipy.optimize.nnls`` on the
found support; weight 0 against dropped rows, and float32 against float64
fits of the same data (the documented dtypes, as scikit-learn's linear
models keep float32). The data have a high signal, so that the supports are
unique; coefficients are compared to the solvers' tolerance, never to
rounding.
"""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.model_selection import GridSearchCV, KFold

from sparse_estimators import IHTClassifier
from sparse_estimators.model_selection import SparsityCV
from sparse_estimators.structures import Groups, Rows
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft

OPERATORS = [Hard(), Soft(), Reciprocal(c=0.3), Lq(q=0.5)]
OP_IDS = ["hard", "soft", "rec0.3", "lq0.5"]
#: beyond the squares' range (1e154 and 1e-154 for float64), the entries themselves normal floats
EXTREME_SCALES = [2.0 ** -1000, 1e-300, 1e-170, 1e160, 1e300, 2.0 ** 1000]


def _hypot_rows(Z):
    return np.array([math.hypot(*row) for row in Z])


def _hypot_groups(Z, codes, n_groups):
    return np.array([math.hypot(*Z[codes == g].ravel()) for g in range(n_groups)])


def _top(norms, k):
    """The k largest (ties: the lower index), sorted."""
    return np.sort(np.argsort(-norms, kind="stable")[:k])


# --------------------------------------------------------------------------
# row and group norms at extreme scales (the projections' ranking)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
def test_row_projection_is_homogeneous_at_extreme_scales(op):
    # the rows of a matrix are ranked by their l2 norms: from 1e154 up the squares overflowed to inf and
    # below 1e-154 underflowed to 0, the ranking became ties broken by the row index (4 of 7 rows
    # wrong here) and the soft-type operators returned NaN (inf / inf)
    rng = np.random.RandomState(0)
    Z = rng.standard_normal((30, 3))
    for scale in EXTREME_SCALES:
        out, support = op(scale * Z, 7, return_support=True)
        assert_array_equal(support, _top(_hypot_rows(scale * Z), 7))
        assert np.all(np.isfinite(out))
        assert_allclose(out / scale, op(Z, 7), rtol=1e-12, atol=0)


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
def test_group_projection_is_homogeneous_at_extreme_scales(op):
    rng = np.random.RandomState(1)
    Z = rng.standard_normal((30, 2))
    codes = rng.permutation(np.repeat(np.arange(10), 3))
    structure = Groups(op, codes)
    forced = structure.with_forced([4])  # (the projection with always_select's units, another path)
    for scale in EXTREME_SCALES:
        norms = _hypot_groups(scale * Z, codes, 10)
        assert_allclose(structure.unit_scores(scale * Z), norms, rtol=1e-14, atol=0)
        out, support = structure(scale * Z, 3, return_support=True)
        assert_array_equal(support, np.flatnonzero(np.isin(codes, _top(norms, 3))))
        assert_allclose(out / scale, structure(Z, 3), rtol=1e-12, atol=0)
        others = norms.copy()
        others[4] = -1.0
        _, support = forced(scale * Z, 3, return_support=True)
        assert_array_equal(support, np.flatnonzero(np.isin(codes, np.r_[4, _top(others, 2)])))
        assert_allclose(forced(scale * Z, 3) / scale, forced(Z, 3), rtol=1e-12, atol=0)


def test_row_scores_and_expansion_at_extreme_scales():
    # Rows with forced features ranks by unit_scores; the support expansion of accelerated IHT too
    rng = np.random.RandomState(2)
    G = rng.standard_normal((40, 4))
    rows = Rows(Hard()).with_forced([0])
    mask = np.zeros(40, dtype=bool)
    mask[[3, 9]] = True
    for scale in EXTREME_SCALES:
        norms = _hypot_rows(scale * G)
        assert_allclose(rows.unit_scores(scale * G), norms, rtol=1e-14, atol=0)
        others = norms.copy()
        others[[0, 3, 9]] = -1.0
        expected = mask.copy()
        expected[[0, *_top(others, 5)]] = True
        assert_array_equal(rows.expand(scale * G, mask, 5), expected)
        assert_array_equal(Rows(Hard()).expand(scale * G, mask, 5)[[3, 9]], True)
        free = norms.copy()
        free[[3, 9]] = -1.0
        assert_array_equal(np.flatnonzero(Rows(Hard()).expand(scale * G, mask, 5) & ~mask), _top(free, 5))


def test_row_norms_keep_zero_infinite_and_nan_rows():
    # a zero row stays 0 (not NaN from 0 / 0), an infinite entry gives inf, a NaN row stays NaN (refused)
    Z = np.array([[0.0, 0.0], [1e-200, 0.0], [np.inf, 1.0], [1e200, 1e200], [3.0, 4.0]])
    assert_allclose(Rows(Hard()).unit_scores(Z), [0.0, 1e-200, np.inf, math.hypot(1e200, 1e200), 5.0], rtol=1e-15)
    groups = Groups(Hard(), [0, 0, 1, 1, 2])
    assert_allclose(groups.unit_scores(Z), [1e-200, np.inf, 5.0], rtol=1e-15)
    with pytest.raises(ValueError, match="NaN"):
        Hard()(np.array([[np.nan, 1.0], [1e200, 1e200], [1.0, 1.0]]), 1)


# --------------------------------------------------------------------------
# classifiers with a class missing from a training fold
# --------------------------------------------------------------------------
def test_cv_error_names_the_failed_scoring_not_r2():
    # class 2 only in the first (unshuffled) fold: a probability scorer cannot score that fold's models,
    # scikit-learn's GridSearchCV gives NaN at every k too; the error blamed one-sample folds and R^2
    rng = np.random.RandomState(8)
    X = rng.standard_normal((60, 8))
    y = (X[:, 0] > 0).astype(int)
    y[:3] = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = GridSearchCV(IHTClassifier(), {"k": [1, 2, 3]}, cv=KFold(5), scoring="neg_log_loss").fit(X, y)
        assert np.all(np.isnan(reference.cv_results_["mean_test_score"]))
        search = SparsityCV(IHTClassifier(), k_grid=[1, 2, 3], cv=KFold(5), scoring="neg_log_loss")
        with pytest.raises(ValueError, match="scoring 'neg_log_loss' failed") as info:
            search.fit(X, y)
    assert "R^2" not in str(info.value) and "error_score='raise'" in str(info.value)
    with pytest.raises(ValueError, match="labels"):  # (scikit-learn's own error, as the message says)
        search.set_params(error_score="raise").fit(X, y)
