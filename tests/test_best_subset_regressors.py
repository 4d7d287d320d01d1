"""Best-subset optimality of the regressors on small problems, against every support refitted independently.

Groups of one feature each are the problem without groups: ``k`` groups are
``k`` features. Before the estimators solved them as such, the groups'
exchange search (``solvers/_splice_groups.py``) ran instead, with other
rules than the features' search: no second search with abess's rules (which
accepts the largest exchange that passes abess's small threshold), a lower
gate (its price for one feature, the chi-squared quantile at ``1 - 1/G``, is
about 0.6 of ``2 log p``) and, on a cold fit, one start only. On the design
below it stopped at a support whose residual sum of squares is 1.5 times the
best one's, which the fit without groups finds.
"""

import functools
import itertools
import warnings

import numpy as np
import pytest
from _problems import CLASSIFIERS, REGRESSORS
from numpy.testing import assert_allclose
from sklearn.linear_model import LinearRegression

from sparse_estimators import IHTRegressor
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _ar1_problem(seed, n=100, p=10, k=3, rho=0.7):
    """AR(1) features (correlation ``rho^|i - j|``), ``k`` true ones of magnitude 0.5 to 1, unit noise."""
    rng = np.random.RandomState(seed)
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    beta, truth = np.zeros(p), rng.choice(p, k, replace=False)
    beta[truth] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 1.0, k)
    return X, X @ beta + rng.standard_normal(n)


def _rss(X, y):
    model = LinearRegression().fit(X, y)
    return float(((y - model.predict(X)) ** 2).sum()), model


def test_groups_of_one_feature_reach_the_best_support():
    # before: the groups' search stopped at (0, 3, 5), RSS 92.98; the best of the 120 supports is (0, 4, 6), 61.61
    X, y = _ar1_problem(192)
    values = {S: _rss(X[:, list(S)], y)[0] for S in itertools.combinations(range(10), 3)}
    best = min(values, key=values.get)
    assert sorted(values.values())[1] > 1.2 * values[best]  # a clear optimum
    labels = np.array(list("abcdefghij"))
    model = IHTRegressor(k=3, groups=labels).fit(X, y)
    assert tuple(model.support_) == best
    assert list(model.groups_support_) == list(labels[list(best)])
    reference = _rss(X[:, list(best)], y)[1]
    assert_allclose(model.coef_[list(best)], reference.coef_, rtol=1e-6)
    assert_allclose(model.intercept_, reference.intercept_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("Est", REGRESSORS + CLASSIFIERS + [IHTCoxPHSurvivalAnalysis])
def test_groups_of_one_feature_fit_as_without_groups(Est):
    # the same problem, solved the same way: the same coefficients (labels in another order than the features,
    # one group forced by its label)
    X, y = _ar1_problem(192)
    if Est in CLASSIFIERS:
        y = (y > np.median(y)).astype(int)
    elif Est is IHTCoxPHSurvivalAnalysis:
        time = np.exp(-y / 2)
        y = np.empty(time.size, dtype=[("event", bool), ("time", float)])
        y["event"], y["time"] = np.arange(time.size) % 4 > 0, time
    labels = 100 - 7 * np.arange(10)
    plain = Est(k=3, always_select=[2]).fit(X, y)
    grouped = Est(k=3, groups=labels, always_select=[labels[2]]).fit(X, y)
    assert_allclose(grouped.coef_, plain.coef_, rtol=1e-10, atol=1e-14)
    assert sorted(grouped.groups_support_) == sorted(labels[plain.support_])


def _constant_forced_design(seed):
    """Four true features (0 to 3); 6 to 8 stand in for 0 to 2 (correlated neighbours); column 13 is constant."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((120, 14))
    X[:, 13] = 2.0
    X[:, 6:9] = X[:, :3] + 0.5 * rng.standard_normal((120, 3))
    y = X[:, :4] @ np.array([2.0, 1.5, 1.5, 1.0]) + rng.standard_normal(120)
    return X, y


@functools.lru_cache
def _subset_losses(seed):
    """Half the mean squared residual of scikit-learn's least squares on every 4 of the 13 non-constant columns."""
    X, y = _constant_forced_design(seed)
    return {S: 0.5 * np.mean((y - LinearRegression().fit(X[:, S], y).predict(X[:, S])) ** 2)
            for S in itertools.combinations(range(13), 4)}


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("Estimator", REGRESSORS)
def test_forced_constant_column_keeps_the_search(Estimator, seed):
    """``always_select`` of a constant column (coefficient 0 under an intercept): the other k - 1 are the best subset.

    The forced column's zero coefficient left the support one short of ``k``,
    and the splicing search returned without a round: the IHT solvers ended
    where they stopped (on 5 of these 12 designs, half mean squared residual
    0.2 to 1.4 above the best subset's). Reference: scikit-learn's least
    squares on every subset of four of the other 13 columns.
    """
    X, y = _constant_forced_design(seed)
    losses = _subset_losses(seed)
    best = min(losses, key=losses.get)
    assert sorted(losses.values())[1] - losses[best] > 1e-3  # (a unique best subset)
    model = Estimator(k=5, always_select=[13]).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(model.coef_), best)
    assert_allclose(0.5 * np.mean((y - model.predict(X)) ** 2), losses[best], rtol=1e-8)
