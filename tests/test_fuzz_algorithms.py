"""Fuzz round on the algorithm-specific options: warm starts, operators, momentum, weights, stopping."""

import warnings

import numpy as np
import pytest
from _problems import CLASSIFIERS, REGRESSORS
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators import (
    IHTClassifier,
    IHTRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)
from sparse_estimators.thresholding import Lq, Reciprocal


def _data(seed=0, n=120, p=25):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[[1, 5, 9]] = [3.0, -2.0, 1.5]
    eta = X @ beta
    y = eta + 0.3 * rng.standard_normal(n)
    y3 = np.digitize(eta + 0.5 * rng.standard_normal(n), [-1.5, 1.5])  # three classes
    return X, y, y3


def _fit(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def _lstsq_on(X, y, support):
    """Least squares with an intercept on the columns ``support`` (numpy's reference)."""
    A = np.c_[X[:, support], np.ones(len(y))]
    sol = np.linalg.lstsq(A, y, rcond=None)[0]
    return sol[:-1], sol[-1]


@pytest.mark.parametrize("thresholding", ["hard", "soft", Lq(2 / 3)])
def test_regularized_warm_refit_stops_at_once(thresholding):
    # a warm start from the model's own solution used to restart the weights at 1 and run the whole schedule
    # again (about 0.7 max_iter = 700 iterations); it now continues from the weights the fit ended with
    X, y, _ = _data()
    model = RegularizedIHTRegressor(k=3, thresholding=thresholding, warm_start=True)
    _fit(model, X, y)
    assert model.n_iter_ > 100  # (the schedule: the cold fit is long)
    coef = model.coef_.copy()
    assert not _fit(model, X, y)
    # (against ~700 for the schedule; soft thresholding shrinks the debiased start again over a few steps)
    assert model.n_iter_ <= 20
    np.testing.assert_array_equal(model.support_, [1, 5, 9])
    ref, ref_b = _lstsq_on(X, y, model.support_)
    np.testing.assert_allclose(model.coef_[model.support_], ref, rtol=1e-6)
    np.testing.assert_allclose(model.intercept_, ref_b, atol=1e-6)
    np.testing.assert_allclose(model.coef_, coef, atol=1e-6)
    assert np.all(model.weights_[model.support_] == 0)  # converged only once the support is unweighted


def test_regularized_classifier_warm_refit_multinomial():
    X, _, y3 = _data(1)
    model = RegularizedIHTClassifier(k=3, warm_start=True)
    _fit(model, X, y3)
    first = model.coef_.copy()
    assert not _fit(model, X, y3)
    assert model.n_iter_ <= 10
    assert model.coef_.shape == (3, X.shape[1])
    # one support shared by the three classes
    rows = np.flatnonzero(np.any(model.coef_ != 0, axis=0))
    np.testing.assert_array_equal(rows, model.support_)
    assert rows.size == 3
    np.testing.assert_allclose(model.coef_, first, atol=1e-6)
    # other classes (coefficients of another shape): a cold start, weights 1, no error
    binary = (y3 == 2).astype(int)
    _fit(model, X, binary)
    assert model.coef_.shape == (1, X.shape[1]) and model.n_iter_ > 100
    _fit(model, X, y3)
    np.testing.assert_allclose(model.coef_, first, atol=1e-6)


def test_regularized_warm_start_on_new_data_and_cold_paths():
    # new data: the continued run still ends at the least-squares fit on the new true support
    X, y, _ = _data(2)
    model = RegularizedIHTRegressor(k=3, warm_start=True)
    _fit(model, X, y)
    rng = np.random.RandomState(3)
    y2 = -2 * X[:, 0] + 2.5 * X[:, 7] + 1.5 * X[:, 11] + 0.3 * rng.standard_normal(len(y))
    assert not _fit(model, X, y2)
    np.testing.assert_array_equal(model.support_, [0, 7, 11])
    ref, _ = _lstsq_on(X, y2, model.support_)
    np.testing.assert_allclose(model.coef_[model.support_], ref, rtol=1e-6)
    # coef_init and warm_start=False start the paper's schedule (weights 1): the same long run as a cold fit
    cold = RegularizedIHTRegressor(k=3).fit(X, y2)
    again = RegularizedIHTRegressor(k=3).fit(X, y2, coef_init=cold.coef_)
    assert again.n_iter_ > 100
    # a different k (different support size) after a warm start: still k features, least squares on them
    model.set_params(k=4)
    _fit(model, X, y2)
    assert model.support_.size == 4
    ref, _ = _lstsq_on(X, y2, model.support_)
    np.testing.assert_allclose(model.coef_[model.support_], ref, rtol=1e-6)


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS)
def test_soft_thresholding_keeps_exactly_k(cls):
    # paper 002: soft thresholding at level k keeps the k entries above the (k+1)-th magnitude (no ties here)
    X, y, y3 = _data(4)
    target = y if cls in REGRESSORS else y3
    for k in (1, 4):
        model = cls(k=k, thresholding="soft", debias=False, splicing=False)
        _fit(model, X, target)
        nonzero = np.flatnonzero(np.any(np.atleast_2d(model.coef_) != 0, axis=0))
        assert nonzero.size == k


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS)
def test_convergence_warning_exactly_when_max_iter_hit(cls):
    X, y, y3 = _data(5)
    target = y if cls in REGRESSORS else y3
    for max_iter in (1, 3):
        model = cls(k=3, max_iter=max_iter, tol=0.0, thresholding=Reciprocal(0.5), debias=False, splicing=False)
        caught = _fit(model, X, target)
        assert model.n_iter_ <= max_iter
        assert len(model.loss_curve_) <= max_iter + 1
        assert bool(caught) == (model.n_iter_ == max_iter)


@pytest.mark.parametrize("cls", [IHTRegressor, IHTClassifier])
def test_hard_iht_objective_never_increases_below_one_over_l(cls):
    # paper 000: with step eta < 1/L the objective of hard IHT is non-increasing
    X, y, y3 = _data(6)
    target = y if cls is IHTRegressor else y3
    model = cls(k=4, step_size=0.9, debias=False, splicing=False)
    _fit(model, X, target)
    curve = np.asarray(model.loss_curve_)
    assert curve.size > 1
    assert np.all(np.diff(curve) <= 1e-12 * np.abs(curve).max())


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS)
@pytest.mark.parametrize("thresholding", ["hard", "soft"])
def test_column_permutation_permutes_coef(cls, thresholding):
    X, y, y3 = _data(7)
    target = y if cls in REGRESSORS else y3
    perm = np.random.RandomState(8).permutation(X.shape[1])
    base = cls(k=4, thresholding=thresholding)
    _fit(base, X, target)
    permuted = cls(k=4, thresholding=thresholding)
    _fit(permuted, X[:, perm], target)
    coef = np.atleast_2d(base.coef_)
    np.testing.assert_allclose(np.atleast_2d(permuted.coef_), coef[:, perm], atol=1e-6 * np.abs(coef).max())
