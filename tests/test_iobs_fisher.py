"""I-OBS's 'fisher' Hessian route (the Gamma loss's default at n < p + 1): the expected Hessian, once per fit,
after a start on its screened block ('screened_fisher')."""

import numpy as np
import pytest

from sparse_estimators import IOBSClassifier, IOBSRegressor, _policy
from sparse_estimators.losses import GammaLoss, PoissonLoss
from sparse_estimators.solvers import _iobs_curvature
from sparse_estimators.solvers._iobs import select_hessian_route
from sparse_estimators.solvers._iobs_curvature import _fisher_hessian, _GLMCache, _GLMCurvature


def _gamma_problem(n, p, seed=0, offset=0.0, shape=8.0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + offset
    truth = np.array([3, 11, 17, 29])
    z = (X[:, truth] - offset) @ np.array([0.5, -0.4, 0.45, -0.5]) + 1.0
    return X, rng.gamma(shape, np.exp(z) / shape), truth


def _expected_hessian(X, w, alpha, fit_intercept=True):
    """``[[X_c^T S X_c / sum(S) + alpha I, 0], [0, 1]]``, ``X_c`` centred at the weighted means, by hand
    (without an intercept: ``X^T S X / sum(S) + alpha I``)."""
    s = w / w.sum()
    if not fit_intercept:
        return X.T @ (s[:, None] * X) + alpha * np.eye(X.shape[1])
    Xc = X - s @ X
    p = X.shape[1]
    H = np.zeros((p + 1, p + 1))
    H[:p, :p] = Xc.T @ (s[:, None] * Xc) + alpha * np.eye(p)
    H[p, p] = 1.0
    return H


def test_auto_route_is_fisher_for_the_gamma_loss_on_wide_data_only():
    rng = np.random.RandomState(0)
    wide, tall = rng.standard_normal((20, 50)), rng.standard_normal((50, 20))
    y = rng.gamma(2.0, 1.0, 20)
    assert select_hessian_route(GammaLoss(wide, y)) == "fisher"
    assert select_hessian_route(GammaLoss(tall, rng.gamma(2.0, 1.0, 50))) == "dense"  # (unchanged)
    assert select_hessian_route(PoissonLoss(wide, y)) == "screened"  # (unchanged)
    assert select_hessian_route(GammaLoss(wide, y), "woodbury") == "woodbury"


def test_expected_hessian_is_the_observed_one_where_y_equals_the_mean():
    """The Gamma loss's pointwise curvature is ``y / mu``: at a point where every ``y_i`` is its mean, the
    observed Hessian (``loss.hessian``) is the expected one, whatever the weights and the l2 term."""
    rng = np.random.RandomState(1)
    X = rng.standard_normal((40, 12)) + 3.0
    W = np.zeros((12, 1))
    W[[2, 5], 0] = [0.4, -0.3]
    w = 0.5 + rng.rand(40)
    mu = np.exp((X - 3.0) @ W[:, 0] + 0.5)
    loss = GammaLoss(X, mu, w, True, 1e-3)
    b = loss.intercept_variable(W, np.array([0.5 - 3.0 * W.sum()]))
    np.testing.assert_allclose(loss.hessian(W, b), _fisher_hessian(loss), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(_fisher_hessian(loss), _expected_hessian(X, w, 1e-3), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shape", [(60, 150), (150, 40)])  # (Woodbury, dense)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_fisher_newton_step_and_correction_are_those_of_the_expected_hessian(shape, fit_intercept):
    """The Newton step and the correction's right-hand side at two iterates: those of the damped expected
    Hessian computed by hand (weights, some zero; an l2 term), and the curvature built at the first iterate
    gives the second's (it is the same matrix: one per fit)."""
    n, p = shape
    X, y, _ = _gamma_problem(n, p, seed=2, offset=2.0)
    w = 0.5 + np.random.RandomState(3).rand(n)
    w[:5] = 0.0
    loss = GammaLoss(X, y, w, fit_intercept, 1e-3)
    damping = 0.05
    H = _expected_hessian(X, w, 1e-3, fit_intercept)
    lam = damping * np.mean(np.diag(H)[:p])
    H[np.diag_indices_from(H)] += lam
    first = None
    for rows, values in (([3, 11], [0.3, -0.2]), ([3, 17, 29], [0.4, 0.3, -0.5])):
        W = np.zeros((p, 1))
        W[rows, 0] = values
        b = loss.initial_intercept() + (0.1 if fit_intercept else 0.0)
        Z = loss.linear_predictor(W, b)
        GW, gb = loss.gradient_from_z(Z, W)
        curvature = _GLMCurvature(loss, "fisher", damping, W, b, Z, _GLMCache(loss))
        assert curvature.algebra == ("woodbury" if n - 5 < p + 1 else "dense")
        first = first or curvature
        theta, g = (np.r_[W[:, 0], b], np.r_[GW[:, 0], gb]) if fit_intercept else (W[:, 0], GW[:, 0])
        exact = np.linalg.solve(H, g)
        for c in (curvature, first):
            dW, db = c.newton(GW, gb)
            np.testing.assert_allclose(dW[:, 0], exact[:p], rtol=1e-7, atol=1e-10)
            if fit_intercept:
                np.testing.assert_allclose(db, exact[p:], rtol=1e-7, atol=1e-10)
            np.testing.assert_allclose(c.correction_rhs(W, b, GW, gb), H @ theta - g, rtol=1e-9, atol=1e-10)


def _count_curvatures(monkeypatch):
    """The routes of the curvatures built, in order (``_GLMCurvature`` counted)."""
    built = []
    original = _GLMCurvature.__init__

    def counting(self, loss, route, *args, **kwargs):
        built.append(route)
        original(self, loss, route, *args, **kwargs)

    monkeypatch.setattr(_iobs_curvature._GLMCurvature, "__init__", counting)
    return built


@pytest.mark.parametrize("sparse", [False, True])
def test_wide_gamma_fit_builds_one_curvature_and_recovers_the_support(sparse, monkeypatch):
    """n < p, without the screened start: 'auto' ('fisher') builds the curvature once per fit, where the
    observed Hessian's route builds one per iteration, and both recover the support."""
    import scipy.sparse as sp

    built = _count_curvatures(monkeypatch)
    monkeypatch.setattr(_policy, "IOBS_FISHER_SCREENED_START", False)
    X, y, truth = _gamma_problem(150, 400, seed=6)
    X = sp.csr_matrix(X) if sparse else X
    for hessian in ("auto", "woodbury"):
        built.clear()
        model = IOBSRegressor(k=4, loss="gamma", hessian=hessian, splicing=False).fit(X, y)
        np.testing.assert_array_equal(model.support_, truth)
        assert model.n_iter_ >= 2
        assert built == (["fisher"] if hessian == "auto" else ["woodbury"] * model.n_iter_)


@pytest.mark.parametrize("sparse", [False, True])
def test_wide_gamma_fit_from_zero_forms_no_kernel_where_the_screened_jump_is_a_fixed_point(sparse, monkeypatch):
    """High signal, n < p, from zero (n = 300 >= IOBS_FISHER_SCREENED_MIN_SAMPLES): the first step and the
    check of its support jump use the screened block of the expected Hessian; the support found is the truth
    and a fixed point, so the fit stops there (2 iterations) at the minimiser on the truth without forming the
    n x n kernel of the full expected Hessian."""
    import scipy.sparse as sp

    assert _policy.IOBS_FISHER_SCREENED_MIN_SAMPLES <= 300
    built = _count_curvatures(monkeypatch)
    X, y, truth = _gamma_problem(300, 600, seed=6)
    loss = GammaLoss(X, y)
    W, _ = loss.refit(truth, np.zeros((600, 1)), loss.initial_intercept())
    model = IOBSRegressor(k=4, loss="gamma", splicing=False).fit(sp.csr_matrix(X) if sparse else X, y)
    assert built == ["screened_fisher", "screened_fisher"]
    assert model.n_iter_ == 2
    np.testing.assert_array_equal(model.support_, truth)
    np.testing.assert_allclose(model.coef_[truth], W[truth, 0], rtol=1e-6)


def test_wide_gamma_fit_forms_the_kernel_once_the_screened_jump_is_no_fixed_point(monkeypatch):
    """Lower signal (shape 1): the first support's minimiser is no fixed point of the screened step, so the fit
    goes on with the full expected Hessian, built once, and still reaches the truth."""
    built = _count_curvatures(monkeypatch)
    X, y, truth = _gamma_problem(300, 600, seed=0, shape=1.0)
    model = IOBSRegressor(k=4, loss="gamma", splicing=False).fit(X, y)
    assert built == ["screened_fisher", "screened_fisher", "fisher"]
    np.testing.assert_array_equal(model.support_, truth)


def test_no_screened_start_below_its_sample_size(monkeypatch):
    """n = 150 < IOBS_FISHER_SCREENED_MIN_SAMPLES: the full expected Hessian from the first step, once per fit
    (the screened start lost held-out deviance there), and the same fit with the policy off."""
    assert _policy.IOBS_FISHER_SCREENED_MIN_SAMPLES > 150
    built = _count_curvatures(monkeypatch)
    X, y, truth = _gamma_problem(150, 400, seed=6)
    model = IOBSRegressor(k=4, loss="gamma", splicing=False).fit(X, y)
    assert built == ["fisher"]
    np.testing.assert_array_equal(model.support_, truth)
    monkeypatch.setattr(_policy, "IOBS_FISHER_SCREENED_START", False)
    np.testing.assert_array_equal(IOBSRegressor(k=4, loss="gamma", splicing=False).fit(X, y).coef_, model.coef_)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_screened_fisher_step_is_the_expected_hessian_solve_on_its_block(fit_intercept):
    """'screened_fisher': with a block covering every row its Newton step is the damped expected Hessian's
    (by hand); with a block of 2 extra rows, the rows outside the block take the diagonal step
    ``g / (diag H + lambda)`` and the block (support, the 2 rows of largest diagonal Newton point, the
    intercept) the solve of the expected Hessian restricted to it."""
    n, p = 60, 150
    X, y, _ = _gamma_problem(n, p, seed=4, offset=1.0)
    w = 0.5 + np.random.RandomState(5).rand(n)
    loss = GammaLoss(X, y, w, fit_intercept, 1e-3)
    damping = 0.05
    H = _expected_hessian(X, w, 1e-3, fit_intercept)
    lam = damping * np.mean(np.diag(H)[:p])
    H[np.diag_indices_from(H)] += lam
    W = np.zeros((p, 1))
    W[[3, 11], 0] = [0.3, -0.2]
    b = loss.initial_intercept() + (0.1 if fit_intercept else 0.0)
    Z = loss.linear_predictor(W, b)
    GW, gb = loss.gradient_from_z(Z, W)
    g = np.r_[GW[:, 0], gb] if fit_intercept else GW[:, 0]
    dW, db = _GLMCurvature(loss, "screened_fisher", damping, W, b, Z, _GLMCache(loss), screen_rows=p).newton(GW, gb)
    exact = np.linalg.solve(H, g)
    np.testing.assert_allclose(dW[:, 0], exact[:p], rtol=1e-7, atol=1e-10)
    if fit_intercept:
        np.testing.assert_allclose(db, exact[p:], rtol=1e-7, atol=1e-10)
    dW, db = _GLMCurvature(loss, "screened_fisher", damping, W, b, Z, _GLMCache(loss), screen_rows=2).newton(GW, gb)
    diagonal = GW[:, 0] / np.diag(H)[:p]
    score = np.abs(W[:, 0] - diagonal)
    score[[3, 11]] = -np.inf
    block = np.sort(np.r_[[3, 11], np.argsort(score)[-2:]])
    idx = np.r_[block, p] if fit_intercept else block
    restricted = np.linalg.solve(H[np.ix_(idx, idx)], g[idx])
    np.testing.assert_allclose(dW[block, 0], restricted[:4], rtol=1e-7, atol=1e-10)
    rest = np.setdiff1d(np.arange(p), block)
    np.testing.assert_allclose(dW[rest, 0], diagonal[rest], rtol=1e-7, atol=1e-12)
    if fit_intercept:
        np.testing.assert_allclose(db, restricted[4:], rtol=1e-7, atol=1e-10)


def test_fisher_route_on_request_at_any_size_and_for_the_gamma_loss_only():
    X, y, truth = _gamma_problem(300, 40, seed=7)
    model = IOBSRegressor(k=4, loss="gamma", hessian="fisher").fit(X, y)
    np.testing.assert_array_equal(model.support_, truth)
    with pytest.raises(ValueError, match="fisher"):
        IOBSRegressor(k=4, loss="poisson", hessian="fisher").fit(X, np.round(y))
    np.testing.assert_array_equal(IOBSRegressor(k=4, loss="gamma", hessian="screened_fisher").fit(X, y).support_,
                                  truth)
    with pytest.raises(ValueError, match="screened_fisher"):
        IOBSRegressor(k=4, loss="poisson", hessian="screened_fisher").fit(X, np.round(y))
    with pytest.raises(ValueError, match="fisher"):
        IOBSRegressor(k=4, hessian="fisher").fit(X, y)
    with pytest.raises(ValueError, match="hessian"):
        IOBSClassifier(k=4, hessian="fisher").fit(X, y > np.median(y))


def test_screened_start_and_full_fisher_curvature_share_one_diagonal():
    """The expected Hessian does not change with the iterate: the screened start's curvatures and the full
    one of a fit (Woodbury algebra at n = 60, p = 150) read one diagonal, formed once per fit, equal to the
    hand-built expected Hessian's (damping excluded)."""
    n, p = 60, 150
    X, y, _ = _gamma_problem(n, p, seed=6)
    w = 0.5 + np.random.RandomState(7).rand(n)
    loss = GammaLoss(X, y, w, True, 1e-3)
    cache = _GLMCache(loss)
    W = np.zeros((p, 1))
    W[[3, 11], 0] = [0.3, -0.2]
    b = loss.initial_intercept()
    Z = loss.linear_predictor(W, b)
    start = _GLMCurvature(loss, "screened_fisher", 0.05, W, b, Z, cache, screen_rows=8)
    again = _GLMCurvature(loss, "screened_fisher", 0.05, 2 * W, b, Z, cache, screen_rows=8)
    full = _GLMCurvature(loss, "fisher", 0.05, W, b, Z, cache)
    assert full.algebra == "woodbury"
    assert start.diag is again.diag is full.diag and start.Hw is full.Hw
    np.testing.assert_allclose(full.diag, np.diag(_expected_hessian(X, w, 1e-3)), rtol=1e-12, atol=1e-15)
