"""Accelerated IHT (paper 001, Khanna & Kyrillidis, *IHT dies hard*)."""

import numpy as np
import pytest

from sparse_estimators import AcceleratedIHTClassifier, AcceleratedIHTRegressor, IHTRegressor
from sparse_estimators.losses import SquaredLoss
from sparse_estimators.solvers import accelerated_iht, iht
from sparse_estimators.thresholding import Hard

# Appendix D of the paper (numbers checked in notes §4).
PHI = np.array([[0.3816, -0.2726, 0.0077], [-0.1598, 1.9364, -0.3908]])
B = np.array([0.3870, -0.1514])
X1 = np.array([-1.7338, 0.0, 0.0])
X2 = np.array([1.5415, 0.0, 0.0])


def _residual_norm(loss, x):
    # SquaredLoss is 1/(2n) ||b - Phi x||^2 with n = 2 samples.
    return np.sqrt(2 * loss.n_samples * loss.value(x[:, None], np.zeros(1)))


def test_appendix_d_momentum_can_increase_the_objective():
    """Khanna & Kyrillidis, Appendix D: ||b - Phi x2|| = 0.2224 and the residual at
    v = x2 + tau (x2 - x1) grows for every tau > 0 (0.358 at 0.1, 0.561 at 0.25)."""
    loss = SquaredLoss(PHI, B, fit_intercept=False)
    assert _residual_norm(loss, X1) == pytest.approx(1.1328, abs=1e-4)
    # the paper prints Phi and b to 4 decimals: 0.22250 from those inputs
    assert _residual_norm(loss, X2) == pytest.approx(0.2224, abs=2e-4)
    assert _residual_norm(loss, X2 + 0.1 * (X2 - X1)) == pytest.approx(0.358, abs=1e-3)
    assert _residual_norm(loss, X2 + 0.25 * (X2 - X1)) == pytest.approx(0.561, abs=1e-3)
    taus = np.linspace(0.01, 1.0, 50)
    residuals = [_residual_norm(loss, X2 + t * (X2 - X1)) for t in taus]
    assert np.all(np.diff(residuals) > 0) and residuals[0] > _residual_norm(loss, X2)


@pytest.mark.parametrize("momentum", [0.25, 0.9, 3.0])
def test_restart_keeps_objective_monotone_on_appendix_d(momentum):
    """The restart (our addition) discards the Appendix D momentum step that raises f.

    From the paper's x1, accelerated IHT with step 1/L keeps a non-increasing
    objective whatever the momentum, and ends no worse than plain IHT from the
    same start (which, at k = 1, stops at the local minimum on feature 1).
    """
    loss = SquaredLoss(PHI, B, fit_intercept=False)
    kw = dict(W0=X1[:, None].copy(), b0=np.zeros(1), step_size=1.0, max_iter=500, tol=1e-10)
    result = accelerated_iht(loss, Hard(), 1, momentum=momentum, **kw)
    plain = iht(loss, Hard(), 1, **kw)
    assert np.all(np.diff(result.objective) <= 1e-15)
    assert result.objective[-1] <= plain.objective[-1] + 1e-12


def _compressed_sensing(seed, m=250, n=1000, k_true=20):
    rng = np.random.RandomState(seed)
    A = rng.standard_normal((m, n)) / np.sqrt(m)
    x = np.zeros(n)
    S = rng.choice(n, k_true, replace=False)
    x[S] = rng.standard_normal(k_true)
    return A, A @ x, x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fewer_iterations_than_iht_with_overshot_k(seed):
    """Khanna & Kyrillidis, Sec. 6 (compressed sensing, overshot k): accelerated IHT
    converges in fewer iterations than IHT, both with the paper's step 1/L.

    Measured here (m = 250, n = 1000, k* = 20, k = 40): about 25 % fewer
    iterations; the paper reports > 2x faster wall time at its much larger size.
    """
    A, y, x = _compressed_sensing(seed)
    loss = SquaredLoss(A, y, fit_intercept=False)
    W0, b0 = loss.zeros()
    kw = dict(W0=W0, b0=b0, step_size=1.0, max_iter=5000, tol=1e-7)
    plain = iht(loss, Hard(), 40, **kw)
    acc = accelerated_iht(loss, Hard(), 40, **kw, momentum=0.25)
    assert plain.converged and acc.converged
    assert acc.n_iter < 0.9 * plain.n_iter, (acc.n_iter, plain.n_iter)
    # both reach the same quality of solution
    for r in (plain, acc):
        assert np.linalg.norm(r.coef[:, 0] - x) <= 1e-4 * np.linalg.norm(x)


def test_extrapolated_point_is_not_thresholded():
    """Algorithm 1: u = x_new + tau (x_new - x) may have up to 2k non-zeros.

    Observed through the support expansion: with k = 1 and a support that
    moves, a gradient step from u can keep mass on both old and new features
    before thresholding; here we check the estimator returns exactly k.
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 30))
    y = X[:, 3] * 2 + X[:, 11] - X[:, 20] * 1.5
    model = AcceleratedIHTRegressor(k=3, momentum=0.5).fit(X, y)
    np.testing.assert_array_equal(model.support_, [3, 11, 20])


def test_estimators_match_iht_support_and_take_fewer_iterations():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((300, 200))
    coef = np.zeros(200)
    coef[[5, 50, 77, 120, 199]] = [1.5, -2.0, 1.0, 2.5, -1.2]
    y = X @ coef + 0.5
    # debias=False: the papers' iterations (debiasing estimators jump to the
    # minimiser on a settled support, which makes both take a few iterations)
    kw = dict(k=10, step_size=1.0, tol=1e-8, debias=False, max_iter=5000)
    acc = AcceleratedIHTRegressor(**kw).fit(X, y)
    plain = IHTRegressor(**kw).fit(X, y)
    assert set(np.flatnonzero(coef)) <= set(acc.support_)
    np.testing.assert_allclose(acc.predict(X), y, atol=1e-5)
    assert acc.n_iter_ < plain.n_iter_
    for est in (AcceleratedIHTRegressor, IHTRegressor):  # the refit on the support is exact
        debiased = est(**{**kw, "debias": True}).fit(X, y)
        assert set(np.flatnonzero(coef)) <= set(debiased.support_)
        np.testing.assert_allclose(debiased.predict(X), y, atol=1e-8)


def test_classifier_multiclass_shared_support():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((600, 40))
    scores = np.column_stack([3 * X[:, 1], 3 * X[:, 8] - 3 * X[:, 1], -3 * X[:, 8] + 2 * X[:, 30]])
    y = np.argmax(scores, axis=1)
    model = AcceleratedIHTClassifier(k=3).fit(X, y)
    np.testing.assert_array_equal(model.support_, [1, 8, 30])
    assert model.coef_.shape == (3, 40)
    assert np.count_nonzero(np.any(model.coef_ != 0, axis=0)) == 3


@pytest.mark.parametrize("momentum", [-0.1, "a", np.inf])
def test_bad_momentum(momentum):
    with pytest.raises(ValueError, match="momentum"):
        AcceleratedIHTRegressor(momentum=momentum).fit(np.eye(5), np.arange(5.0))
