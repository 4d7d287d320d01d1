"""I-OBS's Poisson and Gamma fits: the support jump after a cold start's first iteration, the dense Hessian from a
centred copy of X."""

import numpy as np
import pytest
import scipy.sparse as sp

from sparse_estimators import IOBSClassifier, IOBSRegressor, _policy
from sparse_estimators.losses import GammaLoss, LogisticLoss, PoissonLoss
from sparse_estimators.solvers import iobs
from sparse_estimators.solvers._iobs_curvature import _GLMCache, _GLMCurvature
from sparse_estimators.thresholding import Hard


def _problem(family, n, p, seed=0, offset=0.0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + offset
    truth = np.array([3, 11, 17, 29])
    z = (X[:, truth] - offset) @ np.array([0.6, -0.5, 0.55, -0.6])
    y = rng.poisson(np.exp(z + 1.0)).astype(float) if family == "poisson" else rng.gamma(8.0, np.exp(z) / 8.0)
    return X, y, truth


def _loss(family, X, y, w=None, fit_intercept=True, alpha=0.0):
    return (PoissonLoss if family == "poisson" else GammaLoss)(X, y, w, fit_intercept, alpha)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
@pytest.mark.parametrize("shape", [(200, 40), (120, 300)])  # (dense / screened, fisher / screened)
def test_cold_start_jumps_after_the_first_iteration(family, shape, monkeypatch):
    """High signal from zero: one iteration fewer than when the jump waited for a second iteration to keep the
    support, at the same minimiser on the truth. At n = 200, p = 40 the first Newton point selects the truth:
    2 iterations (the jump, then the fixed-point check). At n = 120, p = 300 it does not: the check after the
    jump leaves that support, and the fit goes on to the truth."""
    monkeypatch.setattr(_policy, "IOBS_FISHER_SCREENED_START", False)  # (the fisher route's own steps)
    X, y, truth = _problem(family, *shape, seed=1)
    model = IOBSRegressor(k=4, loss=family, splicing=False).fit(X, y)
    np.testing.assert_array_equal(model.support_, truth)
    if shape[0] > shape[1]:
        assert model.n_iter_ == 2
    loss = _loss(family, X, y)
    W, b = loss.refit(truth, np.zeros((shape[1], 1)), loss.initial_intercept())
    np.testing.assert_allclose(model.coef_[truth], W[truth, 0], rtol=1e-6)
    # the same support and minimiser as the jump after a kept support (the policy switched off)
    try:
        _policy.IOBS_GLM_REFIT_FIRST = False
        before = IOBSRegressor(k=4, loss=family, splicing=False).fit(X, y)
    finally:
        _policy.IOBS_GLM_REFIT_FIRST = True
    assert before.n_iter_ == model.n_iter_ + 1
    np.testing.assert_array_equal(before.support_, truth)
    np.testing.assert_allclose(before.coef_, model.coef_, rtol=1e-6, atol=1e-9)


def test_refit_first_only_from_a_cold_start():
    """A warm start's support is meaningful: ``refit_first`` leaves its iterations as they were."""
    X, y, truth = _problem("poisson", 200, 40, seed=2)
    loss = _loss("poisson", X, y)
    W0 = np.zeros((40, 1))
    W0[[3, 5, 17, 29], 0] = 0.3
    runs = [iobs(loss, Hard(), 4, W0=W0, b0=loss.initial_intercept(), support_refit=1, refit_first=flag)
            for flag in (False, True)]
    assert runs[0].n_iter == runs[1].n_iter
    np.testing.assert_array_equal(runs[0].coef, runs[1].coef)
    cold = [iobs(loss, Hard(), 4, W0=np.zeros((40, 1)), b0=loss.initial_intercept(), support_refit=1,
                 refit_first=flag) for flag in (False, True)]
    assert cold[1].n_iter == cold[0].n_iter - 1 and cold[1].refitted
    np.testing.assert_array_equal(np.flatnonzero(cold[1].coef[:, 0]), truth)


def test_refit_first_a_support_that_is_no_fixed_point_is_left(monkeypatch):
    """A first support that the Newton point at its minimiser leaves (Gamma, n = 120, p = 300, the 'fisher'
    route without its screened start): the check after the jump goes on from the minimiser, to the fixed point
    the iteration without the early jump reaches, one iteration sooner."""
    monkeypatch.setattr(_policy, "IOBS_FISHER_SCREENED_START", False)
    X, y, truth = _problem("gamma", 120, 300, seed=1)
    loss = _loss("gamma", X, y)

    def run(refit_first, max_iter=100):
        return iobs(loss, Hard(), 4, W0=np.zeros((300, 1)), b0=loss.initial_intercept(), support_refit=1,
                    refit_first=refit_first, max_iter=max_iter)

    first = np.flatnonzero(run(True, max_iter=1).coef[:, 0])
    assert not np.array_equal(first, truth)
    result, reference = run(True), run(False)
    assert result.converged and result.refitted and reference.refitted
    np.testing.assert_array_equal(np.flatnonzero(result.coef[:, 0]), truth)
    np.testing.assert_array_equal(np.flatnonzero(reference.coef[:, 0]), truth)
    assert result.n_iter == reference.n_iter - 1
    np.testing.assert_allclose(result.coef, reference.coef, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dense_hessian_from_the_centred_copy(family, fit_intercept):
    """The dense route's Hessian at the iterate (one product of the centred copy) against ``loss.hessian``
    (weighted_gram's blocks): sample weights with a zero, a constant column (0 rows), the l2 term."""
    X, y, _ = _problem(family, 90, 30, seed=5, offset=2.0)
    X[:, 6] = 0.1  # (constant: its rows and columns of the Hessian are exactly 0 with an intercept)
    w = 0.5 + np.random.RandomState(6).rand(90)
    w[4] = 0.0
    kept = X.copy()
    loss = _loss(family, X, y, w, fit_intercept, alpha=1e-2)
    W = np.zeros((30, 1))
    W[[3, 11], 0] = [0.2, -0.1]
    b = loss.initial_intercept()
    Z = loss.linear_predictor(W, b)
    cache = _GLMCache(loss)
    assert cache.centred_columns() is not None
    curvature = _GLMCurvature(loss, "dense", 0.05, W, b, Z, cache)
    H = loss.hessian(W, b)
    expected = H + curvature.lam * np.eye(H.shape[0])
    np.testing.assert_allclose(curvature.H, expected, rtol=1e-10, atol=1e-14)
    if fit_intercept:
        assert np.all(curvature.H[6, :6] == 0.0) and np.all(curvature.H[:6, 6] == 0.0)
    np.testing.assert_array_equal(X, kept)  # (the copy is the fit's own)


def test_centred_copy_only_for_small_dense_log_link_fits(monkeypatch):
    X, y, _ = _problem("poisson", 60, 30, seed=7)
    assert _GLMCache(PoissonLoss(sp.csr_matrix(X), y)).centred_columns() is None  # (never densified)
    assert _GLMCache(LogisticLoss(X, y > 1)).centred_columns() is None  # (classifiers: loss.hessian as before)
    monkeypatch.setattr(_policy, "IOBS_CENTRED_COPY_MAX", 60 * 30 - 1)
    assert _GLMCache(PoissonLoss(X, y)).centred_columns() is None
    monkeypatch.setattr(_policy, "IOBS_CENTRED_COPY_MAX", 60 * 30)
    assert _GLMCache(PoissonLoss(X, y)).centred_columns() is not None


def test_classifier_keeps_its_iterations():
    """IOBSClassifier (not targeted) waits for a kept support as before: its jump needs two iterations."""
    rng = np.random.RandomState(8)
    X = rng.standard_normal((200, 30))
    y = (X[:, 2] - X[:, 9] + 0.3 * rng.standard_normal(200) > 0).astype(int)
    model = IOBSClassifier(k=2, splicing=False).fit(X, y)
    np.testing.assert_array_equal(model.support_, [2, 9])
    assert model.n_iter_ >= 3
