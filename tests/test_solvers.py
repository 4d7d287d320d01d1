"""Unit tests of the IHT solver, the iteration monitor and the adaptive step.

Expected outcomes are measured on data with a known answer (noiseless
designs with a planted support), inequalities recomputed here from the loss
(monotonicity, best iterate, the quadratic upper model, 1/L) and direct
checks of the stopping rules.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit, softmax

import sparse_estimators.solvers._iht as iht_module
from sparse_estimators.losses import LogisticLoss, MultinomialLoss, SquaredLoss
from sparse_estimators.solvers import IterationMonitor, SolverResult, accelerated_iht, backtracking_step, iht
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft

NON_HARD = [Soft(), Reciprocal(c=0.0), Reciprocal(c=0.5), Lq(q=2 / 3), Lq(q=0.3)]
NON_HARD_IDS = [repr(op) for op in NON_HARD]


def planted_regression(n=200, p=100, k=5, noise=0.0, intercept=1.5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    w = np.zeros(p)
    support = np.sort(rng.choice(p, k, replace=False))
    w[support] = rng.choice([-1.0, 1.0], k) * (1.0 + rng.rand(k))  # |w_j| in [1, 2]
    y = X @ w + intercept + noise * rng.standard_normal(n)
    return X, y, w, support


def run(loss, op, k, **kwargs):
    W0, b0 = loss.zeros()
    return iht(loss, op, k, W0=W0, b0=b0, **kwargs)


# --------------------------------------------------------------------------
# exact recovery and monotonicity
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("step_size", ["auto", 1.0])
def test_noiseless_exact_recovery(fmt, step_size):
    X, y, w, support = planted_regression()
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    loss = SquaredLoss(Xf, y)
    res = run(loss, Hard(), 5, step_size=step_size, max_iter=2000, tol=1e-12)
    assert isinstance(res, SolverResult)
    assert res.converged and not res.diverged
    assert res.n_iter < 2000
    assert_array_equal(res.support, support)
    assert_array_equal(np.flatnonzero(res.coef[:, 0]), support)
    assert_allclose(res.coef[:, 0], w, rtol=0, atol=1e-8)
    assert_allclose(loss.intercept(res.coef, res.intercept), [1.5], atol=1e-8)
    assert res.objective[-1] < 1e-15
    assert len(res.objective) == res.n_iter


@pytest.mark.parametrize("step_size", [1.0, 0.5, "auto"])
@pytest.mark.parametrize("k", [3, 5, 12])
def test_hard_objective_non_increasing(step_size, k):
    X, y, _, _ = planted_regression(n=120, p=60, noise=1.0, seed=1)
    loss = SquaredLoss(X, y)
    res = run(loss, Hard(), k, step_size=step_size, max_iter=300, tol=1e-10)
    obj = np.asarray(res.objective)
    f0 = loss.value(*loss.zeros())
    assert obj[0] <= f0
    assert np.all(np.diff(obj) <= 1e-12 * f0)
    # hard thresholding returns the last iterate, whose objective is the last recorded
    assert_allclose(loss.value(res.coef, res.intercept), obj[-1], rtol=1e-12)
    assert np.count_nonzero(res.coef) == k


@pytest.mark.parametrize("step_size", [1.0, "auto"])
def test_hard_objective_non_increasing_logistic(step_size):
    rng = np.random.RandomState(2)
    X = rng.standard_normal((150, 30))
    y = (rng.rand(150) < expit(X[:, :4] @ np.array([2.0, -1.5, 1.0, 1.0]) + 0.5)).astype(float)
    loss = LogisticLoss(X, y, alpha=0.01)
    res = run(loss, Hard(), 4, step_size=step_size, max_iter=200, tol=1e-10)
    obj = np.asarray(res.objective)
    assert np.all(np.diff(obj) <= 1e-12 * obj[0])


@pytest.mark.parametrize("op", NON_HARD, ids=NON_HARD_IDS)
@pytest.mark.parametrize("step_size", [1.0, "auto"])
def test_non_hard_operators_return_the_best_iterate(op, step_size):
    X, y, _, _ = planted_regression(noise=2.0)
    loss = SquaredLoss(X, y)
    res = run(loss, op, 10, step_size=step_size, max_iter=300)
    obj = np.asarray(res.objective)
    f_ret = loss.value(res.coef, res.intercept)
    assert_allclose(f_ret, obj.min(), rtol=1e-12)
    assert_array_equal(res.support, np.flatnonzero(np.any(res.coef != 0, axis=1)))
    assert res.support.size <= 10


@pytest.mark.parametrize("op", [Reciprocal(c=0.0), Lq(q=2 / 3)], ids=["reciprocal", "lq"])
def test_best_iterate_differs_from_last_when_objective_increases(op):
    # a case where f(x_t) increases (measured, fixed step 1/L), so "best" and "last" differ
    X, y, _, _ = planted_regression(noise=2.0)
    loss = SquaredLoss(X, y)
    res = run(loss, op, 10, step_size=1.0, max_iter=300)
    obj = np.asarray(res.objective)
    assert np.any(np.diff(obj) > 0)
    assert obj[-1] > obj.min() * (1 + 1e-6)
    assert_allclose(loss.value(res.coef, res.intercept), obj.min(), rtol=1e-12)


# --------------------------------------------------------------------------
# step sizes
# --------------------------------------------------------------------------
def test_adaptive_steps_at_least_half_of_one_over_L(monkeypatch):
    # 'auto' computes no global L: halving stops at or above 1/(2L), since the
    # model holds for every step up to 1/L
    X, y, _, _ = planted_regression(noise=0.5, seed=3)
    loss = SquaredLoss(X, y)
    L = loss.lipschitz()
    calls = []

    def recording(loss_, operator, k, W, b, f, gW, gb, eta, L_, Z=None, **kwargs):
        out = backtracking_step(loss_, operator, k, W, b, f, gW, gb, eta, L_, Z, **kwargs)
        calls.append((W.copy(), f, gW.copy(), out))
        return out

    monkeypatch.setattr(iht_module, "backtracking_step", recording)
    res = run(loss, Hard(), 5, step_size="auto", max_iter=100, tol=1e-10)
    assert len(calls) == res.n_iter
    etas = np.array([c[3][5] for c in calls])
    assert np.all(etas >= 0.5 / L)
    assert res.step_size >= 0.5 / L
    assert res.step_size == etas[-1]
    assert etas.max() > 1.0 / L  # the step does adapt
    # every accepted step above 1/L satisfies the quadratic upper model, recomputed here
    for W, f, gW, (Wn, bn, _, fn, support, eta, eta_next) in calls:
        assert eta_next in (eta, 2 * eta)
        dW = Wn - W
        if eta > 1.0 / L:
            assert loss.value(Wn, bn) <= f + np.vdot(gW, dW) + np.vdot(dW, dW) / (2 * eta) + 1e-12 * abs(f)
        assert_allclose(fn, loss.value(Wn, bn), rtol=1e-12)
        assert_array_equal(Wn, Hard()(W - eta * gW, 5))
        assert_array_equal(support, np.flatnonzero(Wn[:, 0]))


def test_least_squares_step_test_is_exact_near_convergence(monkeypatch):
    # near the minimiser the values of a trial step cancel to rounding; least squares then reads the
    # curvature along the step from the two linear predictors, (exactly) what the Gram matrix gives,
    # and needs no gradient at the trial point
    from sparse_estimators.solvers._base import curvature_ratio

    X, y, _, _ = planted_regression(noise=0.5, seed=3)
    loss = SquaredLoss(X, y)
    support = np.arange(5)
    W, b = loss.refit(support, *loss.zeros())
    Z = loss.linear_predictor(W, b)
    f, gW, gb = loss.value_and_gradient(W, b)
    dW = np.zeros_like(W)
    dW[support, 0] = 1e-7 * np.arange(1, 6)
    Wn = W + dW
    Zn = loss.linear_predictor(Wn, b)
    fn = loss.value_from_z(Zn, Wn)
    eta = 0.3
    Xc = X - X.mean(axis=0)
    expected = 0.5 * np.sum((Xc @ dW) ** 2) / X.shape[0] / (np.vdot(dW, dW) / (2 * eta))
    monkeypatch.setattr(loss, "gradient_from_z", lambda *a: pytest.fail("gradient evaluated"))
    assert_allclose(curvature_ratio(loss, f, fn, Zn, W, b, Wn, b, gW, gb, eta, Z_start=Z), expected, rtol=1e-6)


@pytest.mark.parametrize("op", [Hard(), Lq()], ids=["hard", "lq"])
def test_backtracking_step_direct(op):
    X, y, _, _ = planted_regression(n=80, p=40, noise=0.5, seed=4)
    loss = SquaredLoss(X, y)
    L = loss.lipschitz()
    W, b = loss.zeros()
    f, gW, gb = loss.value_and_gradient(W, b)
    # from a huge trial step it must come down to one where the model holds
    Wn, bn, Z, fn, support, eta, eta_next = backtracking_step(loss, op, 4, W, b, f, gW, gb, 1e6 / L, L)
    assert eta_next in (eta, 2 * eta)
    assert eta >= 1.0 / L
    dW = Wn - W
    assert fn <= f + np.vdot(gW, dW) + np.vdot(dW, dW) / (2 * eta) + 1e-12 * abs(f)
    assert_allclose(Z, loss.linear_predictor(Wn, bn))
    assert np.count_nonzero(Wn) == 4


def test_backtracking_step_never_below_one_over_L():
    X, y, _, _ = planted_regression(n=80, p=40, noise=0.5, seed=4)
    loss = SquaredLoss(X, y)
    L = loss.lipschitz()
    W, b = loss.zeros()
    f, gW, gb = loss.value_and_gradient(W, b)
    for eta0 in [1e-6 / L, 0.1 / L, 0.49 / L]:
        *_, eta, _ = backtracking_step(loss, Hard(), 4, W, b, f, gW, gb, eta0, L)
        assert eta >= 1.0 / L


def test_backtracking_step_logistic_intercept():
    rng = np.random.RandomState(5)
    X = rng.standard_normal((100, 20))
    y = (rng.rand(100) < expit(X[:, 0] + 2)).astype(float)
    loss = LogisticLoss(X, y)
    L = loss.lipschitz()
    W, b = loss.zeros()
    f, gW, gb = loss.value_and_gradient(W, b)
    Wn, bn, _, fn, _, eta, _ = backtracking_step(loss, Hard(), 1, W, b, f, gW, gb, 1.0 / L, L)
    assert eta >= 1.0 / L
    assert_allclose(bn, b - eta * gb)  # the intercept takes a plain gradient step
    dW, db = Wn - W, bn - b
    model = f + np.vdot(gW, dW) + np.vdot(gb, db) + (np.vdot(dW, dW) + np.vdot(db, db)) / (2 * eta)
    assert fn <= model + 1e-12 * f


def test_max_iter_reached_is_not_converged():
    X, y, _, _ = planted_regression(noise=0.5)
    loss = SquaredLoss(X, y)
    for step_size in ["auto", 1.0, 0.01]:
        res = run(loss, Hard(), 5, step_size=step_size, max_iter=2, tol=1e-12)
        assert res.converged is False
        assert res.diverged is False
        assert res.n_iter == 2
        assert len(res.objective) == 2


@pytest.mark.parametrize("op", [Hard(), Soft(), Lq()], ids=["hard", "soft", "lq"])
def test_too_large_step_diverges_with_finite_coef(op):
    X, y, _, _ = planted_regression(n=200, p=50, noise=1.0)
    loss = SquaredLoss(X, y)
    f0 = loss.value(*loss.zeros())
    res = run(loss, op, 5, step_size=10.0, max_iter=500)
    assert res.diverged is True
    assert res.converged is False
    assert res.n_iter < 500
    assert np.all(np.isfinite(res.coef)) and np.all(np.isfinite(res.intercept))
    # one objective per iteration; only the last (diverged) one may be infinite
    assert len(res.objective) == res.n_iter
    assert np.all(np.isfinite(res.objective[:-1]))
    # the returned iterate is the best seen after at least one step: it has
    # selected k features (unlike the zero start) and no recorded iterate is better
    assert np.count_nonzero(np.any(res.coef != 0, axis=1)) == 5
    assert np.all(np.asarray(res.objective) >= loss.value(res.coef, res.intercept) - 1e-12)
    assert loss.value(res.coef, res.intercept) == pytest.approx(min(res.objective), rel=1e-12)
    assert f0 > 0
    assert_allclose(res.step_size, 10.0 / loss.lipschitz())


# --------------------------------------------------------------------------
# intercepts and shared supports
# --------------------------------------------------------------------------
def _large_intercept_logistic():
    rng = np.random.RandomState(0)
    n, p = 300, 10
    X = rng.standard_normal((n, p))
    y = (rng.rand(n) < expit(2.0 * X[:, 3] + 3.0)).astype(float)
    return LogisticLoss(X, y)


@pytest.mark.parametrize("step_size", ["auto", 1.0])
def test_logistic_intercept_is_never_thresholded(step_size):
    loss = _large_intercept_logistic()
    res = run(loss, Hard(), 1, step_size=step_size, max_iter=5000, tol=1e-7)
    assert res.converged
    assert np.count_nonzero(res.coef) == 1
    assert_array_equal(np.flatnonzero(res.coef[:, 0]), [3])
    assert_array_equal(res.support, [3])
    assert res.intercept.shape == (1,)
    assert res.intercept[0] > 2.0  # the large intercept is kept and fitted
    # the returned point is optimal on its support, intercept included
    _, gW, gb = loss.value_and_gradient(res.coef, res.intercept)
    assert abs(gb[0]) < 1e-5 and abs(gW[3, 0]) < 1e-5
    W_ref, b_ref = loss.refit(np.array([3]), res.coef, res.intercept)
    assert_allclose(res.coef, W_ref, atol=1e-4)
    assert_allclose(res.intercept, b_ref, atol=1e-4)


@pytest.mark.parametrize("problem", ["logistic", "squared"])
def test_adaptive_step_reaches_a_tight_tolerance(problem):
    if problem == "logistic":
        loss, k = _large_intercept_logistic(), 1
    else:
        X, y, _, _ = planted_regression(n=120, p=60, noise=1.0, seed=1)
        loss, k = SquaredLoss(X, y), 5
    fixed = run(loss, Hard(), k, step_size=1.0, max_iter=3000, tol=1e-8)
    assert fixed.converged and fixed.n_iter < 1000  # the problem is easy
    res = run(loss, Hard(), k, step_size="auto", max_iter=3000, tol=1e-8)
    assert res.converged
    assert res.n_iter <= fixed.n_iter
    assert_allclose(res.coef, fixed.coef, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", [Hard(), Soft(), Reciprocal(), Lq()], ids=["hard", "soft", "rec", "lq"])
def test_multinomial_rows_share_one_support(op):
    rng = np.random.RandomState(1)
    K, p, n = 3, 20, 400
    W_true = np.zeros((p, K))
    rows = np.array([2, 7, 11])
    W_true[rows] = 2.0 * rng.standard_normal((3, K))
    X = rng.standard_normal((n, p))
    P = softmax(X @ W_true, axis=1)
    y = np.array([rng.choice(K, p=pi) for pi in P])
    loss = MultinomialLoss(X, y, K)
    res = iht(loss, op, 3, W0=np.zeros((p, K)), b0=loss.initial_intercept(), max_iter=1000)
    nonzero_rows = np.flatnonzero(np.any(res.coef != 0, axis=1))
    assert_array_equal(nonzero_rows, rows)
    assert_array_equal(res.support, rows)
    assert np.all(res.coef[rows] != 0)  # whole rows are kept, every class
    assert res.coef.shape == (p, K) and res.intercept.shape == (K,)


def test_squared_intercept_is_not_a_variable():
    X, y, _, _ = planted_regression(intercept=-4.0)
    loss = SquaredLoss(X, y)
    W0, b0 = loss.zeros()
    res = iht(loss, Hard(), 5, W0=W0, b0=b0, max_iter=500, tol=1e-12)
    assert_array_equal(res.intercept, b0)  # eliminated by centering, recovered by loss.intercept
    assert_allclose(loss.intercept(res.coef, res.intercept), [-4.0], atol=1e-8)


def test_warm_start_is_thresholded_first():
    X, y, w, support = planted_regression()
    loss = SquaredLoss(X, y)
    W0 = np.ones((100, 1))  # dense start
    res = iht(loss, Hard(), 5, W0=W0, b0=np.zeros(1), max_iter=1000, tol=1e-12)
    assert np.count_nonzero(res.coef) == 5
    assert_array_equal(W0, np.ones((100, 1)))  # the caller's array is not modified
    assert_array_equal(res.support, support)


# --------------------------------------------------------------------------
# IterationMonitor
# --------------------------------------------------------------------------
def _monitor(**kwargs):
    W0, b0 = np.zeros((4, 1)), np.zeros(1)
    kw = {"tol": 1e-3, "keep_best": False}
    kw.update(kwargs)
    return IterationMonitor(10.0, W0, b0, **kw), W0, b0


def test_monitor_stops_on_same_support_and_small_change():
    mon, W0, b0 = _monitor()
    W1 = np.array([[1.0], [0.0], [2.0], [0.0]])
    assert mon.update(1, W0, b0, W1, b0, 5.0, np.array([0, 2])) is False
    W2 = W1 * (1 + 1e-4)
    assert mon.update(2, W1, b0, W2, b0, 4.9, np.array([0, 2])) is True
    assert mon.converged and not mon.diverged
    assert mon.objective == [5.0, 4.9]


def test_monitor_does_not_stop_on_support_change():
    mon, W0, b0 = _monitor()
    W1 = np.array([[1.0], [0.0], [2.0], [0.0]])
    mon.update(1, W0, b0, W1, b0, 5.0, np.array([0, 2]))
    W2 = np.array([[1.0], [1e-9], [2.0], [0.0]])  # tiny change, new support
    assert mon.update(2, W1, b0, W2, b0, 4.9, np.array([0, 1])) is False
    assert not mon.converged
    # the same support twice with a tiny change now stops
    assert mon.update(3, W2, b0, W2, b0, 4.9, np.array([0, 1])) is True


def test_monitor_does_not_stop_on_large_change():
    mon, W0, b0 = _monitor()
    W1 = np.array([[1.0], [0.0], [2.0], [0.0]])
    mon.update(1, W0, b0, W1, b0, 5.0, np.array([0, 2]))
    W2 = W1 * 1.01  # relative change 1e-2 > tol
    assert mon.update(2, W1, b0, W2, b0, 4.9, np.array([0, 2])) is False
    # the intercept counts in the change too
    assert mon.update(3, W2, b0, W2, b0 + 5.0, 4.8, np.array([0, 2])) is False
    assert not mon.converged


def test_monitor_first_iteration_without_move_stops():
    mon, W0, b0 = _monitor()
    assert mon.update(1, W0, b0, W0.copy(), b0.copy(), 10.0, np.array([0, 1])) is True
    assert mon.converged


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e6])
def test_monitor_detects_divergence(bad):
    mon, W0, b0 = _monitor(keep_best=False)
    W1 = np.array([[1.0], [0.0], [0.0], [0.0]])
    mon.update(1, W0, b0, W1, b0, 5.0, np.array([0]))
    W2 = np.array([[1e3], [0.0], [0.0], [0.0]])
    assert mon.update(2, W1, b0, W2, b0, bad, np.array([0])) is True
    assert mon.diverged and not mon.converged
    # the bad value is recorded (as inf when not finite) so there is one entry per iteration
    assert mon.objective[0] == 5.0 and len(mon.objective) == 2
    assert mon.objective[1] == (bad if np.isfinite(bad) else np.inf)
    res = mon.result(W2, b0, np.array([0]), 2, 0.1)
    assert res.diverged
    assert_array_equal(res.coef, W1)  # the best finite iterate even without keep_best


def test_monitor_detects_non_finite_coefficients():
    mon, W0, b0 = _monitor()
    W1 = np.array([[np.nan], [0.0], [0.0], [0.0]])
    assert mon.update(1, W0, b0, W1, b0, 5.0, np.array([0])) is True
    assert mon.diverged


def test_monitor_keep_best_returns_lowest_objective():
    mon, W0, b0 = _monitor(keep_best=True)
    Ws = [np.array([[1.0], [0], [0], [0]]), np.array([[0.0], [2], [0], [0]]), np.array([[0.0], [0], [3], [1]])]
    fs = [6.0, 4.0, 7.0]
    prev = W0
    for it, (W, f) in enumerate(zip(Ws, fs, strict=True), start=1):
        mon.update(it, prev, b0, W, b0 + it, f, np.flatnonzero(W[:, 0]))
        prev = W
    res = mon.result(Ws[-1], b0 + 3, np.array([2, 3]), 3, 0.5)
    assert_array_equal(res.coef, Ws[1])
    assert_array_equal(res.intercept, b0 + 2)
    assert_array_equal(res.support, [1])
    assert res.objective == fs and res.n_iter == 3 and res.step_size == 0.5
    # without keep_best the last iterate is returned
    mon2, _, _ = _monitor(keep_best=False)
    prev = W0
    for it, (W, f) in enumerate(zip(Ws, fs, strict=True), start=1):
        mon2.update(it, prev, b0, W, b0, f, np.flatnonzero(W[:, 0]))
        prev = W
    assert_array_equal(mon2.result(Ws[-1], b0, np.array([2, 3]), 3, 0.5).coef, Ws[-1])


def test_monitor_best_is_a_copy():
    mon, W0, b0 = _monitor(keep_best=True)
    W1 = np.array([[1.0], [0.0], [0.0], [0.0]])
    mon.update(1, W0, b0, W1, b0, 1.0, np.array([0]))
    W1[0, 0] = 99.0  # a solver updating its arrays in place must not corrupt the record
    assert mon.result(W1, b0, np.array([0]), 1, 1.0).coef[0, 0] == 1.0


def test_monitor_starting_point_is_best_when_nothing_improves():
    mon, W0, b0 = _monitor(keep_best=True)
    W1 = np.array([[1.0], [0.0], [0.0], [0.0]])
    mon.update(1, W0, b0, W1, b0, 20.0, np.array([0]))
    res = mon.result(W1, b0, np.array([0]), 1, 1.0)
    assert_array_equal(res.coef, W0)
    assert res.support.size == 0


# --------------------------------------------------------------------------
# support_refit: jump to the minimiser on a settled support
# --------------------------------------------------------------------------
def _logistic_problem(seed=3, n=300, p=60):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    w = np.zeros(p)
    w[[4, 17, 33, 50]] = [2.0, -1.5, 1.0, -2.5]
    y = (rng.rand(n) < expit(X @ w + 0.3)).astype(float)
    return LogisticLoss(X, y, alpha=1e-3)


@pytest.mark.parametrize("solver", [iht, accelerated_iht], ids=["iht", "accelerated"])
@pytest.mark.parametrize("patience", [1, 3])
@pytest.mark.parametrize("family", ["squared", "logistic"])
def test_support_refit_ends_at_the_limit_of_plain_iht(family, patience, solver):
    # while the support stays S, hard-thresholding IHT is gradient descent on
    # the loss restricted to S: its limit is the minimiser on S, a fixed point
    if family == "squared":
        X, y, _, _ = planted_regression(noise=0.5, seed=4)
        loss = SquaredLoss(X, y)
    else:
        loss = _logistic_problem()
    k = 4 if family == "logistic" else 5
    W0, b0 = loss.zeros()
    options = dict(W0=W0, b0=b0, step_size=1.0, max_iter=20000, tol=1e-13)
    plain = solver(loss, Hard(), k, **options)
    jump = solver(loss, Hard(), k, **options, support_refit=patience)
    assert plain.converged and jump.converged
    # only the jump's result is flagged as the minimiser on its support
    assert jump.refitted and not plain.refitted
    assert_array_equal(jump.support, plain.support)
    assert_allclose(jump.coef, plain.coef, rtol=1e-7, atol=1e-9)
    assert jump.n_iter < plain.n_iter / 5
    assert len(jump.objective) == jump.n_iter
    # a fixed point: zero gradient on the support, and the step keeps the support
    _, gW, gb = loss.value_and_gradient(jump.coef, jump.intercept)
    assert np.max(np.abs(gW[jump.support])) < 1e-8
    eta = 1.0 / loss.lipschitz()
    assert_array_equal(Hard().support(jump.coef - eta * gW, k), jump.support)


@pytest.mark.parametrize("op", NON_HARD, ids=NON_HARD_IDS)
def test_support_refit_only_for_hard_thresholding(op):
    # other operators' fixed points are not minimisers on the support
    X, y, _, _ = planted_regression(noise=0.5, seed=5)
    loss = SquaredLoss(X, y)
    plain = run(loss, op, 5, max_iter=300)
    jump = run(loss, op, 5, max_iter=300, support_refit=1)
    assert_array_equal(jump.coef, plain.coef)
    assert jump.n_iter == plain.n_iter
    assert not jump.refitted


# --------------------------------------------------------------------------
# the loop's shortcuts equal the general computations they skip
# --------------------------------------------------------------------------
def test_same_indices_equals_array_equal():
    from sparse_estimators.solvers._base import same_indices

    a = np.array([1, 4, 7, 9])
    cases = [(a, a.copy()), (a, np.array([1, 4, 8, 9])), (a, a[:3]), (a, a.astype(np.int32)),
             (a, a[::-1].copy()), (np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)),
             (np.array([0.0, 1.0]), np.array([-0.0, 1.0])),  # floats compare by value (-0.0 == 0.0) ...
             (np.array([np.nan]), np.array([np.nan])),  # ... and NaN equals nothing, as np.array_equal says
             (np.arange(6)[::2], np.array([0, 2, 4]))]  # a strided view
    for x, y in cases:
        assert same_indices(x, y) is np.array_equal(x, y), (x, y)


@pytest.mark.parametrize("op", [Hard(), Soft()], ids=["hard", "soft"])
@pytest.mark.parametrize("task", ["squared", "logistic"])
def test_monitor_verbose_path_gives_identical_fits(op, task, capsys):
    # verbose=2 computes the iterate's change at every iteration; verbose=0 only where the stopping
    # test can use it (unchanged support, first iteration): the fits must be bit-identical
    X, y, _, _ = planted_regression(n=120, p=60, k=6, noise=0.8, seed=7)
    loss = SquaredLoss(X, y) if task == "squared" else LogisticLoss(X, (y > np.median(y)).astype(float))
    quiet, loud = run(loss, op, 6, support_refit=0), run(loss, op, 6, support_refit=0, verbose=2)
    assert capsys.readouterr().out.count("[IHT] iter") == loud.n_iter > 2
    assert quiet.n_iter == loud.n_iter and quiet.converged == loud.converged
    assert_array_equal(quiet.coef, loud.coef)
    assert_array_equal(quiet.intercept, loud.intercept)
    assert quiet.objective == loud.objective


def test_curvature_ratio_same_with_intercept_object_or_copy():
    # an intercept that is no variable is passed on as the same object: its (zero) step is skipped,
    # which must give exactly the ratio computed with an explicit zero step
    from sparse_estimators.solvers._base import curvature_ratio

    X, y, _, _ = planted_regression(n=80, p=40, noise=0.5, seed=5)
    for loss in (SquaredLoss(X, y), LogisticLoss(X, (y > 0).astype(float))):
        W, b = loss.zeros()
        Z = loss.linear_predictor(W, b)
        f, gW, gb = loss.value_and_gradient(W, b)
        assert gb is None or loss.intercept_is_variable
        for eta in (0.05, 0.5, 5.0):
            Wn = Hard()(W - eta * gW, 4)
            bn = b if gb is None else b - eta * gb
            Zn = loss.linear_predictor(Wn, bn)
            fn = loss.value_from_z(Zn, Wn)
            for Z_start in (None, Z):
                fast = curvature_ratio(loss, f, fn, Zn, W, b, Wn, bn, gW, gb, eta, Z_start=Z_start)
                slow = curvature_ratio(loss, f, fn, Zn, W, b, Wn, bn.copy(), gW, gb, eta, Z_start=Z_start)
                assert fast == slow
                assert 0.0 < fast


def test_plain_hard_projection_support_is_its_selection():
    # iht takes the start's support from the projection for plain hard thresholding; it must be what
    # selecting again on the projected rows gives, with ties (zero rows, equal magnitudes), several outputs
    # and k >= p
    from sparse_estimators.solvers._iht import plain_hard
    from sparse_estimators.structures import Rows

    structure = Rows(Hard())
    assert plain_hard(structure) and not plain_hard(Rows(Soft()))
    assert not plain_hard(structure.with_forced([2])) and not plain_hard(structure.with_excluded([2]))
    rng = np.random.RandomState(0)
    starts = [np.zeros((30, 1)), np.zeros((30, 3)), rng.standard_normal((30, 1)), rng.standard_normal((30, 2))]
    sparse_start = np.zeros((30, 1))
    sparse_start[[3, 17], 0] = [1.0, -2.0]
    tied = np.zeros((30, 1))
    tied[[1, 5, 9, 20], 0] = [1.0, -1.0, 1.0, 2.0]
    starts += [sparse_start, tied, np.round(rng.standard_normal((30, 1)))]
    for W0 in starts:
        for k in (1, 3, 5, 30, 40):
            W, support = structure(W0, k, return_support=True)
            assert_array_equal(support, structure.support(W, k))


@pytest.mark.parametrize("task", ["squared", "logistic"])
def test_iht_plain_hard_start_equals_general_start(task, monkeypatch):
    X, y, _, _ = planted_regression(n=120, p=60, k=6, noise=0.8, seed=8)
    loss = SquaredLoss(X, y) if task == "squared" else LogisticLoss(X, (y > np.median(y)).astype(float))
    W0 = np.zeros((60, 1))
    W0[[4, 9], 0] = [0.5, -0.3]  # fewer non-zero rows than k: ties among the zero rows
    fast = iht(loss, Hard(), 6, W0=W0, b0=loss.zeros()[1], support_refit=1)
    monkeypatch.setattr(iht_module, "plain_hard", lambda structure: False)
    slow = iht(loss, Hard(), 6, W0=W0, b0=loss.zeros()[1], support_refit=1)
    assert fast.n_iter == slow.n_iter and fast.objective == slow.objective
    assert_array_equal(fast.coef, slow.coef)
    assert_array_equal(fast.support, slow.support)
