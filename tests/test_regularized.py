"""Regularized IHT (Axiotis & Sviridenko, paper 000, Algorithm 1): solver and estimators.

Each test names in its docstring what of the paper (or of notes §3) it checks.
"""

import warnings

import numpy as np
import pytest
from _benchmarks import load_benchmark
from _problems import fig_1f_problem
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import IHTRegressor, RegularizedIHTClassifier, RegularizedIHTRegressor
from sparse_estimators.losses import LogisticLoss, SquaredLoss
from sparse_estimators.solvers import iht, regularized_iht
from sparse_estimators.thresholding import Hard, Soft

# --------------------------------------------------------------------------- helpers


#: Lemma E.1's instance, as the reproduction script of Fig. 1(e) builds it
hard_instance = load_benchmark("reproduce_paper000").hard_instance


# Lemma E.1 holds for any s' <= 0.6 s kappa^2; we take the largest, s' = 480
# (kappa = 20, s = 2), for which the best s'-sparse loss is 81 % below the start.
KAPPA, S_STAR = 20, 2
K_HARD = int(0.6 * S_STAR * KAPPA**2)


def hard_start(n, I3, k=K_HARD):
    """x = 1 on k coordinates of I3 (the first k), 0 elsewhere."""
    x = np.zeros(n)
    x[I3[:k]] = 1.0
    return x


def lsq(A, b, x):
    """The paper's f(x) = ||A x - b||^2 / 2 (summed, as in Lemma E.1)."""
    r = A @ x - b
    return 0.5 * float(r @ r)


def weights_history(loss, k, n_iter, **options):
    """Weights and iterates after 1..n_iter iterations (the solver is deterministic)."""
    W0, b0 = loss.zeros()
    out = []
    for t in range(1, n_iter + 1):
        r = regularized_iht(loss, Hard(), k, W0=W0, b0=b0, max_iter=t, tol=0.0, verbose=0, **options)
        out.append((r.n_iter, r.weights.copy(), r.coef.copy()))
    return out


def sparse_problem(n=80, p=30, k=4, n_outputs=1, seed=0, noise=0.0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    support = np.sort(rng.choice(p, k, replace=False))
    W = np.zeros((p, n_outputs))
    W[support] = rng.choice([-1.0, 1.0], (k, n_outputs)) * rng.uniform(1.0, 3.0, (k, n_outputs))
    Y = X @ W + noise * rng.standard_normal((n, n_outputs))
    return X, (Y[:, 0] if n_outputs == 1 else Y), support


# --------------------------------------------------------------------------- (a) Lemma E.1


def test_lemma_e1_plain_iht_is_stuck():
    """Paper 000, Lemma E.1: x = 1 on s' coordinates of I3 is a fixed point of IHT
    with step 1/beta (and of the package's adaptive step), far above f(x*)."""
    A, b, I1, I2, I3 = hard_instance(KAPPA, S_STAR)
    n = A.shape[0]
    assert n == 842
    x0 = hard_start(n, I3)
    S = np.flatnonzero(x0)
    f0 = lsq(A, b, x0)
    x_star = np.zeros(n)
    x_star[I1] = b[I1]
    assert f0 - lsq(A, b, x_star) >= 0.1 * S_STAR * KAPPA**2  # the lemma's gap
    loss = SquaredLoss(A, b, None, fit_intercept=False)
    for step_size in ("auto", 1.0):
        r = iht(loss, Hard(), K_HARD, W0=x0[:, None], b0=np.zeros(1), step_size=step_size,
                max_iter=200, tol=1e-8)
        assert np.array_equal(r.support, S)
        assert lsq(A, b, r.coef[:, 0]) == pytest.approx(f0, rel=1e-12)
    # the estimator path: same fixed point
    est = IHTRegressor(k=K_HARD, fit_intercept=False, debias=False).fit(A, b, coef_init=x0)
    assert np.array_equal(est.support_, S)
    assert lsq(A, b, est.coef_) == pytest.approx(f0, rel=1e-12)


@pytest.mark.parametrize("step_size", ["auto", 0.5])
def test_lemma_e1_regularized_iht_escapes(step_size):
    """Paper 000, Lemma E.1 / Fig. 1(e): from IHT's fixed point, regularized IHT cuts
    the loss by about 80 % (paper: "almost a factor of 5"); we require >= 60 %."""
    A, b, I1, I2, I3 = hard_instance(KAPPA, S_STAR)
    n = A.shape[0]
    x0 = hard_start(n, I3)
    f0 = lsq(A, b, x0)
    # best K_HARD-sparse loss: I1 and I2 fitted exactly, the rest from I3
    best = 0.5 * (I3.size - (K_HARD - I1.size - I2.size))
    loss = SquaredLoss(A, b, None, fit_intercept=False)
    T = 300
    r = regularized_iht(loss, Hard(), K_HARD, W0=x0[:, None], b0=np.zeros(1), step_size=step_size,
                        max_iter=T, tol=1e-4, verbose=0)
    f = lsq(A, b, r.coef[:, 0])
    reduction = 1 - f / f0
    print(f"\nLemma E.1 (n={n}, kappa={KAPPA}, k*={S_STAR}, k={K_HARD}, T={T}, step={step_size!r}): "
          f"f0={f0:.1f}, regularized IHT f={f:.1f}, reduction {100 * reduction:.1f} % "
          f"(best possible {100 * (1 - best / f0):.1f} %), {r.n_iter} iterations")
    assert reduction >= 0.6
    assert f >= best * (1 - 1e-9)
    assert set(I1) <= set(r.support)  # the planted support is found


def test_lemma_e1_estimator_path():
    """Paper 000, Lemma E.1 through the estimators (mean loss, coef_init): IHTRegressor
    stays at its start, RegularizedIHTRegressor lowers the loss by >= 60 %."""
    A, b, I1, I2, I3 = hard_instance(KAPPA, S_STAR)
    x0 = hard_start(A.shape[0], I3)
    f0 = lsq(A, b, x0)
    plain = IHTRegressor(k=K_HARD, fit_intercept=False, debias=False).fit(A, b, coef_init=x0)
    reg = RegularizedIHTRegressor(k=K_HARD, fit_intercept=False, debias=False, max_iter=300).fit(
        A, b, coef_init=x0)
    f_plain, f_reg = lsq(A, b, plain.coef_), lsq(A, b, reg.coef_)
    print(f"\nLemma E.1 estimators: IHT reduction {100 * (1 - f_plain / f0):.1f} %, "
          f"regularized IHT reduction {100 * (1 - f_reg / f0):.1f} % in {reg.n_iter_} iterations")
    assert f_plain == pytest.approx(f0, rel=1e-12)
    assert 1 - f_reg / f0 >= 0.6
    assert reg.support_.size == K_HARD


# --------------------------------------------------------------------------- (b) weights


@pytest.mark.parametrize("n_outputs", [1, 2])
def test_weights_follow_algorithm_1(n_outputs):
    """Paper 000, Algorithm 1 (notes §3): w_0 = 1; w_{t+1} = (w_t - c (w_t x_t)^2 /
    sum_j w_j x_j^2)_{>=1/2} from the OLD x_t, w_t, skipped while the sum is 0;
    with several outputs x_j^2 is the squared norm of row j."""
    X, Y, _ = sparse_problem(n_outputs=n_outputs)
    loss = SquaredLoss(X, Y, None, fit_intercept=True)
    k, c = 4, 0.15
    hist = weights_history(loss, k, 40, weight_step=c)
    p = X.shape[1]
    # iteration 1 starts at x_0 = 0: nothing to update
    np.testing.assert_array_equal(hist[0][1], np.ones(p))
    for (_, w_prev, x_prev), (_, w, _) in zip(hist, hist[1:], strict=False):
        sq = (x_prev**2).sum(axis=1)
        reg = w_prev @ sq
        expected = w_prev - c * w_prev**2 * sq / reg if reg > 0 else w_prev.copy()
        expected[expected < 0.5] = 0.0
        np.testing.assert_allclose(w, expected, rtol=0, atol=1e-14)


def test_weights_invariants():
    """Paper 000, Sec. B (proof of Thm 1.1): weights start at 1, never increase, lie in
    {0} u [1/2, 1], a zero weight stays zero, and only features of x_t lose weight."""
    X, y, _ = sparse_problem(p=30, k=5, noise=0.5, seed=3)
    loss = SquaredLoss(X, y, None, fit_intercept=True)
    hist = weights_history(loss, 5, 60, weight_step=0.2)
    ws = np.array([h[1] for h in hist])
    assert np.all((ws == 0) | ((ws >= 0.5) & (ws <= 1)))
    assert np.all(np.diff(ws, axis=0) <= 0)
    for t in range(1, len(hist)):
        was_zero = hist[t - 1][1] == 0
        assert np.all(hist[t][1][was_zero] == 0)
        moved = hist[t][1] != hist[t - 1][1]
        assert np.all(np.any(hist[t - 1][2][moved] != 0, axis=1))
    # not vacuous: some weights reached 0, features never selected kept weight 1
    assert (ws[-1] == 0).sum() >= 5
    assert (ws[-1] == 1).sum() >= 10


def test_intercept_is_not_penalised():
    """Notes §3/§6: the intercept variable takes a plain gradient step, without weight.

    Pure-noise features, 80 % positives: the intercept must reach the log-odds
    optimum on the selected support (a penalised one would be shrunk to ~0).
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 10))
    y = (rng.uniform(size=200) < 0.8).astype(int)
    loss = LogisticLoss(X, y, None, True, 1e-4)
    W0, b0 = loss.zeros()
    r = regularized_iht(loss, Hard(), 2, W0=W0, b0=b0, max_iter=3000, tol=1e-6, verbose=0)
    assert r.converged
    W_opt, b_opt = loss.refit(r.support, r.coef, r.intercept)
    assert abs(b_opt[0]) > 1.0
    assert r.intercept[0] == pytest.approx(b_opt[0], abs=1e-4)
    np.testing.assert_allclose(r.coef, W_opt, atol=1e-4)
    assert r.weights.shape == (10,)


# --------------------------------------------------------------------------- (c) k largest


def test_keeps_k_largest_not_smallest():
    """Notes §3 [fix]: the paper's Fig. 2 code zeroes the k smallest entries
    (keeps n - k); Algorithm 1's H_k keeps the k largest."""
    p, k = 20, 3
    y = np.linspace(0.5, 2.0, p) * np.where(np.arange(p) % 2, 1.0, -1.0)
    y = y[np.random.RandomState(1).permutation(p)]
    top = np.sort(np.argsort(-np.abs(y))[:k])
    X = np.eye(p)  # orthogonal design: the best k-sparse fit is the top-k of |y|
    loss = SquaredLoss(X, y, None, fit_intercept=False)
    W0, b0 = loss.zeros()
    one = regularized_iht(loss, Hard(), k, W0=W0, b0=b0, step_size=0.5, max_iter=1, tol=0.0, verbose=0)
    assert np.count_nonzero(one.coef) == k
    np.testing.assert_array_equal(one.support, top)
    model = RegularizedIHTRegressor(k=k, fit_intercept=False).fit(X, y)
    np.testing.assert_array_equal(model.support_, top)
    assert np.count_nonzero(model.coef_) == k
    np.testing.assert_allclose(model.coef_[top], y[top])


# --------------------------------------------------------------------------- (d) large c


@pytest.mark.parametrize("weight_step", [1.0, 10.0, 1e6])
def test_large_weight_step_is_plain_iht(weight_step):
    """Paper 000, Sec. 6 / Fig. 1(d): c -> infinity makes regularized IHT plain IHT
    (same support and, after the refit, same coefficients on a clean design)."""
    X, y, support = sparse_problem(n=100, p=40, k=5, seed=4, noise=0.05)
    reg = RegularizedIHTRegressor(k=5, weight_step=weight_step).fit(X, y)
    plain = IHTRegressor(k=5).fit(X, y)
    np.testing.assert_array_equal(reg.support_, plain.support_)
    np.testing.assert_array_equal(reg.support_, support)
    np.testing.assert_allclose(reg.coef_, plain.coef_, rtol=1e-10, atol=1e-12)


def test_huge_weight_step_stays_stuck_on_lemma_e1():
    """Paper 000, Fig. 1(d) read on Lemma E.1: with c far above k (every weight of
    the first support dropped at once) the method is plain IHT and stays stuck.

    With the theory's fixed step eta = 1/(2L): the single weighted step halves x
    on S and lifts I1, I2 only to just below that. (With step_size='auto' the
    first weighted step is accepted at eta = 1/L and already leaves the trap.)
    """
    A, b, I1, I2, I3 = hard_instance(KAPPA, S_STAR)
    x0 = hard_start(A.shape[0], I3)
    loss = SquaredLoss(A, b, None, fit_intercept=False)
    r = regularized_iht(loss, Hard(), K_HARD, W0=x0[:, None], b0=np.zeros(1), step_size=0.5,
                        max_iter=300, tol=1e-6, verbose=0, weight_step=1e4)
    np.testing.assert_array_equal(r.support, np.flatnonzero(x0))
    assert np.all(r.weights[r.support] == 0)
    assert lsq(A, b, r.coef[:, 0]) == pytest.approx(lsq(A, b, x0), rel=1e-6)


# --------------------------------------------------------------------------- (e) recovery


def test_noiseless_gaussian_recovery_at_true_sparsity():
    """Paper 000, Fig. 1(f) setting (A 100 x 800 N(0, 1), b = A x): exact recovery at k = k*."""
    for seed in range(3):
        rng = np.random.RandomState(seed)
        A = rng.standard_normal((100, 800))
        S = np.sort(rng.choice(800, 5, replace=False))
        x = np.zeros(800)
        x[S] = rng.choice([-1.0, 1.0], 5) * rng.uniform(1.0, 2.0, 5)
        model = RegularizedIHTRegressor(k=5).fit(A, A @ x)
        np.testing.assert_array_equal(model.support_, S)
        np.testing.assert_allclose(model.coef_, x, atol=1e-10)
        assert model.intercept_ == pytest.approx(0.0, abs=1e-10)


def test_recovers_more_than_iht_fig_1f():
    """Paper 000, Fig. 1(f): on Gaussian sparse recovery (100 x 800, 240 iterations)
    regularized IHT succeeds where plain IHT at the same k and budget fails."""
    wins = {"iht": 0, "reg": 0}
    for seed in range(8):
        A, b, S = fig_1f_problem(seed)
        # the papers' algorithms as published: no splicing search afterwards
        for name, est in (("iht", IHTRegressor(k=22, max_iter=240, splicing=False)),
                          ("reg", RegularizedIHTRegressor(k=22, max_iter=240, splicing=False))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                wins[name] += np.array_equal(est.fit(A, b).support_, S)
    print(f"\nFig. 1(f), k = k* = 22, 8 draws: IHT recovered {wins['iht']}, regularized IHT {wins['reg']}")
    assert wins["reg"] >= wins["iht"] + 2


def test_deterministic():
    """Two fits on the same data are bitwise equal (no hidden randomness)."""
    X, y, _ = sparse_problem(n=60, p=25, k=3, noise=0.3, seed=7)
    a = RegularizedIHTRegressor(k=3).fit(X, y)
    b = RegularizedIHTRegressor(k=3).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert a.n_iter_ == b.n_iter_ and np.array_equal(a.loss_curve_, b.loss_curve_)


# --------------------------------------------------------------------------- stopping, objective


def test_does_not_stop_while_weights_move():
    """Notes §3 (cT features get unregularized): the fit stops only once the weights of
    the selected features are 0; these need >= k/(2c) iterations to fall from 1 below
    1/2, i.e. >= max_iter/2 with the default c = k/max_iter."""
    X, y, support = sparse_problem(n=100, p=30, k=3, seed=2)
    loss = SquaredLoss(X, y, None, fit_intercept=True)
    W0, b0 = loss.zeros()
    # a tol this loose would stop plain IHT as soon as the support repeats
    r = regularized_iht(loss, Hard(), 3, W0=W0, b0=b0, max_iter=400, tol=1e6, verbose=0)
    assert r.converged
    assert np.all(r.weights[r.support] == 0)
    assert r.n_iter >= 200
    model = RegularizedIHTRegressor(k=3, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model.fit(X, y)
    assert 500 <= model.n_iter_ < 1000
    np.testing.assert_array_equal(model.support_, support)


def test_objective_is_unregularized_loss_and_best_iterate():
    """Notes §2/§3: loss_curve_ reports f (not f + penalty); for operators other than
    hard the iterate of lowest f is returned."""
    X, y, _ = sparse_problem(n=80, p=20, k=3, noise=0.5, seed=5)
    hard = RegularizedIHTRegressor(k=3, debias=False).fit(X, y)
    resid = y - X @ hard.coef_ - hard.intercept_
    assert hard.loss_curve_[-1] == pytest.approx(0.5 * np.mean(resid**2), rel=1e-10)
    loss = SquaredLoss(X, y, None, fit_intercept=True)
    W0, b0 = loss.zeros()
    r = regularized_iht(loss, Soft(), 3, W0=W0, b0=b0, max_iter=300, tol=1e-4, verbose=0)
    assert loss.value(r.coef, r.intercept) == pytest.approx(min(r.objective), rel=1e-12)


def test_auto_step_is_stable_on_ill_conditioned_design():
    """Notes §6: defaults must not diverge; 'auto' never goes below the safe 1/(2L)."""
    rng = np.random.RandomState(0)
    n, p = 150, 40
    Z = rng.standard_normal((n, p))
    X = np.cumsum(Z, axis=1) / np.sqrt(np.arange(1, p + 1))  # strongly correlated columns
    y = X[:, [3, 17, 30]] @ np.array([2.0, -1.0, 1.5]) + 0.1 * rng.standard_normal(n)
    loss = SquaredLoss(X, y, None, fit_intercept=True)
    W0, b0 = loss.zeros()
    r = regularized_iht(loss, Hard(), 3, W0=W0, b0=b0, max_iter=1000, tol=1e-4, verbose=0)
    assert not r.diverged
    assert r.step_size >= 0.5 / loss.lipschitz() * (1 - 1e-12)
    assert r.objective[-1] < loss.value(W0, b0)
    assert np.all(np.isfinite(r.objective))


def test_large_fixed_step_divergence_is_reported():
    """Notes §6: a fixed step far above the stable range is detected and reported."""
    X, y, _ = sparse_problem(n=60, p=20, k=3, seed=1)
    with pytest.warns(ConvergenceWarning, match="diverged"):
        RegularizedIHTRegressor(k=3, step_size=10.0).fit(X, y)


# --------------------------------------------------------------------------- estimators


@pytest.mark.parametrize("value", [0, -1.0, "fast", np.nan, np.inf, True, [0.1]])
@pytest.mark.parametrize("Est", [RegularizedIHTRegressor, RegularizedIHTClassifier])
def test_invalid_weight_step(Est, value):
    """weight_step must be None or a positive finite number."""
    X, y, _ = sparse_problem(n=30, p=6, k=2)
    if Est is RegularizedIHTClassifier:
        y = (y > 0).astype(int)
    with pytest.raises(ValueError, match="weight_step"):
        Est(k=2, weight_step=value).fit(X, y)


def test_classifier_multiclass_shares_support():
    """Weights are per feature: with several classes one weight per coefficient row."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 12))
    scores = X[:, [1, 5, 8]] @ np.array([[3.0, 0, -3.0], [0, 3.0, -3.0], [3.0, -3.0, 0]])
    y = np.argmax(scores, axis=1)
    model = RegularizedIHTClassifier(k=3).fit(X, y)
    np.testing.assert_array_equal(model.support_, [1, 5, 8])
    assert model.coef_.shape == (3, 12)
    assert model.score(X, y) > 0.9


def test_grid_search_over_weight_step_in_pipeline():
    """GridSearchCV over weight_step in a Pipeline with StandardScaler (flat params)."""
    X, y, support = sparse_problem(n=120, p=20, k=3, noise=0.1, seed=6)
    pipe = make_pipeline(StandardScaler(), RegularizedIHTRegressor(k=3))
    grid = GridSearchCV(pipe, {"regularizedihtregressor__weight_step": [None, 0.01, 0.1, 10.0]}, cv=3)
    grid.fit(X, y)
    assert grid.best_params_["regularizedihtregressor__weight_step"] in (None, 0.01, 0.1, 10.0)
    assert len(grid.cv_results_["params"]) == 4
    np.testing.assert_array_equal(grid.best_estimator_[-1].support_, support)
    assert grid.best_score_ > 0.95


@pytest.mark.parametrize("n_classes, seed, thresholding",
                         [(2, 0, "lq"), (2, 2, "lq"), (2, 2, "reciprocal"), (3, 0, "lq"), (3, 0, "reciprocal")])
def test_non_hard_operators_converge_with_defaults(n_classes, seed, thresholding):
    """Lq and reciprocal operators settle their step as plain IHT's do (notes §3: their fixed points depend on it).

    The regularized solver doubled a step that used at most half of the
    model's allowance whatever the operator, so the iterates of these
    default fits cycled (step eta, 2 eta, rejected 2 eta, ...) until
    ``max_iter`` with a ConvergenceWarning. They must now stop before
    ``max_iter``, at their lowest loss, the loss not rising over the last
    iterations (a cycle rises and falls).
    """
    from sklearn.datasets import make_classification
    X, y = make_classification(200, 30, n_informative=4, n_redundant=0, n_classes=n_classes, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = RegularizedIHTClassifier(k=4, thresholding=thresholding).fit(X, y)
    curve = est.loss_curve_
    assert est.n_iter_ < est.max_iter
    assert curve[-1] <= curve.min() * (1 + 1e-12)
    assert np.all(np.diff(curve[-20:]) <= 1e-12 * curve[-1])
