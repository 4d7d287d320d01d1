"""I-OBS's screened Hessian route (the Poisson loss's default): block-diagonal Newton steps."""

import numpy as np
import pytest

from sparse_estimators import IOBSClassifier, IOBSRegressor
from sparse_estimators.losses import GammaLoss, LogisticLoss, MultinomialLoss, PoissonLoss, SquaredLoss
from sparse_estimators.solvers._iobs import select_hessian_route
from sparse_estimators.solvers._iobs_curvature import _GLMCache, _GLMCurvature
from sparse_estimators.survival import IOBSCoxPHSurvivalAnalysis


def _count_problem(family, n, p, seed=0, offset=0.0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p)) + offset
    truth = np.array([3, 11, 17, 29])
    z = (X[:, truth] - offset) @ np.array([0.5, -0.4, 0.45, -0.5])
    if family == "poisson":
        y = rng.poisson(np.exp(z + 1.0))
    else:
        y = rng.gamma(8.0, np.exp(z) / 8.0)
    return X, y, truth


def _loss(family, X, y, w=None, alpha=0.0):
    return (PoissonLoss if family == "poisson" else GammaLoss)(X, y, w, True, alpha)


def test_auto_route_is_screened_for_the_poisson_loss_only():
    rng = np.random.RandomState(0)
    wide, tall = rng.standard_normal((20, 50)), rng.standard_normal((50, 20))
    y = rng.poisson(1.0, 20) + 1.0
    assert select_hessian_route(PoissonLoss(wide, y)) == "screened"
    assert select_hessian_route(GammaLoss(wide, y)) == "fisher"  # (not screened: lost F1 on inverse-link data)
    assert select_hessian_route(PoissonLoss(tall, rng.poisson(1.0, 50))) == "screened"  # (at any n since s11)
    assert select_hessian_route(LogisticLoss(wide, y > 1)) == "woodbury"  # (unchanged)
    assert select_hessian_route(PoissonLoss(wide, y), "woodbury") == "woodbury"


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_screened_step_is_the_block_diagonal_newton_step(family):
    """Rows C (the current ones and the ``screen_rows`` of largest diagonal Newton point) and
    the intercept: the damped Newton system on C solved exactly; the others: ``g_j / (H_jj + lambda)``.
    Checked against the dense Hessian (``loss.hessian``) with weights and an l2 term."""
    n, p, screen = 60, 40, 6
    X, y, _ = _count_problem(family, n, p, seed=1, offset=2.0)
    w = 0.5 + np.random.RandomState(2).rand(n)
    loss = _loss(family, X, y, w, alpha=1e-3)
    W = np.zeros((p, 1))
    W[[3, 11], 0] = [0.3, -0.2]
    b = loss.initial_intercept()
    Z = loss.linear_predictor(W, b)
    GW, gb = loss.gradient_from_z(Z, W)
    damping = 0.05
    curvature = _GLMCurvature(loss, "screened", damping, W, b, Z, _GLMCache(loss), screen_rows=screen)
    dW, db = curvature.newton(GW, gb)

    H = loss.hessian(W, b)  # (p + 1) x (p + 1), intercept last
    lam = damping * np.mean(np.diag(H)[:p])
    diagonal = GW[:, 0] / (np.diag(H)[:p] + lam)
    score = np.abs(W[:, 0] - diagonal)
    score[[3, 11]] = -np.inf
    rows = np.sort(np.r_[[3, 11], np.argsort(score)[-screen:]])
    idx = np.r_[rows, p]
    block = H[np.ix_(idx, idx)] + lam * np.eye(idx.size)
    exact = np.linalg.solve(block, np.r_[GW[rows, 0], gb])
    expected = diagonal.copy()
    expected[rows] = exact[:-1]
    np.testing.assert_allclose(dW[:, 0], expected, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(db, exact[-1:], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("kind", ["poisson", "poisson no intercept", "multinomial"])
def test_restricted_hessian_is_the_dense_hessian_on_the_rows(kind):
    """The damped block on rows Q (and the intercepts), assembled in one array (no np.block), against
    ``loss.hessian`` restricted to Q's variables: the output-major layout of several outputs, the l2 term on
    the coefficients only, the damping on every variable."""
    n, p = 60, 20
    X, y, _ = _count_problem("poisson", n, 40, seed=4, offset=1.5)
    X = X[:, :p]
    rng = np.random.RandomState(5)
    w = 0.5 + rng.rand(n)
    if kind == "multinomial":
        loss, m = MultinomialLoss(X, rng.randint(0, 3, n), n_classes=3, sample_weight=w, alpha=1e-2), 3
    else:
        loss, m = PoissonLoss(X, y, w, kind == "poisson", 1e-2), 1
    W = np.zeros((p, m))
    W[[2, 7]] = 0.1 * rng.standard_normal((2, m))
    b = loss.initial_intercept()
    Z = loss.linear_predictor(W, b)
    curvature = _GLMCurvature(loss, "screened", 0.05, W, b, Z, _GLMCache(loss), screen_rows=4)
    Q = np.array([2, 5, 7, 13])
    idx = (Q[:, None] * m + np.arange(m)).ravel()
    if loss.fit_intercept:
        idx = np.r_[idx, p * m + np.arange(m)]
    H = loss.hessian(W, b)
    expected = H[np.ix_(idx, idx)] + curvature.lam * np.eye(idx.size)
    got = curvature._restricted_hessian(Q)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert curvature.lam > 0 and got.shape == (idx.size, idx.size)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_screened_step_over_every_row_is_the_dense_newton_step(family):
    X, y, _ = _count_problem(family, 50, 30, seed=3)
    loss = _loss(family, X, y)
    W = np.zeros((30, 1))
    W[[3, 17], 0] = [0.2, 0.1]
    b = loss.initial_intercept()
    Z = loss.linear_predictor(W, b)
    GW, gb = loss.gradient_from_z(Z, W)
    cache = _GLMCache(loss)
    screened = _GLMCurvature(loss, "screened", 1e-2, W, b, Z, cache, screen_rows=30).newton(GW, gb)
    dense = _GLMCurvature(loss, "dense", 1e-2, W, b, Z, cache).newton(GW, gb)
    np.testing.assert_allclose(screened[0], dense[0], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(screened[1], dense[1], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_wide_fit_recovers_the_support_without_an_n_by_n_matrix(family, monkeypatch):
    """n < p: the screened route (Poisson's default) forms neither X X^T (the Woodbury kernel) nor a
    p x p Hessian."""

    def refuse(self):
        raise AssertionError("X X^T formed")

    monkeypatch.setattr(_GLMCache, "G", property(refuse))
    monkeypatch.setattr(PoissonLoss, "hessian", refuse)
    monkeypatch.setattr(GammaLoss, "hessian", refuse)
    X, y, truth = _count_problem(family, 150, 400, seed=6)
    hessian = "auto" if family == "poisson" else "screened"
    model = IOBSRegressor(k=4, loss=family, hessian=hessian).fit(X, y)
    np.testing.assert_array_equal(model.support_, truth)
    # and the same without the splicing search: the solver's own support
    model = IOBSRegressor(k=4, loss=family, hessian=hessian, splicing=False).fit(X, y)
    np.testing.assert_array_equal(model.support_, truth)


def test_screened_route_on_request_for_the_logistic_loss():
    rng = np.random.RandomState(7)
    X = rng.standard_normal((120, 300))
    y = (X[:, [2, 8, 40]] @ np.array([3.0, -3.0, 2.5]) + 0.3 * rng.standard_normal(120) > 0).astype(int)
    model = IOBSClassifier(k=3, hessian="screened").fit(X, y)
    np.testing.assert_array_equal(model.support_, [2, 8, 40])


def test_screened_route_needs_a_pointwise_loss_that_changes_with_the_iterate():
    rng = np.random.RandomState(9)
    X = rng.standard_normal((30, 60))
    with pytest.raises(ValueError, match="screened"):
        IOBSRegressor(k=2, hessian="screened").fit(X, X[:, 0])
    rng = np.random.RandomState(8)
    X = rng.standard_normal((40, 10))
    y = np.array(list(zip(rng.rand(40) < 0.8, rng.exponential(size=40), strict=True)),
                 dtype=[("event", bool), ("time", float)])
    with pytest.raises(ValueError, match="hessian"):
        IOBSCoxPHSurvivalAnalysis(k=2, hessian="screened").fit(X, y)


def test_screened_route_on_request_for_the_huber_loss_with_outliers():
    rng = np.random.RandomState(10)
    X = rng.standard_normal((100, 300))
    y = X[:, [1, 7, 20]] @ np.array([3.0, -2.0, 1.0]) + 0.3 * rng.standard_normal(100)
    y[:8] += 30.0  # (gross outliers)
    model = IOBSRegressor(k=3, loss="huber", hessian="screened").fit(X, y)
    np.testing.assert_array_equal(model.support_, [1, 7, 20])


def test_auto_route_for_poisson_at_any_n():
    rng = np.random.RandomState(0)
    tall = rng.standard_normal((50, 20))
    assert select_hessian_route(PoissonLoss(tall, rng.poisson(1.0, 50))) == "screened"
    assert select_hessian_route(GammaLoss(tall, rng.gamma(2.0, 1.0, 50))) == "dense"  # (fisher lost F1 there)
    assert select_hessian_route(SquaredLoss(tall, rng.standard_normal(50))) == "dense"  # (unchanged)
