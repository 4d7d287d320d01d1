"""Degenerate Poisson and Gamma data: noiseless Gamma targets (k=None) and Poisson counts with separated zeros."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators import IHTRegressor, IOBSRegressor
from sparse_estimators.losses import GammaLoss, PoissonLoss
from sparse_estimators.model_selection import SparsityIC


# -- k=None on noiseless Gamma data ----------------------------------------------------------------------------
def _noiseless_gamma(seed, n=100, p=10):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    return X, np.exp(0.5 * X[:, 1] - 0.3 * X[:, 3] + 1)  # (exact: no noise)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_k_none_on_noiseless_gamma_data_keeps_the_exact_model(dtype):
    # every model holding the two true features fits to rounding: the estimated dispersion went to 0 and the
    # likelihood ranked those models by their rounding (k_ = 2..7 on these seeds); floored, they tie
    for seed in range(8):
        X, y = _noiseless_gamma(seed)
        model = IHTRegressor(loss="gamma").fit(X.astype(dtype), y.astype(dtype))
        assert model.k_ == 2, seed
        assert set(np.flatnonzero(model.coef_)) == {1, 3}, seed


def test_sparsity_ic_on_noiseless_gamma_data_keeps_the_exact_model():
    for seed in range(8):
        X, y = _noiseless_gamma(seed)
        assert SparsityIC(IHTRegressor(loss="gamma"), k_grid=range(1, 8)).fit(X, y).k_ == 2, seed


def test_gamma_likelihood_of_exact_models_ties():
    X, y = _noiseless_gamma(0)
    loss = GammaLoss(X, y)
    values = []
    for support in ([1, 3], [0, 1, 3], [1, 3, 5, 7]):
        W, b = loss.refit(np.array(support), *loss.zeros())
        assert loss.deviance(W, b) < 1e-12 * loss.deviance(*loss.zeros())  # (exact to rounding)
        values.append(loss.minus_two_log_likelihood(W, b))
    assert values[0] == values[1] == values[2]  # (one value from the floor, whatever the rounding of each fit)
    assert np.isfinite(values[0])


def test_gamma_floored_likelihood_is_the_likelihood_at_that_deviance():
    # the floor's value depends on the model through its deviance alone: above the floor the same formula
    # gives the likelihood itself, so the criterion has no step at the floor
    rng = np.random.RandomState(3)
    X = rng.standard_normal((80, 6))
    y = np.exp(0.4 * X[:, 0] + 0.5) * rng.gamma(5.0, 0.2, 80)
    loss = GammaLoss(X, y)
    W, b = loss.refit(np.array([0, 2]), *loss.zeros())
    half_dev = 0.5 * loss.deviance(W, b)
    assert half_dev > 1e-3 * loss._null_half_deviance()
    assert loss._floored_minus_two_log_likelihood(half_dev) == pytest.approx(loss.minus_two_log_likelihood(W, b),
                                                                           rel=1e-10)


# -- Poisson counts whose zeros are separated ------------------------------------------------------------------
def _counts(seed=0, n=200, p=10):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    return rng, X, rng.poisson(np.exp(0.5 * X[:, 1] + 0.5)).astype(float)


def _zero_category(seed=0, size=8):
    """Feature 4: a category (an indicator) of ``size`` rows whose counts are all 0."""
    rng, X, y = _counts(seed)
    X[:, 4] = 0.0
    X[np.flatnonzero(y == 0)[:size], 4] = 1.0
    return X, y


@pytest.mark.parametrize("Regressor", [IHTRegressor, IOBSRegressor])
def test_poisson_zero_category_warns_and_stays_finite(Regressor):
    X, y = _zero_category()
    with pytest.warns(ConvergenceWarning, match=r"feature\(s\) \[4\] separate zero counts"):
        model = Regressor(loss="poisson", k=2).fit(X, y)
    assert 4 in np.flatnonzero(model.coef_) and np.all(np.isfinite(model.coef_))
    assert model.coef_[4] < -10  # (the diverging direction: the category's means go to 0)
    mu = model.predict(X)
    assert np.all(mu[X[:, 4] == 1] < 1e-8 * y.mean()) and np.all(mu[X[:, 4] == 0] > 1e-3 * y.mean())


def test_poisson_zero_range_of_a_feature_warns():
    # the counts are 0 where x > 1, and the feature max(x - 1, 0) is 0 on every row of positive count
    rng, X, y = _counts(1)
    y[X[:, 4] > 1.0] = 0.0
    X[:, 4] = np.maximum(X[:, 4] - 1.0, 0.0)
    with pytest.warns(ConvergenceWarning, match=r"\[4\]"):
        IHTRegressor(loss="poisson", k=2).fit(X, y)
    with pytest.warns(ConvergenceWarning, match=r"\[4\]"):  # (k=None: the final fit, once)
        IHTRegressor(loss="poisson").fit(X, y)


def test_poisson_separation_by_two_features_names_both():
    # x5 - x4 is 0 on every row of positive count and positive on the rows of zero count
    rng, X, y = _counts(2)
    X[:, 5] = X[:, 4] + np.where(y == 0, rng.uniform(0.5, 1.5, y.size), 0.0)
    loss = PoissonLoss(X, y)
    W, b = loss.refit(np.array([1, 4, 5]), *loss.zeros())
    assert loss.separated_features(W, b).tolist() == [4, 5]
    with pytest.warns(ConvergenceWarning, match=r"\[4, 5\]"):
        IHTRegressor(loss="poisson", k=3, always_select=[4, 5]).fit(X, y)


def test_poisson_without_separation_does_not_warn():
    rng, X, y = _counts(3)
    X_threshold, y_threshold = X.copy(), y.copy()
    y_threshold[X[:, 4] > 1.0] = 0.0  # (zeros beyond a threshold of a linear feature: the MLE exists)
    X_mixed, y_mixed = _zero_category(3, size=8)
    y_mixed[np.flatnonzero(X_mixed[:, 4])[0]] = 1.0  # (one count in the category: the MLE exists)
    weights = np.ones(y.size)
    X_sep, y_sep = _zero_category(3)
    weights[X_sep[:, 4] == 1] = 0.0  # (the category's rows have weight 0: nothing left to separate)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in (2, 4, None):
            IHTRegressor(loss="poisson", k=k).fit(X, y)
            IHTRegressor(loss="poisson", k=k).fit(X_threshold, y_threshold)
            IHTRegressor(loss="poisson", k=k).fit(X_mixed, y_mixed)
            IHTRegressor(loss="poisson", k=k).fit(X_sep, y_sep, sample_weight=weights)
            IHTRegressor(loss="gamma", k=k).fit(X, np.exp(0.3 * X[:, 0]) * rng.gamma(3.0, 1 / 3.0, y.size))
    model = IHTRegressor(loss="poisson", k=2).fit(X_mixed, y_mixed)
    assert 4 not in np.flatnonzero(model.coef_) or model.coef_[4] > -10


def test_separated_features_of_an_ordinary_fit_is_empty():
    _, X, y = _counts(4)
    loss = PoissonLoss(X, y)
    W, b = loss.refit(np.array([1, 2]), *loss.zeros())
    assert loss.separated_features(W, b).size == 0
    assert loss.separated_features(*loss.zeros()).size == 0
