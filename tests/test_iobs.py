"""Tests of the Iterative Optimal Brain Surgeon solver and estimators (paper 004)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold

from sparse_estimators import IHTRegressor, IOBSClassifier, IOBSRegressor, _policy
from sparse_estimators.losses import GammaLoss, LogisticLoss, MultinomialLoss, PoissonLoss, SquaredLoss
from sparse_estimators.solvers import iht, iobs
from sparse_estimators.solvers._iobs import select_hessian_route
from sparse_estimators.thresholding import Hard

# -- helpers ---------------------------------------------------------------------


class _RecordingSquaredLoss(SquaredLoss):
    """Records every iterate: both solvers take exactly one gradient per iteration, at the iterate."""

    def gradient_from_z(self, Z, W):
        self.trace.append(W.copy())
        return super().gradient_from_z(Z, W)


def _trajectory(solver, X, y, k, n_iter, **options):
    """Iterates theta_0 .. theta_{n_iter} of ``solver`` (no intercept, hard thresholding)."""
    loss = _RecordingSquaredLoss(X, y, None, False)
    loss.trace = []
    W0, b0 = loss.zeros()
    result = solver(loss, Hard(), k, W0=W0, b0=b0, max_iter=n_iter, tol=0.0, **options)
    # with tol=0 a solver stops early only when an iteration left the iterate exactly unchanged
    return loss.trace + [result.coef]


def _iterations_to(trace, theta, level):
    """First iteration whose relative error to ``theta`` is at most ``level`` (None if never)."""
    norm = np.linalg.norm(theta)
    for it, W in enumerate(trace):
        if np.linalg.norm(W[:, 0] - theta) <= level * norm:
            return it
    return None


def _sparse_problem(seed, n, d, k_true, *, scale=1.0):
    rng = np.random.RandomState(seed)
    theta = np.zeros(d)
    support = np.sort(rng.choice(d, k_true, replace=False))
    theta[support] = rng.choice([-1.0, 1.0], k_true) * (1.0 + rng.rand(k_true))
    X = rng.standard_normal((n, d)) * scale
    return X, X @ theta, theta, support


def _fig1a_problem(seed):
    """Paper 004, Sec. 4.1 / Fig. 1a: d = 128, theta* ~ N(0, I) on 16 random entries, n = 256, X ~ N(0, 1/n)."""
    rng = np.random.RandomState(seed)
    d, n, k_true = 128, 256, 16
    theta = np.zeros(d)
    theta[rng.choice(d, k_true, replace=False)] = rng.standard_normal(k_true)
    X = rng.standard_normal((n, d)) / np.sqrt(n)
    return X, X @ theta, theta


def _weighted_lstsq(X, y, w, support, fit_intercept=True):
    """Independent weighted least squares on the columns in ``support``."""
    Xs = X[:, support]
    if fit_intercept:
        Xs = Xs - w @ Xs / w.sum()
        y = y - w @ y / w.sum()
    root = np.sqrt(w)
    return np.linalg.lstsq(Xs * root[:, None], y * root, rcond=None)[0]


# -- (a), (b): paper fidelity: iteration counts ------------------------------------


@pytest.mark.parametrize("n, d, k_true, k, damping", [(400, 200, 10, 20, 1e-2), (200, 512, 20, 40, 1e-3)])
def test_noiseless_recovery_in_few_iterations_where_iht_needs_many(n, d, k_true, k, damping):
    """Notes section 5 / paper 004 Sec. 4.1: on noiseless data I-OBS (top-k + OBS correction)
    converges in a few iterations where IHT needs many (n > d, and the notes' n = 200, d = 512,
    k* = 20, k = 40, damping 1e-3 case)."""
    X, y, theta, support = _sparse_problem(0, n, d, k_true)
    iobs_trace = _trajectory(iobs, X, y, k, 30, damping=damping)
    iht_trace = _trajectory(iht, X, y, k, 2000, step_size=1.0)
    t_iobs = _iterations_to(iobs_trace, theta, 1e-8)
    t_iht = _iterations_to(iht_trace, theta, 1e-8)
    assert t_iobs is not None and t_iobs <= 10
    assert t_iht is not None and t_iht >= 5 * t_iobs
    # the estimators, at their default tolerance, agree
    model = IOBSRegressor(k=k, damping=damping).fit(X, y)
    baseline = IHTRegressor(k=k, debias=False).fit(X, y)  # the papers' iteration
    assert set(support) <= set(model.support_)
    assert model.n_iter_ <= 10
    assert baseline.n_iter_ >= 3 * model.n_iter_
    np.testing.assert_allclose(model.coef_, theta, atol=1e-8)


def test_fig1a_iobs_reaches_1e8_far_faster_than_iht():
    """Paper 004, Fig. 1a (d = 128, k* = 16, n = 256, X ~ N(0, 1/n), noiseless, k = 64): top-k
    I-OBS reaches relative error 1e-8 in far fewer iterations than k-IHT with eta = 1/lambda_max(H)
    (median over seeds: at least 5x fewer; measured ~7 versus ~260)."""
    counts_iobs, counts_iht = [], []
    for seed in range(5):
        X, y, theta = _fig1a_problem(seed)
        counts_iobs.append(_iterations_to(_trajectory(iobs, X, y, 64, 20), theta, 1e-8))
        counts_iht.append(_iterations_to(_trajectory(iht, X, y, 64, 1500, step_size=1.0), theta, 1e-8))
    assert None not in counts_iobs and None not in counts_iht
    assert max(counts_iobs) <= 10
    assert np.median(counts_iht) >= 5 * np.median(counts_iobs)


def test_fig1a_undamped_top_k_newton_step_is_exact_in_one_iteration():
    """Paper 004, eq. 12 with the exact Hessian (notes section 5): for least squares with
    n > d the Newton point is the OLS fit, so in the noiseless Fig. 1a setting top-k I-OBS
    without damping or correction recovers theta* after one iteration."""
    X, y, theta = _fig1a_problem(0)
    trace = _trajectory(iobs, X, y, 64, 3, damping=0.0, correction=False)
    assert _iterations_to(trace, theta, 1e-10) == 1


# -- (c) damping -> infinity is IHT with eta = 1/lambda ------------------------------


@pytest.mark.parametrize("kind", ["squared", "logistic"])
def test_large_damping_recovers_iht_with_step_one_over_lambda(kind):
    """Notes section 5: lambda -> infinity recovers IHT with eta = 1/lambda (same iterates)."""
    rng = np.random.RandomState(3)
    X = rng.standard_normal((60, 15))
    z = X[:, :3] @ np.array([1.0, -2.0, 1.5])
    if kind == "squared":
        loss = SquaredLoss(X, z + 0.1 * rng.standard_normal(60), None, True)
        diag_mean = np.mean(np.var(X, axis=0))
    else:
        loss = LogisticLoss(X, (z + rng.standard_normal(60) > 0).astype(float), None, True, 1e-3)
    L = loss.lipschitz()
    W0, _ = loss.zeros()
    b0 = loss.initial_intercept()
    errors = []
    for damping in (1e4, 1e6):
        if kind == "logistic":  # mean(diag H) at the start, where the Hessian is formed first
            diag_mean = np.mean(np.diag(loss.hessian(W0, b0))[: X.shape[1]])
        lam = damping * diag_mean
        for n_iter in (1, 3, 10) if kind == "squared" else (1,):
            a = iobs(loss, Hard(), 4, W0=W0, b0=b0, max_iter=n_iter, tol=0.0, damping=damping)
            b = iht(loss, Hard(), 4, W0=W0, b0=b0, max_iter=n_iter, tol=0.0, step_size=L / lam)
            assert np.array_equal(a.support, b.support)
            scale = np.abs(b.coef).max()
            err = max(np.abs(a.coef - b.coef).max(), np.abs(a.intercept - b.intercept).max()) / scale
            errors.append((damping, err))
    for damping, err in errors:
        assert err <= 100.0 / damping
    # the gap closes like 1/lambda
    assert errors[-1][1] < errors[0][1]


# -- (d) the linear-algebra routes agree ------------------------------------------------


@pytest.mark.parametrize("n, p", [(80, 30), (30, 80)])
@pytest.mark.parametrize("correction", [True, False])
def test_cholesky_woodbury_cg_routes_give_the_same_iterates(n, p, correction):
    """The Cholesky, Woodbury and conjugate-gradient routes solve the same damped systems."""
    rng = np.random.RandomState(1)
    X = rng.standard_normal((n, p))
    Y = X[:, :3] @ rng.standard_normal((3, 2)) + 0.1 * rng.standard_normal((n, 2)) + 5.0
    w = 0.5 + rng.rand(n)
    loss = SquaredLoss(X, Y, w, True)
    W0, b0 = loss.zeros()
    results = {route: iobs(loss, Hard(), 5, W0=W0, b0=b0, max_iter=3, tol=0.0, hessian=route,
                           correction=correction).coef
               for route in ("dense", "woodbury", "cg")}
    np.testing.assert_allclose(results["woodbury"], results["dense"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(results["cg"], results["dense"], rtol=1e-6, atol=1e-8)
    # and so do the fitted estimators, on dense and sparse input
    fits = [IOBSRegressor(k=5, hessian=route).fit(data, Y, sample_weight=w)
            for route in ("dense", "woodbury", "cg") for data in (X, sp.csr_matrix(X))]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.support_, fits[0].support_)
        np.testing.assert_allclose(fit.coef_, fits[0].coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(fit.intercept_, fits[0].intercept_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("n, p", [(120, 12), (40, 90), (160, 30)])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_glm_dense_woodbury_and_cg_routes_agree(n, p, n_classes, fit_intercept):
    """Logistic / multinomial: the re-formed dense Hessian, its Woodbury form and CG agree
    (with the intercept a variable of the Newton step and of the correction). At n = 160 the
    one-output Woodbury kernel is factored in place in the fit's buffer, reused by each iteration."""
    rng = np.random.RandomState(2)
    X = rng.standard_normal((n, p))
    y = np.argmax(X[:, :n_classes] * 2 + rng.gumbel(size=(n, n_classes)), axis=1)
    w = rng.rand(n)
    w[:3] = 0.0
    loss = (LogisticLoss(X, y, w, fit_intercept, 1e-3) if n_classes == 2
            else MultinomialLoss(X, y, n_classes, w, fit_intercept, 1e-3))
    W0, _ = loss.zeros()
    b0 = loss.initial_intercept()
    for correction in (True, False):
        runs = {route: iobs(loss, Hard(), 3, W0=W0, b0=b0, max_iter=3, tol=0.0, hessian=route,
                            correction=correction) for route in ("dense", "woodbury", "cg")}
        for route in ("woodbury", "cg"):
            np.testing.assert_allclose(runs[route].coef, runs["dense"].coef, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(runs[route].intercept, runs["dense"].intercept, rtol=1e-6, atol=1e-8)


def test_auto_route_follows_the_documented_thresholds(monkeypatch):
    rng = np.random.RandomState(0)
    tall, wide = rng.standard_normal((50, 20)), rng.standard_normal((20, 50))
    assert select_hessian_route(SquaredLoss(tall, tall[:, 0])) == "dense"
    assert select_hessian_route(SquaredLoss(wide, wide[:, 0])) == "woodbury"
    # samples of zero weight do not count
    weights = np.r_[np.ones(10), np.zeros(40)]
    assert select_hessian_route(SquaredLoss(tall, tall[:, 0], weights)) == "woodbury"
    assert select_hessian_route(LogisticLoss(tall, tall[:, 0] > 0)) == "dense"
    assert select_hessian_route(SquaredLoss(tall, tall[:, 0]), "woodbury") == "woodbury"
    monkeypatch.setattr(_policy, "DENSE_MAX_GLM", 10)
    assert select_hessian_route(LogisticLoss(wide, wide[:, 0] > 0)) == "woodbury"
    assert select_hessian_route(LogisticLoss(wide, wide[:, 0] > 0), damping=0.0) == "cg"
    monkeypatch.setattr(_policy, "WOODBURY_MAX_GLM", 10)
    assert select_hessian_route(LogisticLoss(wide, wide[:, 0] > 0)) == "cg"
    monkeypatch.setattr(_policy, "DENSE_MAX_LS", 10)
    assert select_hessian_route(SquaredLoss(tall, tall[:, 0])) == "cg"
    assert select_hessian_route(SquaredLoss(wide, wide[:, 0])) == "cg"
    with pytest.raises(ValueError, match="hessian"):
        select_hessian_route(SquaredLoss(tall, tall[:, 0]), "lu")


# -- (e) the OBS correction is the least-squares refit on Q ------------------------


def test_obs_correction_is_the_least_squares_refit_without_damping():
    """Notes section 5 / paper eq. 23: for a quadratic loss the correction is the exact
    minimiser on Q; with damping 0 and n >= p it equals the least-squares refit on Q."""
    rng = np.random.RandomState(4)
    n, p, k = 90, 25, 6
    X = rng.standard_normal((n, p)) + 2.0
    y = X[:, [1, 4, 9]] @ np.array([2.0, -1.0, 1.0]) + 0.5 * rng.standard_normal(n) + 3.0
    w = 0.2 + rng.rand(n)
    loss = SquaredLoss(X, y, w, True)
    W0 = np.zeros((p, 1))
    W0[rng.choice(p, k, replace=False), 0] = rng.standard_normal(k)  # an arbitrary start
    b0 = np.zeros(1)
    for n_iter in (1, 2, 4):
        result = iobs(loss, Hard(), k, W0=W0, b0=b0, max_iter=n_iter, tol=0.0, damping=0.0)
        assert result.support.size == k
        expected = _weighted_lstsq(X, y, w, result.support)
        np.testing.assert_allclose(result.coef[result.support, 0], expected, rtol=1e-9, atol=1e-11)
        assert np.all(np.delete(result.coef, result.support, axis=0) == 0)


def test_damped_fixed_point_is_the_refit_on_its_support():
    """With damping, a converged iterate is stationary on its support, i.e. the refit."""
    X, y, _, _ = _sparse_problem(5, 70, 40, 5)
    y = y + 0.3 * np.random.RandomState(5).standard_normal(70)
    model = IOBSRegressor(k=5, damping=0.5, debias=False, tol=1e-12).fit(X, y)
    w = np.ones(70)
    np.testing.assert_allclose(model.coef_[model.support_], _weighted_lstsq(X, y, w, model.support_),
                               rtol=1e-8)


def _jump_against_plain(family, shape, hessian="auto"):
    """``support_refit=1`` jumps to the minimiser on the settled support and stops after one check.

    Plain I-OBS (no jump, ``tol=1e-12``) converges on its support to the point where the
    damped restricted Newton step stands still, i.e. where the gradient on the support
    vanishes: the minimiser on the support. The jump must end at that same point with fewer
    Newton solves; where the full Newton step's selection keeps the support, it stops at the
    minimiser itself, flagged as refitted (else a safeguarded step confirms it).
    """
    n, p = shape
    rng = np.random.RandomState(3)
    X = rng.standard_normal((n, p))
    truth = np.array([4, 17, 33, 41, 55])
    z = X[:, truth] @ np.array([0.4, -0.3, 0.35, -0.45, 0.3])
    if family == "poisson":
        loss = PoissonLoss(X, rng.poisson(np.exp(z + 0.5)))
    elif family == "gamma":
        loss = GammaLoss(X, rng.gamma(5.0, np.exp(z) / 5.0))
    else:
        loss = LogisticLoss(X, (3 * z + rng.logistic(size=n) > 0).astype(float))
    W0, b0 = np.zeros((p, 1)), loss.initial_intercept()
    plain = iobs(loss, Hard(), 5, W0=W0, b0=b0, tol=1e-12, max_iter=500, hessian=hessian)
    jump = iobs(loss, Hard(), 5, W0=W0, b0=b0, tol=1e-12, max_iter=500, support_refit=1, hessian=hessian)
    assert plain.converged and not plain.refitted
    assert jump.converged
    np.testing.assert_array_equal(np.sort(jump.support), np.sort(plain.support))
    assert jump.n_iter < plain.n_iter
    np.testing.assert_allclose(jump.coef, plain.coef, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jump.intercept, plain.intercept, rtol=1e-7, atol=1e-9)
    if jump.refitted:  # the gradient the solver reports is the one at the minimiser: zero on the support
        GW = loss.value_and_gradient(jump.coef, jump.intercept)[1]
        np.testing.assert_allclose(jump.gradient, GW, rtol=1e-10, atol=1e-12)
        assert np.max(np.abs(GW[jump.support])) <= 1e-6 * np.max(np.abs(GW))
    return jump.refitted


@pytest.mark.parametrize("family", ["poisson", "gamma", "logistic"])
@pytest.mark.parametrize("shape", [(200, 60), (80, 150)])
@pytest.mark.parametrize("exact", [False, True])  # ('auto': dense, Woodbury or screened; exact: dense or Woodbury)
def test_support_jump_ends_at_the_limit_of_plain_iobs_in_fewer_iterations(family, shape, exact):
    _jump_against_plain(family, shape, ("dense" if shape[0] > shape[1] else "woodbury") if exact else "auto")


def test_support_jump_stops_at_the_refit_on_the_dense_route():
    """The full Newton step from the minimiser keeps the support (dense routes here): no extra step."""
    assert all(_jump_against_plain(family, (200, 60)) for family in ("poisson", "gamma", "logistic"))




# -- (f) logistic and multinomial -------------------------------------------------------


def _classification_problem(n_classes, seed=0):
    rng = np.random.RandomState(seed)
    n, p = 200, 30
    X = rng.standard_normal((n, p))
    support = np.array([3, 11, 22])
    B = np.zeros((p, n_classes))
    if n_classes == 2:
        B[support, 0] = [2.5, -3.0, 2.0]
        y = (X @ B[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    else:
        B[support] = 3.0 * np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [-1.0, 0.0, 1.0]])
        y = np.argmax(X @ B + 0.3 * rng.gumbel(size=(n, n_classes)), axis=1)
    return X, y, support


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("options", [{}, {"hessian": "woodbury"}, {"hessian": "cg"}, {"correction": False},
                                     {"damping": 0.0, "alpha": 0.0}, {"step_size": 4.0}])
def test_classifier_recovers_support_and_never_increases_the_objective(n_classes, options):
    """Logistic / multinomial I-OBS: support recovery on a clean design; the safeguard keeps
    the objective non-increasing (also with an over-long step fraction)."""
    X, y, support = _classification_problem(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = IOBSClassifier(k=3, **options).fit(X, y)
    np.testing.assert_array_equal(clf.support_, support)
    assert clf.score(X, y) > 0.9
    curve = clf.loss_curve_
    assert np.all(np.diff(curve) <= 1e-10 * np.abs(curve[:-1]))
    # (without the correction the top-k Newton step stops lowering the loss near the minimum on the support,
    # and projected-gradient steps, slower, end the fit there: 115 and 153 iterations here)
    assert clf.n_iter_ <= (300 if options.get("correction") is False else 30)


def test_regressor_safeguard_with_an_over_long_step():
    """A step fraction far above 1 overshoots; the safeguard keeps the fit monotone and convergent."""
    X, y, _, support = _sparse_problem(6, 100, 60, 5)
    y = y + 0.05 * np.random.RandomState(6).standard_normal(100)
    for correction in (True, False):
        model = IOBSRegressor(k=5, step_size=25.0, correction=correction).fit(X, y)
        curve = model.loss_curve_
        assert np.all(np.diff(curve) <= 1e-10 * np.abs(curve[:-1]))
        np.testing.assert_array_equal(model.support_, support)


# -- (g) determinism ------------------------------------------------------------------


@pytest.mark.parametrize("hessian", ["auto", "woodbury", "cg"])
def test_deterministic(hessian):
    X, y, _, _ = _sparse_problem(7, 50, 80, 6)
    y = y + np.random.RandomState(7).standard_normal(50)
    a = IOBSRegressor(k=6, hessian=hessian).fit(X, y)
    b = IOBSRegressor(k=6, hessian=hessian).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.loss_curve_, b.loss_curve_)
    Xc, yc, _ = _classification_problem(2 if hessian == "woodbury" else 3)
    c = IOBSClassifier(k=3, hessian=hessian).fit(Xc, yc)
    d = IOBSClassifier(k=3, hessian=hessian).fit(Xc, yc)
    np.testing.assert_array_equal(c.coef_, d.coef_)


# -- (h) model selection ----------------------------------------------------------------


def test_grid_search_over_damping():
    X, y, _, support = _sparse_problem(8, 120, 40, 4)
    y = y + 0.1 * np.random.RandomState(8).standard_normal(120)
    search = GridSearchCV(IOBSRegressor(k=4), {"damping": [0.0, 1e-3, 1e-2, 1e-1, 1.0]},
                          cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_params_["damping"] in (0.0, 1e-3, 1e-2, 1e-1, 1.0)
    np.testing.assert_array_equal(search.best_estimator_.support_, support)
    assert search.best_score_ > 0.99


# -- parameters -------------------------------------------------------------------------


@pytest.mark.parametrize("Estimator, params, name", [
    (IOBSRegressor, {"damping": -1.0}, "damping"),
    (IOBSRegressor, {"damping": "big"}, "damping"),
    (IOBSRegressor, {"correction": "yes"}, "correction"),
    (IOBSRegressor, {"hessian": "lu"}, "hessian"),
    (IOBSClassifier, {"hessian": None}, "hessian"),
    (IOBSClassifier, {"damping": np.inf}, "damping"),
])
def test_invalid_parameters_name_the_parameter(Estimator, params, name):
    X, y, _, _ = _sparse_problem(9, 30, 6, 2)
    with pytest.raises(ValueError, match=name):
        Estimator(k=2, **params).fit(X, y > 0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_default_damping_is_relative_to_the_hessian_scale():
    """damping is relative to mean(diag H): rescaling X does not change the iterates' support."""
    X, y, _, _ = _sparse_problem(10, 40, 100, 5)
    y = y + 0.5 * np.random.RandomState(10).standard_normal(40)
    a = IOBSRegressor(k=5, max_iter=3).fit(X, y)
    b = IOBSRegressor(k=5, max_iter=3).fit(1e3 * X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(1e3 * b.coef_, a.coef_, rtol=1e-6)


# -- scikit-learn conformance -----------------------------------------------------------


@pytest.mark.parametrize("estimator", [IOBSRegressor(), IOBSClassifier(k=2)], ids=lambda e: type(e).__name__)
def test_check_estimator_reports_no_failure(estimator):
    """k=2 for the classifier: the 2-feature blobs accuracy check needs both features."""
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"]
    assert failed == []


@pytest.mark.parametrize("rank", [None, 60])
def test_in_place_factorisation_equals_the_copying_one(rank):
    # a large exactly symmetric matrix is factored in place through its transpose (no LAPACK copy); its
    # solves must equal those of the copying path, also when M is singular (rank 60 < 150: the
    # pseudo-inverse path, which rebuilds M from the triangle and diagonal the factorisation left)
    from sparse_estimators.solvers._iobs_curvature import _factored, _SPDSolver

    rng = np.random.RandomState(0)
    n = _policy.IN_PLACE_MIN + 22
    A = rng.standard_normal((n, rank or 2 * n))
    M = A @ A.T
    assert np.array_equal(M, M.T)
    v = rng.standard_normal(n)
    copied = _SPDSolver(M).solve(v)
    built = M.copy()
    in_place = _factored(built)
    assert not np.array_equal(built, M)  # (it was overwritten: the in-place path ran)
    assert (in_place.chol is None) == (rank is not None)
    np.testing.assert_array_equal(in_place.solve(v), copied)
    # a matrix that is not exactly symmetric is copied as before (LAPACK reads its lower triangle)
    N = M.copy()
    N[0, 5] += 1e-9
    kept = N.copy()
    np.testing.assert_array_equal(_factored(kept).solve(v), _SPDSolver(N).solve(v))
    np.testing.assert_array_equal(kept, N)
