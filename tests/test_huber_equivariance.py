"""Huber regression: fits of ``c y`` are ``c`` times those of ``y``; ``k=None`` on noiseless data.

Fixed ``k``: the refits' stopping rules counted ``1 + |f|`` and abess's
exchange threshold ``0.01 k log(p) log(log N) / N`` in absolute units, while
Huber's values scale with ``y``'s square: on ``y / 16`` the candidates'
refits stopped early and the search accepted exchanges the fit of ``y`` did
not. Both are now counted in the loss's unit, ``scale ** 2``. ``k=None``:
on a noiseless ``y`` the chosen level's residual scale is one of rounding,
and the criterion judged at it ranked exact models by their rounding. Every
check is an identity of the data (a factor on ``y``) or of the model (its
true features), never a value copied from the package.
"""

import warnings

import numpy as np
import pytest
from _problems import REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal

from sparse_estimators import IHTRegressor
from sparse_estimators.losses import HuberLoss
from sparse_estimators.losses._robust import huber_rho
from sparse_estimators.model_selection import SparsityCV


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _outlier_data(seed, n=100, p=30):
    """Neighbouring columns correlated (0.5), 3 weak true features, noise sd 1, 10 % of rows shifted by 20 to 40."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[:, 1:] = 0.5 * X[:, :-1] + np.sqrt(0.75) * X[:, 1:]
    beta = np.zeros(p)
    beta[[2, 9, 17]] = [0.5, -0.4, 0.3]
    y = X @ beta + 1.0 + rng.standard_normal(n)
    y[rng.choice(n, n // 10, replace=False)] += rng.uniform(20.0, 40.0, n // 10)
    return X, y


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("seed, k", [(2, 3), (5, 5), (8, 5), (11, 5)])
def test_huber_fit_of_a_power_of_two_times_y_is_that_times_the_fit(Est, seed, k):
    # every operation of the fit is exact under a power of two: the same support, coefficients to rounding
    # (before: other supports at 2**-4 on every seed here, and at 2**4 and 2**10 on seed 8)
    X, y = _outlier_data(seed)
    reference = Est(k=k, loss="huber").fit(X, y)
    for factor in (2.0 ** -4, 2.0 ** 4, 2.0 ** 10):
        model = Est(k=k, loss="huber").fit(X, factor * y)
        assert_array_equal(model.support_, reference.support_, err_msg=f"factor {factor}")
        assert_allclose(model.coef_ / factor, reference.coef_, rtol=1e-12, atol=0, err_msg=f"factor {factor}")
        assert_allclose(model.intercept_ / factor, reference.intercept_, rtol=1e-12)


@pytest.mark.parametrize("Est", REGRESSORS)
def test_huber_positive_fit_of_a_power_of_two_times_y_is_that_times_the_fit(Est):
    # positive=True refits by L-BFGS-B, whose gradient tolerance is absolute: now in the loss's units
    # (before: the same supports, coefficients 1e-9 to 1e-6 apart)
    for seed in (2, 5):
        X, y = _outlier_data(seed)
        reference = Est(k=4, loss="huber", positive=True).fit(X, y)
        for factor in (2.0 ** -4, 2.0 ** 10):
            model = Est(k=4, loss="huber", positive=True).fit(X, factor * y)
            assert_array_equal(model.support_, reference.support_)
            assert_allclose(model.coef_ / factor, reference.coef_, rtol=1e-12, atol=0)


@pytest.mark.parametrize("Est", REGRESSORS)
def test_huber_fit_of_ten_times_y_is_ten_times_the_fit(Est):
    # a factor that rounds: the same support, the coefficients to the refit's precision
    for seed, k in ((5, 5), (8, 5)):
        X, y = _outlier_data(seed)
        reference = Est(k=k, loss="huber").fit(X, y)
        model = Est(k=k, loss="huber").fit(X, 10.0 * y)
        assert_array_equal(model.support_, reference.support_)
        assert_allclose(model.coef_ / 10.0, reference.coef_, rtol=1e-8, atol=0)


def test_huber_sparsity_cv_scores_y_and_y_over_16_alike():
    # each fold's fixed-k fits are equivariant, and D^2 is scale-free: the same scores and level
    X, y = _outlier_data(8)
    reference = SparsityCV(IHTRegressor(loss="huber"), k_grid=range(1, 7)).fit(X, y)
    search = SparsityCV(IHTRegressor(loss="huber"), k_grid=range(1, 7)).fit(X, y / 16.0)
    assert_allclose(search.cv_results_["mean_test_score"], reference.cv_results_["mean_test_score"], rtol=1e-10)
    assert search.k_ == reference.k_
    assert_array_equal(search.best_estimator_.support_, reference.best_estimator_.support_)


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_huber_k_none_on_noiseless_data_keeps_the_exact_model(Est, dtype):
    # every model holding the true features fits to rounding; judged at the rounding's residual scale they
    # were ranked by their rounding (before: k_ = 2, 2, 2, 3, 2, 3, 2, 2); at the floor they tie and the penalty
    # picks the smallest
    for seed in range(8):
        rng = np.random.RandomState(seed)
        X = rng.standard_normal((100, 10))
        y = 2 * X[:, 1] - X[:, 3] + 1
        model = Est(loss="huber").fit(X.astype(dtype), y.astype(dtype))
        assert model.k_ == 2, seed
        assert_array_equal(model.support_, [1, 3], err_msg=str(seed))


def test_huber_criterion_is_the_quasi_likelihood_above_the_floor():
    # with noise the floor never binds: 2 N mean(rho(r)) / scale^2 at the loss's own scale
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 5))
    y = X[:, 0] + 0.3 * rng.standard_normal(80)
    y[:5] += 10.0
    loss = HuberLoss(X, y)
    W, b = loss.refit(np.array([0, 2]), *loss.zeros())
    judge = loss.with_residual_scale(W, b)
    assert judge.scale > judge.criterion_scale_floor()
    r = y - X @ W[:, 0] - judge.intercept(W, b)[0]
    expected = 2 * 80 * np.mean(huber_rho(np.abs(r), judge.epsilon * judge.scale)) / judge.scale ** 2
    assert judge.quasi_minus_two_log_likelihood(W, b) == pytest.approx(expected, rel=1e-10)
