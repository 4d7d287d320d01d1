"""The group search's least-squares candidate refits from a lazy Gram block (losses/_squared_units.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sparse_estimators import IHTRegressor
from sparse_estimators.losses import SquaredLoss
from sparse_estimators.losses._squared import GramSquaredLoss
from sparse_estimators.losses._squared_units import UnitGramCandidates, unit_gram_candidates
from sparse_estimators.solvers import _splice_groups


def _problem(seed, n=60, p=30, m=1, weights=False, fit_intercept=True):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + 2.0  # (not centred: the offsets matter)
    Y = X[:, :4] @ rng.standard_normal((4, m)) + rng.standard_normal((n, m))
    sw = rng.uniform(0.2, 3.0, n) if weights else None
    return SquaredLoss(X, Y if m > 1 else Y[:, 0], sample_weight=sw, fit_intercept=fit_intercept)


@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("m", [1, 2])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_refits_agree_with_the_columns(weights, m, fit_intercept):
    # the normal equations on the lazily formed Gram block give the least-squares refits of
    # SquaredLoss.refit_candidates (explicit residuals) on supports of several sizes, across calls
    loss = _problem(0, m=m, weights=weights, fit_intercept=fit_intercept)
    W, b = loss.zeros()
    gram = UnitGramCandidates(loss)
    for supports in ([np.array([0, 1, 2]), np.array([0, 5, 6, 7]), np.array([9])],
                     [np.array([1, 2, 20, 21, 22]), np.array([3, 4])]):
        mine = gram.refit_candidates(supports, W, b)
        theirs = loss.refit_candidates(supports, W, b)
        for support, (W_a, _, f_a, Z_a), (W_b, _, f_b, Z_b) in zip(supports, mine, theirs, strict=True):
            assert Z_a is None
            np.testing.assert_allclose(W_a, W_b, rtol=1e-9, atol=1e-12)
            assert f_a == pytest.approx(f_b, rel=1e-10)
            np.testing.assert_allclose(gram.linear_predictor(W_a, support), Z_b, rtol=1e-9, atol=1e-10)
    # each column was copied once: the second call's supports overlap the first's
    assert gram._n_known == len({0, 1, 2, 5, 6, 7, 9, 20, 21, 22, 3, 4})


def test_collinear_or_explained_candidates_are_left_to_the_columns():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((40, 10))
    X[:, 3] = X[:, 2]  # a duplicated column: the normal equations are singular
    y = X[:, 0] - X[:, 1]  # explained exactly by features 0 and 1
    loss = SquaredLoss(X, y)
    W, b = loss.zeros()
    gram = UnitGramCandidates(loss)
    assert gram.refit_candidates([np.array([2, 3])], W, b) is None
    assert gram.refit_candidates([np.array([0, 1, 4])], W, b) is None  # (value below EXPLAINED_SHARE)
    assert gram.refit_candidates([np.array([0, 4])], W, b) is not None


def test_applies_to_dense_least_squares_only():
    rng = np.random.RandomState(2)
    X, y = rng.standard_normal((30, 8)), rng.standard_normal(30)
    assert isinstance(unit_gram_candidates(SquaredLoss(X, y)), UnitGramCandidates)
    assert unit_gram_candidates(SquaredLoss(sp.csr_matrix(X), y)) is None
    assert unit_gram_candidates(GramSquaredLoss(X, y)) is None


@pytest.mark.parametrize("seed", range(4))
def test_group_fits_equal_those_refitted_on_the_columns(seed, monkeypatch):
    # the group search with candidates from the Gram block picks the same groups as with
    # SquaredLoss.refit_candidates, and the final refit on them gives the same coefficients
    rng = np.random.RandomState(seed)
    sizes = rng.randint(1, 7, 40)
    labels = np.repeat(np.arange(sizes.size), sizes)
    X = rng.standard_normal((120, labels.size))
    X[:, 1:] += 0.5 * X[:, :-1]  # (correlated neighbours: the search has exchanges to make)
    beta = np.where(np.isin(labels, rng.choice(sizes.size, 4, replace=False)), rng.standard_normal(labels.size), 0.0)
    y = X @ beta + 1.5 * rng.standard_normal(120)
    with_gram = IHTRegressor(k=4, groups=labels).fit(X, y)
    monkeypatch.setattr(_splice_groups, "unit_gram_candidates", lambda loss: None)
    on_columns = IHTRegressor(k=4, groups=labels).fit(X, y)
    np.testing.assert_array_equal(with_gram.groups_support_, on_columns.groups_support_)
    np.testing.assert_allclose(with_gram.coef_, on_columns.coef_, rtol=1e-12, atol=1e-14)
