"""The Poisson, Gamma and Huber losses and the regressors' ``loss=`` parameter.

References are independent of the package: finite differences, scikit-learn's
PoissonRegressor / GammaRegressor (alpha=0) on the selected columns and its
D^2 scores, scipy.stats' log densities (with the Gamma shape maximised by
scipy.optimize), and invariances (the scale of y for Huber).
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _problems import REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal
from scipy import optimize, stats
from sklearn.base import clone
from sklearn.linear_model import GammaRegressor, PoissonRegressor
from sklearn.metrics import d2_tweedie_score, r2_score

from sparse_estimators import (
    IHTRegressor,
    IOBSRegressor,
)
from sparse_estimators.losses import GammaLoss, HuberLoss, NoLikelihoodError, PoissonLoss
from sparse_estimators.model_selection import SparsityCV, SparsityIC

LOSSES = {"poisson": PoissonLoss, "gamma": GammaLoss, "huber": HuberLoss}


def glm_data(family, n=300, p=40, support=(3, 11, 25), coef=(0.6, -0.5, 0.4), seed=0, shape=20.0, noise=0.2):
    """``X`` (standard Gaussian), ``y`` of the family with log-mean (or mean, Huber) ``X beta + 0.5``."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[list(support)] = coef
    eta = X @ beta + 0.5
    if family == "poisson":
        y = rng.poisson(np.exp(eta)).astype(float)
    elif family == "gamma":
        y = rng.gamma(shape, np.exp(eta) / shape)
    else:
        y = eta + noise * rng.standard_normal(n)
    return X, y, beta


# --------------------------------------------------------------------------
# the losses: derivatives against finite differences
# --------------------------------------------------------------------------
@pytest.mark.parametrize("family", sorted(LOSSES))
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_derivatives_match_finite_differences(family, sparse, weighted, fit_intercept):
    rng = np.random.RandomState(1)
    X, y, _ = glm_data(family, n=60, p=6, support=(0, 2), coef=(0.4, -0.3), noise=1.0)
    X[rng.rand(*X.shape) < 0.3] = 0.0
    sw = rng.uniform(0.2, 3.0, X.shape[0]) if weighted else None
    loss = LOSSES[family](sp.csr_matrix(X) if sparse else X, y, sw, fit_intercept)
    p = X.shape[1]
    W, b = 0.2 * rng.standard_normal((p, 1)), np.array([0.3])
    has_b = fit_intercept

    def pack(gW, gb):
        return np.concatenate([gW.ravel(), gb]) if has_b else gW.ravel()

    def unpack(t):
        return t[:p, None], (t[p:] if has_b else b)

    theta = pack(W, b)
    f, gW, gb = loss.value_and_gradient(W, b)
    h = 1e-6
    basis = np.eye(theta.size)
    numeric = np.array([(loss.value(*unpack(theta + h * e)) - loss.value(*unpack(theta - h * e))) / (2 * h)
                        for e in basis])
    assert_allclose(pack(gW, gb), numeric, rtol=1e-6, atol=1e-8)

    def grad(t):
        _, a, c = loss.value_and_gradient(*unpack(t))
        return pack(a, c)

    numeric_H = np.column_stack([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in basis])
    H = loss.hessian(W, b)
    assert_allclose(H, numeric_H, rtol=1e-5, atol=1e-7)
    V, c = rng.standard_normal((p, 1)), rng.standard_normal(1)
    HV, Hc = loss.hessp(W, b, V, c)
    assert_allclose(pack(HV, Hc), H @ pack(V, c), rtol=1e-10, atol=1e-12)
    # the splicing search's per-feature curvature is the Hessian's diagonal
    Z = loss.linear_predictor(W, b)
    assert_allclose(loss.feature_curvatures(Z, np.arange(p))[:, 0], np.diag(H)[:p], rtol=1e-10, atol=1e-12)


def test_poisson_and_gamma_likelihoods_match_scipy():
    X, y, beta = glm_data("poisson", n=80, p=5, support=(1,), coef=(0.5,))
    loss = PoissonLoss(X, y)
    # the model (beta, intercept 0.5); the loss's variable b is the intercept at the mean of X (centred X)
    W = beta[:, None]
    b = loss.intercept_variable(W, np.array([0.5]))
    mu = np.exp(X @ beta + 0.5)
    assert_allclose(loss.minus_two_log_likelihood(W, b), -2 * stats.poisson.logpmf(y, mu).sum(), rtol=1e-12)

    X, y, beta = glm_data("gamma", n=80, p=5, support=(1,), coef=(0.5,), shape=3.0)
    loss = GammaLoss(X, y)
    b = loss.intercept_variable(W, np.array([0.5]))
    mu = np.exp(X @ beta + 0.5)

    def minus_log_lik(log_shape):  # shape nu, scale mu / nu
        nu = np.exp(log_shape)
        return -stats.gamma.logpdf(y, nu, scale=mu / nu).sum()

    best = optimize.minimize_scalar(minus_log_lik, bounds=(-5, 8), method="bounded", options={"xatol": 1e-10})
    assert_allclose(loss.minus_two_log_likelihood(W, b), 2 * best.fun, rtol=1e-9)


def test_huber_has_no_likelihood():
    X, y, _ = glm_data("huber", n=50, p=4, support=(1,), coef=(0.5,))
    loss = HuberLoss(X, y)
    assert not loss.has_likelihood
    with pytest.raises(NoLikelihoodError, match="SparsityCV"):
        loss.minus_two_log_likelihood(*loss.zeros())


# --------------------------------------------------------------------------
# refits against scikit-learn
# --------------------------------------------------------------------------
@pytest.mark.parametrize("family, reference", [("poisson", PoissonRegressor), ("gamma", GammaRegressor)])
@pytest.mark.parametrize("weighted", [False, True])
def test_refit_equals_sklearn_unpenalised(family, reference, weighted):
    X, y, _ = glm_data(family, shape=4.0)
    sw = np.random.RandomState(3).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    support = np.array([3, 7, 11, 25])
    loss = LOSSES[family](X, y, sw)
    W, b = loss.refit(support, *loss.zeros())
    ref = reference(alpha=0.0, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X[:, support], y,
                                                                                        sample_weight=sw)
    assert_allclose(W[support, 0], ref.coef_, rtol=1e-6, atol=1e-8)
    assert_allclose(loss.intercept(W, b)[0], ref.intercept_, rtol=1e-6, atol=1e-8)
    assert np.all(W[np.setdiff1d(np.arange(X.shape[1]), support)] == 0)
    # the estimators' debiased fit on a true support is the same refit
    est = IHTRegressor(k=3, loss=family).fit(X, y, sample_weight=sw)
    ref = reference(alpha=0.0, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X[:, est.support_], y,
                                                                                        sample_weight=sw)
    assert_allclose(est.coef_[est.support_], ref.coef_, rtol=1e-6, atol=1e-8)
    assert_allclose(est.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)


def _reference_optimum(family, X, y, sw, fit_intercept, alpha):
    """``(coef, intercept)`` minimising the mean loss of ``family`` on all of ``X``'s columns, independently.

    scikit-learn for Poisson and Gamma without the l2 term; otherwise
    scipy's L-BFGS-B on the loss written out here (Huber at the loss's
    threshold), tightly converged.
    """
    if family in ("poisson", "gamma") and alpha == 0:
        reference = PoissonRegressor if family == "poisson" else GammaRegressor
        ref = reference(alpha=0.0, solver="newton-cholesky", tol=1e-12, max_iter=1000,
                        fit_intercept=fit_intercept).fit(X, y, sample_weight=sw)
        return ref.coef_, ref.intercept_
    s = (np.ones(len(y)) if sw is None else sw) / (len(y) if sw is None else sw.sum())
    t = LOSSES["huber"](X, y, sw).threshold if family == "huber" else None

    def fun(theta):
        w, c = theta[:-1], theta[-1] if fit_intercept else 0.0
        z = X @ w + c
        if family == "poisson":
            v, d = np.exp(z) - y * z, np.exp(z) - y
        elif family == "gamma":
            v, d = y * np.exp(-z) + z, 1 - y * np.exp(-z)
        else:
            r = y - z
            v = np.where(np.abs(r) <= t, 0.5 * r * r, t * np.abs(r) - 0.5 * t * t)
            d = -np.clip(r, -t, t)
        grad = np.append(X.T @ (s * d) + alpha * w, s @ d if fit_intercept else 0.0)
        return s @ v + 0.5 * alpha * w @ w, grad

    res = optimize.minimize(fun, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                            options={"maxiter": 10000, "ftol": 1e-16, "gtol": 1e-11})
    return res.x[:-1], (res.x[-1] if fit_intercept else 0.0)


@pytest.mark.parametrize("family", sorted(LOSSES))
@pytest.mark.parametrize("weighted, fit_intercept, alpha", [(False, True, 0.0), (True, True, 0.0),
                                                            (False, False, 0.0), (True, True, 0.05)])
def test_candidate_refits_equal_reference_optima(family, weighted, fit_intercept, alpha):
    # the splicing search's candidate refits (refit_candidates: one shared quadratic model, then Newton on
    # each candidate's columns) reach each candidate's optimum, from a current fit whose removed features
    # carry most of the signal (a start far from the candidates' optima)
    X, y, _ = glm_data(family, shape=4.0, noise=0.5)
    sw = np.random.RandomState(3).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    loss = LOSSES[family](X, y, sw, fit_intercept, alpha=alpha)
    W, b = loss.refit(np.array([3, 11, 25, 30]), *loss.zeros())
    candidates = [np.array([1, 3, 11, 30]), np.array([1, 2, 11, 30]), np.array([0, 1, 2, 30]),
                  np.array([0, 1, 2, 5])]
    results = loss.refit_candidates(candidates, W, b)
    assert len(results) == len(candidates)
    for support, (W_c, b_c, f_c, Z_c) in zip(candidates, results, strict=True):
        coef, intercept = _reference_optimum(family, X[:, support], y, sw, fit_intercept, alpha)
        # (candidates are refitted to a value within about 1e-7 of the minimum, the coefficients to ~1e-3)
        W_ref = np.zeros_like(W)
        W_ref[support, 0] = coef
        f_ref = loss.value(W_ref, loss.intercept_variable(W_ref, np.array([intercept])))
        assert abs(f_c - f_ref) <= 1e-6 * (1 + abs(f_ref))
        assert_allclose(W_c[support, 0], coef, rtol=1e-2, atol=1e-3)
        assert_allclose(loss.intercept(W_c, b_c)[0], intercept, rtol=1e-2, atol=1e-3)
        assert np.all(np.delete(W_c, support, axis=0) == 0)
        assert_allclose(Z_c, loss.linear_predictor(W_c, b_c), rtol=1e-12, atol=1e-12)
        assert_allclose(f_c, loss.value(W_c, b_c), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
@pytest.mark.parametrize("weighted, alpha", [(False, 0.0), (True, 0.05)])
def test_candidate_screening_skips_only_candidates_that_cannot_pass(family, weighted, alpha):
    # with limits, the candidates whose quadratic model rises well above the current value are not refitted
    # (value inf); each of them, refitted anyway, stays above its limit, and the others are refitted exactly
    # as without limits
    X, y, _ = glm_data(family, shape=4.0, noise=0.5)
    sw = np.random.RandomState(3).uniform(0.5, 2.0, X.shape[0]) if weighted else None
    loss = LOSSES[family](X, y, sw, True, alpha=alpha)
    W, b = loss.refit(np.array([3, 11, 30]), *loss.zeros())  # feature 25 missing, noise feature 30 selected
    f = loss.value(W, b)
    candidates = [np.array([3, 11, 25]), np.array([1, 11, 30]), np.array([3, 25, 30]), np.array([2, 3, 11]),
                  np.array([1, 2, 30])]
    limits = [f - 0.002 * c for c in (1, 1, 1, 1, 2)]
    plain = [r[2] for r in LOSSES[family](X, y, sw, True, alpha=alpha).refit_candidates(candidates, W, b)]
    screened = [r[2] for r in loss.refit_candidates(candidates, W, b, limits=limits)]
    skipped = np.isinf(screened)
    assert skipped[[1, 4]].all() and not skipped[0]  # (losing feature 3 or 11 costs far more than 0.002)
    assert all(value > limit for value, limit, skip in zip(plain, limits, skipped, strict=True) if skip)
    assert_array_equal(np.asarray(screened)[~skipped], np.asarray(plain)[~skipped])


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_candidate_screening_keeps_the_fits(family, monkeypatch):
    # the screened splicing search selects what the search refitting every candidate selects
    from sparse_estimators.losses._glm import _LogLinkLoss

    fits = []
    for screens in (True, False):
        monkeypatch.setattr(_LogLinkLoss, "screens_candidates", screens)
        supports = []
        for seed in range(6):
            X, y, _ = glm_data(family, n=150, p=60, support=(3, 11, 25, 40), coef=(0.3, -0.25, 0.2, 0.15),
                               seed=seed, shape=3.0)
            X[:, 1::2] += 0.8 * X[:, 0::2]  # (correlated pairs: exchanges happen)
            supports.append(np.flatnonzero(IHTRegressor(k=4, loss=family).fit(X, y).coef_))
        fits.append(supports)
    for screened, plain in zip(*fits, strict=True):
        assert_array_equal(screened, plain)


def test_huber_candidate_refits_follow_the_scale():
    # the candidate refits are remembered per loss object: the loss at another scale (with_scale, a copy
    # sharing the design) refits again, and gives what a loss built at that scale gives
    X, y, _ = glm_data("huber", noise=0.5)
    y[::10] += 8.0
    loss = HuberLoss(X, y)
    W, b = loss.refit(np.array([3, 11, 25]), *loss.zeros())
    candidates = [np.array([1, 3, 11]), np.array([1, 2, 11])]
    first = [r[2] for r in loss.refit_candidates(candidates, W, b)]
    other = loss.with_scale(0.3 * loss.scale)
    fresh = HuberLoss(X, y, scale=0.3 * loss.scale)
    assert_allclose([r[2] for r in other.refit_candidates(candidates, W, b)],
                    [r[2] for r in fresh.refit_candidates(candidates, W, b)], rtol=1e-10)
    assert_allclose([r[2] for r in loss.refit_candidates(candidates, W, b)], first, rtol=1e-15)
    assert not np.allclose([r[2] for r in fresh.refit_candidates(candidates, W, b)], first)


# --------------------------------------------------------------------------
# the estimators
# --------------------------------------------------------------------------
@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("family", sorted(LOSSES))
def test_high_signal_support_recovered(Est, family):
    X, y, beta = glm_data(family, n=400, p=60, shape=50.0, noise=0.05)
    est = Est(k=3, loss=family).fit(X, y)
    assert_array_equal(est.support_, np.flatnonzero(beta))
    assert_allclose(est.coef_[est.support_], beta[est.support_], atol=0.1)
    assert est.coef_.shape == (60,) and isinstance(est.intercept_, float)


@pytest.mark.parametrize("family", sorted(LOSSES))
@pytest.mark.parametrize("variant", ["sparse", "float32", "weights", "groups", "always_select", "positive",
                                     "k_none", "no_splicing"])
def test_options_work_with_every_loss(family, variant):
    X, y, beta = glm_data(family, n=400, p=40, coef=(0.6, 0.5, 0.4), shape=50.0, noise=0.05)
    truth = np.flatnonzero(beta)
    params, fit = {"k": 3, "loss": family}, {}
    if variant == "sparse":
        X = sp.csr_matrix(X)
    elif variant == "float32":
        X = X.astype(np.float32)
    elif variant == "weights":
        fit["sample_weight"] = np.random.RandomState(0).uniform(0.5, 2.0, X.shape[0])
    elif variant == "groups":
        params["groups"] = np.arange(40) // 2  # features 3, 11 and 25 are in groups 1, 5 and 12
    elif variant == "always_select":
        params["always_select"] = [0]
        params["k"] = 4
    elif variant == "positive":
        params["positive"] = True
    elif variant == "k_none":
        params["k"] = None
    elif variant == "no_splicing":
        params["splicing"] = False
    for Est in (IHTRegressor, IOBSRegressor):
        est = Est(**params).fit(X, y, **fit)
        if variant == "groups":
            assert_array_equal(est.groups_support_, [1, 5, 12])
        elif variant == "always_select":
            assert_array_equal(est.support_, np.union1d([0], truth))
        else:
            assert_array_equal(est.support_, truth)
        if variant == "positive":
            assert np.all(est.coef_ >= 0)
        if variant == "float32":  # float32 in, float32 out, as with the squared error
            assert est.coef_.dtype == np.float32 and np.asarray(est.intercept_).dtype == np.float32
            assert est.predict(X).dtype == np.float32


def test_predict_is_the_mean_and_score_is_d2():
    for family, power in [("poisson", 1), ("gamma", 2)]:
        X, y, _ = glm_data(family)
        est = IHTRegressor(k=3, loss=family).fit(X, y)
        eta = X @ est.coef_ + est.intercept_
        assert_allclose(est.predict(X), np.exp(eta), rtol=1e-12)
        assert_allclose(est.score(X, y), d2_tweedie_score(y, np.exp(eta), power=power), rtol=1e-12)
        ref = (PoissonRegressor if family == "poisson" else GammaRegressor)(alpha=0, tol=1e-12, max_iter=1000)
        ref.fit(X[:, est.support_], y)
        assert_allclose(est.score(X, y), ref.score(X[:, est.support_], y), rtol=1e-6)
    X, y, _ = glm_data("huber")
    est = IHTRegressor(k=3, loss="huber").fit(X, y)
    assert_allclose(est.predict(X), X @ est.coef_ + est.intercept_, rtol=1e-12)
    assert_allclose(est.score(X, y), _d2_huber_reference(y, est.predict(X), 1.35), rtol=1e-9)


def _d2_huber_reference(y, pred, epsilon, w=None):
    """D^2 of Huber's loss, written out: the threshold at the residuals' inlier scale, the best constant by scipy."""
    from scipy.optimize import minimize_scalar

    from sparse_estimators.losses._robust import inlier_scale

    w = np.ones_like(y) if w is None else w
    t = epsilon * inlier_scale(y - pred, w)

    def rho(r):
        return np.sum(w * np.where(np.abs(r) <= t, r ** 2 / 2, t * np.abs(r) - t ** 2 / 2))

    best = minimize_scalar(lambda c: rho(y - c), bounds=(y.min(), y.max()), method="bounded",
                           options={"xatol": 1e-12 * np.ptp(y)})
    return 1 - rho(y - pred) / rho(y - best.x)


def test_huber_score_is_d2_of_its_loss_and_ignores_gross_outliers():
    # the fraction of Huber's loss explained (at the residuals' scale): equivariant, weighted, and it ranks models
    # by the inliers: with 5 % of y shifted by 100, R^2 prefers a model shifted by 5 towards the outliers
    from sparse_estimators.losses._robust import d2_huber_score

    rng = np.random.RandomState(0)
    y = rng.standard_normal(200) * 2 + 1
    pred = y + 0.5 * rng.standard_normal(200)
    w = rng.uniform(0.5, 2, 200)
    assert_allclose(d2_huber_score(y, pred, w, 1.35), _d2_huber_reference(y, pred, 1.35, w), rtol=1e-9)
    assert_allclose(d2_huber_score(10 * y, 10 * pred, w, 1.35), d2_huber_score(y, pred, w, 1.35), rtol=1e-9)
    dirty = y.copy()
    dirty[:10] += 100.0
    assert r2_score(dirty, pred + 5) > r2_score(dirty, pred)
    assert d2_huber_score(dirty, pred, None, 1.35) > d2_huber_score(dirty, pred + 5, None, 1.35) + 0.1
    assert d2_huber_score(y, y, None, 1.35) == 1.0 and np.isnan(d2_huber_score(y[:1], pred[:1], None, 1.35))


def test_sparsity_cv_chooses_k_for_huber_despite_outliers_in_the_test_folds():
    # with 10 % gross outliers in y, R^2 on the test folds is noise and chose k from 1 to 11 on these data sets;
    # the Huber estimator's own score (D^2 of its loss) chooses the 4 true features
    for seed in range(5):
        rng = np.random.RandomState(seed)
        X = rng.standard_normal((200, 30))
        y = X[:, [0, 4, 8, 12]] @ [0.6, -0.5, 0.4, 0.5] + 0.3 * rng.standard_normal(200) + (rng.rand(200) < .1) * 20
        search = SparsityCV(IHTRegressor(loss="huber"), cv=5).fit(X, y)
        assert search.k_ == 4
        assert_array_equal(search.best_estimator_.support_, [0, 4, 8, 12])


@pytest.mark.parametrize("Est", REGRESSORS)
def test_huber_scale_invariance(Est):
    X, y, _ = glm_data("huber", noise=0.5)
    y[::10] += 8.0  # outliers, so that the threshold matters
    a = Est(k=3, loss="huber").fit(X, y)
    b = Est(k=3, loss="huber").fit(X, 10 * y)
    assert_array_equal(a.support_, b.support_)
    assert_allclose(b.coef_, 10 * a.coef_, rtol=1e-6, atol=1e-9)
    assert_allclose(b.intercept_, 10 * a.intercept_, rtol=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
def test_huber_residual_scale_is_the_inliers_standard_deviation(weighted):
    # 10 % of gross outliers on one side bias the MAD of the residuals upwards (to about 1.14 times the
    # noise's standard deviation), and the Huber threshold with it; the reweighted estimate reads the
    # inliers' standard deviation. Without outliers both estimate it.
    rng = np.random.RandomState(0)
    n = 40000
    noise = rng.standard_normal(n)
    y = noise.copy()
    y[: n // 10] += rng.uniform(20.0, 40.0, n // 10)
    X = rng.standard_normal((n, 2))
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    W, b = np.zeros((2, 1)), np.zeros(1)
    for target, sd in ((y, 1.0), (noise, 1.0), (3.0 * y, 3.0)):
        loss = HuberLoss(X, target, sw, fit_intercept=False)
        assert abs(loss.residual_scale(W, b) / sd - 1.0) < 0.03
    # equivariant: the scale of c * residuals is c times theirs
    loss = HuberLoss(X, y, sw, fit_intercept=False)
    assert_allclose(HuberLoss(X, 7.0 * y, sw, fit_intercept=False).residual_scale(W, b),
                    7.0 * loss.residual_scale(W, b), rtol=1e-12)


def _outlier_problem(seed):
    """n=200, p=100, 5 features; 10 % of y shifted by 20 to 40 noise standard deviations (one sign)."""
    rng = np.random.RandomState(seed)
    n, p = 200, 100
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    truth = rng.choice(p, 5, replace=False)
    beta[truth] = rng.choice([-1, 1], 5) * rng.uniform(0.5, 1.0, 5)
    y = X @ beta + 0.5 * rng.standard_normal(n)
    bad = rng.choice(n, n // 10, replace=False)
    y[bad] += rng.uniform(10.0, 20.0, bad.size)
    return X, y, np.sort(truth)


def test_huber_recovers_the_support_with_gross_outliers_where_squared_error_fails():
    huber = squared = 0
    for seed in range(10):
        X, y, truth = _outlier_problem(seed)
        huber += np.array_equal(IHTRegressor(k=5, loss="huber").fit(X, y).support_, truth)
        squared += np.array_equal(IHTRegressor(k=5).fit(X, y).support_, truth)
    assert huber == 10
    assert squared <= 2  # (measured: 0 of 10, support F1 0.56)


@pytest.mark.parametrize("Est", REGRESSORS)
def test_invalid_targets(Est):
    X, y, _ = glm_data("poisson", n=30, p=5, support=(1, 2), coef=(0.5, -0.4))
    with pytest.raises(ValueError, match="y are negative"):
        Est(k=2, loss="poisson").fit(X, y - 1.0)
    with pytest.raises(ValueError, match="y are not strictly positive"):
        Est(k=2, loss="gamma").fit(X, y)  # (counts include zeros)
    with pytest.raises(ValueError, match="weighted sum of y"):
        Est(k=2, loss="poisson").fit(X, np.zeros(30))
    with pytest.raises(ValueError, match="single target"):
        Est(k=2, loss="huber").fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="loss"):
        Est(k=2, loss="absolute_error").fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        Est(k=2, loss="huber", epsilon=0.5).fit(X, y)


@pytest.mark.parametrize("family", ["squared_error", *sorted(LOSSES)])
def test_clone_and_pickle(family):
    X, y, _ = glm_data("poisson" if family == "squared_error" else family)
    est = IOBSRegressor(k=3, loss=family)
    assert clone(est).get_params()["loss"] == family
    est.fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert_array_equal(again.predict(X), est.predict(X))
    refit = clone(est).fit(X, y)  # deterministic
    assert_array_equal(refit.coef_, est.coef_)


def test_sparsity_ic_uses_the_likelihood_and_refuses_huber():
    X, y, beta = glm_data("poisson", n=400, p=40)
    search = SparsityIC(IHTRegressor(loss="poisson"), k_grid=[1, 2, 3, 4, 5, 6]).fit(X, y)
    assert search.k_ == 3
    X, y, _ = glm_data("huber")
    with pytest.raises(ValueError, match="Huber.*SparsityCV"):
        SparsityIC(IHTRegressor(loss="huber")).fit(X, y)


def test_sparsity_cv_scores_with_the_estimators_score():
    X, y, _ = glm_data("gamma", n=200, p=20, support=(3, 11, 15), shape=5.0)
    search = SparsityCV(IHTRegressor(loss="gamma"), k_grid=[2, 3], cv=3).fit(X, y)
    from sklearn.model_selection import KFold

    for i, k in enumerate([2, 3]):
        scores = [IHTRegressor(k=k, loss="gamma").fit(X[tr], y[tr]).score(X[te], y[te])
                  for tr, te in KFold(3).split(X)]
        assert_allclose(search.cv_results_["mean_test_score"][i], np.mean(scores), rtol=1e-6)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_candidates_read_from_the_cache_form_no_model(family, monkeypatch):
    # a round whose candidates were all refitted before (by the same loss object) reads them from the cache:
    # no copy of their columns and no pass over the samples for the shared quadratic model
    X, y, _ = glm_data(family, shape=4.0, noise=0.5)
    loss = LOSSES[family](X, y)
    W, b = loss.refit(np.array([3, 11, 30]), *loss.zeros())
    candidates = [np.array([3, 11, 25]), np.array([3, 25, 30]), np.array([2, 3, 11])]
    first = list(loss.refit_candidates(candidates, W, b))
    calls = []
    for name in ("_parts", "_refit_columns"):
        method = getattr(loss, name)
        monkeypatch.setattr(loss, name, lambda *a, _m=method, _n=name: calls.append(_n) or _m(*a))
    again = list(loss.refit_candidates(candidates, W, b))
    assert calls == []
    for (W1, b1, f1, Z1), (W2, b2, f2, Z2) in zip(first, again, strict=True):
        assert f1 == f2 and np.array_equal(W1, W2) and np.array_equal(b1, b2) and np.array_equal(Z1, Z2)
    list(loss.refit_candidates([np.array([3, 11, 25]), np.array([1, 3, 11])], W, b))  # one new: the model is formed
    assert calls.count("_refit_columns") == 1


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_abess_search_skipped_despite_screened_candidates(family, monkeypatch):
    # where a splicing round of the first search accepts nothing, abess's search is skipped (at abess's start)
    # or stops when it reaches that support (p <= k + 128: its set U holds every feature), although the round
    # screened candidates instead of refitting them (they needed a decrease of at least abess's threshold):
    # fewer rounds, and the fits are those of running the search to its end
    import sparse_estimators.solvers._splice as splice_module
    import sparse_estimators.solvers._splice_abess as abess_module

    runs, rounds = [], []
    search, ranked = abess_module._important_search, splice_module._ranked
    monkeypatch.setattr(abess_module, "_important_search", lambda *a, **kw: runs.append(1) or search(*a, **kw))
    for module in (splice_module, abess_module):  # (the rounds of both searches)
        monkeypatch.setattr(module, "_ranked", lambda *a, **kw: rounds.append(1) or ranked(*a, **kw))
    data = []
    for seed in range(12):
        X, y, _ = glm_data(family, n=200, p=100, support=(3, 11, 25, 40, 77), coef=(0.3, -0.25, 0.3, 0.2, -0.25),
                           seed=seed, shape=5.0)
        data.append((X, y))
    fits = [IHTRegressor(k=5, loss=family).fit(X, y).coef_ for X, y in data]
    skipped, n_rounds = len(data) - len(runs), len(rounds)
    assert skipped >= 2
    monkeypatch.setattr(abess_module, "_abess_search_stays", lambda *a, **kw: False)
    rounds.clear()
    for (X, y), coef in zip(data, fits, strict=True):
        assert_array_equal(IHTRegressor(k=5, loss=family).fit(X, y).coef_, coef)
    assert n_rounds < 0.8 * len(rounds)
