"""A cold one-output least-squares fit with many observations per selection runs the splicing searches alone.

``_policy.SEARCH_FROM_ZERO_MIN_SAMPLES``: ``IHTRegressor`` skips its solver
and the searches start from abess's start (the ``k`` features of largest
marginal gain at zero); elsewhere the solver runs first, as before.
"""

import itertools

import numpy as np
import pytest
from _problems import recording_solver
from sklearn.linear_model import LinearRegression

from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor, _policy
from sparse_estimators.losses import SquaredLoss
from sparse_estimators.solvers import splice


def _problem(n, p=100, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = X[:, [3, 17, 40, 41, 90]] @ np.array([2.0, -1.5, 1.0, 1.2, -1.0]) + 0.5 * rng.standard_normal(n) + 4.0
    return X, y


def _decoy(n=400, seed=1):
    """``y = x0 + x1``; column 2 is a noisy copy of ``y``, so it leads the marginal gains (abess's start)."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 8))
    y = X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(n)
    X[:, 2] = y / y.std() + rng.standard_normal(n)
    return X, y


def _best_subset(X, y, k):
    """Brute force: the support of size k with the smallest least-squares residual (intercept fitted)."""
    Xc, yc = X - X.mean(0), y - y.mean()
    rss = {S: float(np.sum((yc - Xc[:, S] @ np.linalg.lstsq(Xc[:, S], yc, rcond=None)[0]) ** 2))
           for S in itertools.combinations(range(X.shape[1]), k)}
    return np.array(min(rss, key=rss.get))


def test_cold_fit_skips_the_solver():
    """n = 500, p = 100, k = 5 (22 observations per k log(p - k)): no solver, the least-squares fit on the support."""
    X, y = _problem(500)
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        calls = recording_solver(IHTRegressor, mp)
        model = IHTRegressor(k=5).fit(X, y)
    assert calls == [] and model.n_iter_ == 0 and model.loss_curve_.size == 0
    np.testing.assert_array_equal(model.support_, [3, 17, 40, 41, 90])
    reference = LinearRegression().fit(X[:, model.support_], y)
    np.testing.assert_allclose(model.coef_[model.support_], reference.coef_, rtol=1e-10)
    np.testing.assert_allclose(model.intercept_, reference.intercept_, rtol=1e-10)
    assert np.count_nonzero(model.coef_) == 5


def test_the_search_from_zero_leaves_abess_start():
    """From abess's start (the decoy column 2 and one true feature) the search reaches the best subset {0, 1}."""
    X, y = _decoy()
    loss = SquaredLoss(X, y)
    gains = np.abs(X.T @ (y - y.mean())) / np.linalg.norm(X - X.mean(0), axis=0)
    np.testing.assert_array_equal(np.sort(np.argsort(gains)[-2:]), [1, 2])  # (the design: abess's start, the decoy)
    W, b = loss.zeros()
    result = splice(loss, 2, W, b, screening_start="abess")
    np.testing.assert_array_equal(result.support, _best_subset(X, y, 2))
    np.testing.assert_array_equal(result.support, [0, 1])
    model = IHTRegressor(k=2).fit(X, y)  # (400 / (2 log 6) = 112 observations per selection: from zero)
    assert model.n_iter_ == 0
    np.testing.assert_array_equal(model.support_, [0, 1])
    np.testing.assert_allclose(model.coef_[[0, 1]], LinearRegression().fit(X[:, [0, 1]], y).coef_, rtol=1e-10)


def test_the_solver_runs_elsewhere(monkeypatch):
    """Few observations per selection, warm starts, other settings and estimators: the solver first, as before."""
    calls = recording_solver(IHTRegressor, monkeypatch)
    X, y = _problem(500)
    small, y_small = _problem(60)  # (60 / (5 log 95) = 2.6 observations per selection)
    IHTRegressor(k=5).fit(small, y_small)
    assert len(calls) == 1
    for params in ({"always_select": [0]}, {"positive": True}, {"thresholding": "soft"}, {"splicing": False},
                   {"debias": False}, {"loss": "huber"}):
        assert IHTRegressor(k=5, **params).fit(X, y).n_iter_ > 0
    assert len(calls) == 8  # (huber fits twice, see SparseRegressorBase._solve)
    IHTRegressor(k=5).fit(X, np.c_[y, -y])  # (two outputs: not measured)
    IHTRegressor(k=5).fit(X, y, coef_init=np.ones(100))
    warm = IHTRegressor(k=5, warm_start=True).fit(X, y)
    assert len(calls) == 10
    warm.fit(X, y)  # (the second fit starts from the first one's coefficients)
    assert len(calls) == 11 and calls[-1].any()
    monkeypatch.setattr(_policy, "SEARCH_FROM_ZERO_MIN_SAMPLES", np.inf)
    assert IHTRegressor(k=5).fit(X, y).n_iter_ > 0 and len(calls) == 12
    accelerated = recording_solver(AcceleratedIHTRegressor, monkeypatch)
    monkeypatch.setattr(_policy, "SEARCH_FROM_ZERO_MIN_SAMPLES", 0.0)
    AcceleratedIHTRegressor(k=5).fit(X, y)  # (another solver: not measured)
    assert len(accelerated) == 1


def test_gate_counts_observations_per_selection(monkeypatch):
    """The route starts at SEARCH_FROM_ZERO_MIN_SAMPLES observations per k log(p - k), and follows the constant."""
    calls = recording_solver(IHTRegressor, monkeypatch)
    X, y = _problem(500)
    ratio = 500 / (5 * np.log(95))
    monkeypatch.setattr(_policy, "SEARCH_FROM_ZERO_MIN_SAMPLES", ratio * 1.01)
    IHTRegressor(k=5).fit(X, y)
    assert len(calls) == 1
    monkeypatch.setattr(_policy, "SEARCH_FROM_ZERO_MIN_SAMPLES", ratio * 0.99)
    IHTRegressor(k=5).fit(X, y)
    assert len(calls) == 1
