"""Group fits depend on the partition of the features, not on the labels' names, order or the columns' order.

Non-contiguous groups given in any order: renaming the labels (numbers to strings, in another sorted
order, which renumbers the units the searches iterate over) or permuting the columns with their labels
gives the same model; weights 0 equal dropped rows; with ``k`` the number of groups the fit is weighted
least squares on every column (scikit-learn's ``LinearRegression``). Splicing on, on noisy data where
the group search exchanges groups (one to three exchanges in most of these fits), so that its rankings
and gates are exercised.
"""

import warnings

import numpy as np
import pytest
from _problems import CLASSIFIERS, REGRESSORS
from sklearn.linear_model import LinearRegression


def _data(seed, n=120, p=10, n_outputs=1, classes=False, noise=4.0):
    """Correlated columns in 5 non-contiguous groups (labels 0-4, not sorted), 0 and 3 active (``noise``: weaker)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) @ (np.eye(p) + 0.3 * rng.normal(size=(p, p)))
    groups = np.array([3, 0, 4, 3, 1, 0, 2, 4, 1, 3])[:p]
    beta = rng.normal(size=(p, max(n_outputs, 3))) * np.isin(groups, [0, 3])[:, None]
    if classes:
        return X, np.argmax(X @ beta / noise + rng.gumbel(size=(n, 3)), axis=1), groups
    y = X @ beta[:, :n_outputs] + noise * rng.normal(size=(n, n_outputs))
    return X, (y[:, 0] if n_outputs == 1 else y), groups


def _fit(Est, X, y, groups, k, weights=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (convergence notes of the solvers: not what is tested)
        return Est(k=k, groups=groups, splicing=True).fit(X, y, sample_weight=weights)


def _same(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-7 * np.abs(b).max())


@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("Est", REGRESSORS)
def test_regressor_groups_are_a_partition_whatever_their_labels_and_columns(Est, n_outputs):
    X, y, groups = _data(1, n_outputs=n_outputs)
    weights = np.random.default_rng(1).integers(0, 3, len(X)).astype(float)
    base = _fit(Est, X, y, groups, 2, weights)
    assert np.unique(groups[base.support_]).size <= 2
    names = np.array(["z", "b", "y", "a", "m"])  # (0 -> 'z', ... : the sorted order of the units changes)
    _same(_fit(Est, X, y, names[groups], 2, weights).coef_, base.coef_)
    perm = np.random.default_rng(2).permutation(X.shape[1])
    _same(_fit(Est, X[:, perm], y, groups[perm], 2, weights).coef_, base.coef_[..., perm])
    kept = weights > 0
    _same(_fit(Est, X[kept], y[kept], groups, 2, weights[kept]).coef_, base.coef_)
    every = _fit(Est, X, y, names[groups], 5, weights)
    ols = LinearRegression().fit(X, y, sample_weight=weights)
    _same(every.coef_, ols.coef_)
    _same(every.intercept_, ols.intercept_)


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_classifier_groups_are_a_partition_whatever_their_labels_and_columns(Est):
    X, y, groups = _data(5, classes=True)
    base = _fit(Est, X, y, groups, 2)
    assert np.unique(groups[base.support_]).size <= 2
    names = np.array(["z", "b", "y", "a", "m"])
    _same(_fit(Est, X, y, names[groups], 2).coef_, base.coef_)
    perm = np.random.default_rng(4).permutation(X.shape[1])
    _same(_fit(Est, X[:, perm], y, groups[perm], 2).coef_, base.coef_[:, perm])
