"""Cox proportional-hazards models (sparse_estimators.survival) and their loss (losses/_cox.py)."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from sparse_estimators.compose import GroupsFromTransformer
from sparse_estimators.losses import CoxLoss
from sparse_estimators.model_selection import SparsityCV, SparsityIC, sparsity_path
from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
    StepFunction,
    concordance_index,
)

ESTIMATORS = [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
              IOBSCoxPHSurvivalAnalysis]
DTYPE = [("event", bool), ("time", float)]


def _surv(event, time):
    return np.array(list(zip(event, time, strict=True)), dtype=DTYPE)


def _tied_data(seed=0, n=40, p=5):
    """Small data with many tied times (integers 1..7), censoring and integer weights."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    time = rng.randint(1, 8, n).astype(float)
    event = rng.rand(n) < 0.7
    weights = rng.randint(1, 4, n).astype(float)
    return X, event, time, weights


def _direct_neg_log_pl(X, event, time, weights, w, ties):
    """Minus the log partial likelihood over the sum of the weights, by explicit risk sets (O(n^2))."""
    eta = X @ w
    total = 0.0
    for t in np.unique(time[event]):
        dead = (time == t) & event
        at_risk = time >= t
        S = weights[at_risk] @ np.exp(eta[at_risk])
        E = weights[dead] @ np.exp(eta[dead])
        m, wd = dead.sum(), weights[dead].sum()
        total -= weights[dead] @ eta[dead]
        if ties == "breslow":
            total += wd * np.log(S)
        else:  # Efron, with the mean weight of the tied events (R's survival::coxph)
            total += wd / m * sum(np.log(S - j / m * E) for j in range(m))
    return total / weights.sum()


def _direct_gradient(X, event, time, weights, w, ties):
    """The gradient of :func:`_direct_neg_log_pl` from its explicit risk-set sums (not differences)."""
    eta = X @ w
    r = weights * np.exp(eta)
    g = np.zeros(X.shape[1])
    for t in np.unique(time[event]):
        dead = (time == t) & event
        at_risk = time >= t
        m, wd = dead.sum(), weights[dead].sum()
        g -= weights[dead] @ X[dead]
        for j in range(m if ties == "efron" else 1):
            share = j / m if ties == "efron" else 0.0
            num = r[at_risk] @ X[at_risk] - share * (r[dead] @ X[dead])
            den = r[at_risk].sum() - share * r[dead].sum()
            g += (wd / m if ties == "efron" else wd) * num / den
    return g / weights.sum()


# -- the loss --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ties", ["breslow", "efron"])
@pytest.mark.parametrize("seed", [0, 1])
def test_partial_likelihood_and_gradient_against_direct_computation_with_ties(ties, seed):
    X, event, time, weights = _tied_data(seed)
    assert len(np.unique(time[event])) < event.sum()  # (tied event times)
    loss = CoxLoss(X, event, time, weights, ties=ties)
    w = np.random.RandomState(seed + 10).standard_normal(X.shape[1]) * 0.5
    f, gW, _ = loss.value_and_gradient(w[:, None], np.zeros(1))
    assert f == pytest.approx(_direct_neg_log_pl(X, event, time, weights, w, ties), rel=1e-12)
    np.testing.assert_allclose(gW[:, 0], _direct_gradient(X, event, time, weights, w, ties), rtol=1e-10,
                               atol=1e-13)
    assert loss.minus_two_log_likelihood(w[:, None], np.zeros(1)) == pytest.approx(
        2 * weights.sum() * _direct_neg_log_pl(X, event, time, weights, w, ties), rel=1e-12)


def test_breslow_and_efron_differ_only_with_tied_events():
    X, event, time, weights = _tied_data(3)
    w = np.full((X.shape[1], 1), 0.3)
    values = [CoxLoss(X, event, time, weights, ties=t).value(w, np.zeros(1)) for t in ("breslow", "efron")]
    assert values[1] < values[0] - 1e-3  # (Efron's denominators are smaller: a larger likelihood)
    distinct = time + np.arange(time.size) * 1e-3  # no ties: the same likelihood
    values = [CoxLoss(X, event, distinct, weights, ties=t).value(w, np.zeros(1)) for t in ("breslow", "efron")]
    assert values[0] == pytest.approx(values[1], rel=1e-14)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_hessian_against_finite_differences_and_products(ties):
    X, event, time, weights = _tied_data(2)
    loss = CoxLoss(X, event, time, weights, ties=ties, alpha=0.1)
    w = np.random.RandomState(0).standard_normal(X.shape[1]) * 0.4
    b = np.zeros(1)
    H = loss.hessian(w[:, None], b)
    eps = 1e-6
    fd = np.array([(loss.value_and_gradient((w + eps * e)[:, None], b)[1][:, 0]
                    - loss.value_and_gradient((w - eps * e)[:, None], b)[1][:, 0]) / (2 * eps) for e in np.eye(w.size)])
    np.testing.assert_allclose(H, fd, atol=1e-7)
    v = np.random.RandomState(1).standard_normal(w.size)
    np.testing.assert_allclose(loss.hessp(w[:, None], b, v[:, None], None)[0][:, 0], H @ v, rtol=1e-10, atol=1e-14)
    Z = loss.linear_predictor(w[:, None], b)
    np.testing.assert_allclose(loss.feature_curvatures(Z, np.arange(w.size))[:, 0], np.diag(H), rtol=1e-10)
    np.testing.assert_allclose(loss.hessian_block(Z, np.array([1, 3])), H[np.ix_([1, 3], [1, 3])], rtol=1e-10)
    assert np.all(np.linalg.eigvalsh(H) > 0)


def test_sparse_design_gives_the_dense_loss():
    X, event, time, weights = _tied_data(4)
    X[np.abs(X) < 0.8] = 0.0
    w = np.linspace(-0.5, 0.5, X.shape[1])[:, None]
    dense, sparse = CoxLoss(X, event, time, weights), CoxLoss(sp.csr_matrix(X), event, time, weights)
    b = np.zeros(1)
    assert sparse.value(w, b) == pytest.approx(dense.value(w, b), rel=1e-13)
    np.testing.assert_allclose(sparse.value_and_gradient(w, b)[1], dense.value_and_gradient(w, b)[1], rtol=1e-12)
    np.testing.assert_allclose(sparse.hessian(w, b), dense.hessian(w, b), rtol=1e-11, atol=1e-14)


def test_integer_weights_equal_repeated_rows_with_breslow():
    X, event, time, weights = _tied_data(5)
    reps = weights.astype(int)
    w = np.full((X.shape[1], 1), 0.2)
    weighted = CoxLoss(X, event, time, weights)
    repeated = CoxLoss(np.repeat(X, reps, axis=0), np.repeat(event, reps), np.repeat(time, reps))
    assert weighted.value(w, np.zeros(1)) == pytest.approx(repeated.value(w, np.zeros(1)), rel=1e-13)


# R's survival package, tests of the weighted Cox model (Therneau's data set ``testw1``): one feature, events at
# times 1 (x = 2, weight 1), 2 (three tied: x = 1, 1, 0, weights 3, 4, 3) and 4 (x = 1, weight 2)
_TESTW1 = {"time": np.array([1, 1, 2, 2, 2, 2, 3, 4, 5.]), "event": np.array([1, 0, 1, 1, 1, 0, 0, 1, 0], bool),
           "x": np.array([2, 0, 1, 1, 0, 1, 0, 1, 0.]), "weight": np.array([1, 2, 3, 4, 3, 2, 1, 2, 1.])}


def _testw1_log_likelihood(beta, ties):
    """The log partial likelihood of ``testw1`` at ``beta`` as written out by hand in R's tests.

    ``r = exp(beta)``; at time 2 the tied events' weighted risk is ``a = 7r + 3`` and the rest of the risk set
    ``b = 4r + 2``; Efron's three terms carry the tied events' mean weight ``10 / 3`` each.
    """
    r = np.exp(beta)
    a, b = 7 * r + 3, 4 * r + 2
    tied = (10 * np.log(11 * r + 5) if ties == "breslow"
            else 10 * (np.log(11 * r + 5) + np.log(a * 2 / 3 + b) + np.log(a / 3 + b)) / 3)
    return 11 * beta - (np.log(r ** 2 + 11 * r + 7) + tied + 2 * np.log(2 * r + 1))


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_weighted_ties_follow_r_survival_by_hand(ties):
    """The weighted partial likelihood (Efron: the tied events' mean weight) and its maximiser are R's."""
    d = _TESTW1
    loss = CoxLoss(d["x"][:, None], d["event"], d["time"], d["weight"], ties=ties)
    for beta in (-1.0, 0.0, 0.5, 1.3):
        assert loss.value(np.array([[beta]]), np.zeros(1)) == pytest.approx(
            -_testw1_log_likelihood(beta, ties) / d["weight"].sum(), rel=1e-12)
    optimum = scipy.optimize.minimize_scalar(lambda beta: -_testw1_log_likelihood(beta, ties), bracket=(-2.0, 2.0),
                                             tol=1e-12).x
    y = _surv(d["event"], d["time"])
    for Est in (IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis):
        model = Est(k=1, ties=ties, alpha=0.0).fit(d["x"][:, None], y, sample_weight=d["weight"])
        assert model.coef_[0] == pytest.approx(optimum, abs=1e-6)


@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
def test_integer_weights_are_repeated_rows_with_breslow_not_with_efron(Est):
    """Breslow: the fit with weights is the fit on repeated rows. Efron: a repeated event row is one more tied
    event (R's ``testw2`` against ``testw1``): the tie at time 2 has 10 events instead of 3, another likelihood."""
    d = _TESTW1
    reps = d["weight"].astype(int)
    y, repeated_y = _surv(d["event"], d["time"]), _surv(np.repeat(d["event"], reps), np.repeat(d["time"], reps))
    X, repeated_X = d["x"][:, None], np.repeat(d["x"], reps)[:, None]
    fits = {ties: (Est(k=1, ties=ties, alpha=0.0).fit(X, y, sample_weight=d["weight"]),
                   Est(k=1, ties=ties, alpha=0.0).fit(repeated_X, repeated_y)) for ties in ("breslow", "efron")}
    weighted, repeated = fits["breslow"]
    assert weighted.coef_[0] == pytest.approx(repeated.coef_[0], rel=1e-8)
    weighted, repeated = fits["efron"]
    assert abs(weighted.coef_[0] - repeated.coef_[0]) > 0.01  # (0.873 against 0.940)
    reference = CoxLoss(repeated_X, repeated_y["event"], repeated_y["time"], ties="efron")
    beta = np.array([[0.5]])
    assert reference.value(beta, np.zeros(1)) == pytest.approx(_direct_neg_log_pl(
        repeated_X, repeated_y["event"], repeated_y["time"], np.ones(reps.sum()), beta[:, 0], "efron"), rel=1e-12)


# -- the estimators: support recovery, agreement with scikit-survival --------------------------------------------
def _cox_data(seed=0, n=400, p=60, censoring=True):
    """Exponential event times with a 3-feature log hazard of high signal, and independent censoring."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    true = np.array([4, 17, 33]) if p > 33 else np.array([0, 2, 4])
    eta = X[:, true] @ np.array([1.5, -1.2, 1.0])
    t = rng.exponential(np.exp(-eta))
    if censoring:
        c = rng.exponential(3.0 * np.median(t), n)
        return X, _surv(t <= c, np.minimum(t, c)), true
    return X, _surv(np.ones(n, bool), t), true


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_high_signal_support_recovered_exactly(Estimator, ties):
    X, y, true = _cox_data(0)
    assert 0.5 < y["event"].mean() < 0.95
    model = Estimator(k=3, ties=ties).fit(X, y)
    np.testing.assert_array_equal(model.support_, true)
    np.testing.assert_array_equal(np.flatnonzero(model.coef_), true)
    assert model.score(X, y) > 0.75


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_high_signal_support_recovered_with_sparse_X_and_k_none(Estimator):
    X, y, true = _cox_data(1)
    np.testing.assert_array_equal(Estimator(k=3).fit(sp.csr_matrix(X), y).support_, true)
    auto = Estimator().fit(X, y)
    assert auto.k_ == 3
    np.testing.assert_array_equal(auto.support_, true)


def _weak_signal_data():
    """``benchmarks/_cox_peers.py``'s design at n = 200, p = 100, rho = 0 (one of its seeds): 5 weak effects.

    There the regressors' splicing rules stopped at the support with feature
    51 in place of the true 33, although exchanging the two lowers minus
    twice the log partial likelihood by about 2.5: 33 was the second
    candidate by marginal gain, behind one whose exchange lowers nothing.
    """
    rng = np.random.RandomState(23300)
    n, p, k = 200, 100, 5
    X = rng.standard_normal((n, p))
    true = np.linspace(0, p - 1, k + 2)[1:-1].astype(int)
    beta = np.zeros(p)
    beta[true] = rng.choice([-1, 1], k) * rng.uniform(0.25, 0.5, k)
    t = rng.exponential(np.exp(-(X @ beta)))
    c = rng.exponential(2.5 * np.median(t), n)
    return (X - X.mean(axis=0)) / X.std(axis=0), _surv(t <= c, np.minimum(t, c)), true


def _refitted_value(loss, support):
    W, b = loss.refit(np.asarray(support), np.zeros((loss.n_features, 1)), np.zeros(1))
    return loss.value(W, b)


def test_splicing_reaches_a_support_no_single_exchange_improves():
    X, y, true = _weak_signal_data()
    model = IHTCoxPHSurvivalAnalysis(k=5).fit(X, y)
    loss = CoxLoss(X, y["event"], y["time"], alpha=model.alpha)
    support = model.support_
    value = _refitted_value(loss, support)
    n, p = X.shape
    # every exchange of one selected feature for one other, refitted (475 Newton fits on 5 columns)
    exchanged = min(_refitted_value(loss, np.sort(np.r_[np.delete(support, i), j]))
                    for i in range(support.size) for j in np.setdiff1d(np.arange(p), support))
    assert 2 * n * (exchanged - value) > 0.5  # (in units of minus twice the log partial likelihood)
    np.testing.assert_array_equal(support, true)


def test_splice_tries_several_single_exchanges():
    from sparse_estimators.solvers import splice

    X, y, true = _weak_signal_data()
    loss = CoxLoss(X, y["event"], y["time"], alpha=1e-4)
    start = np.array([16, 49, 51, 66, 82])  # (the true support with 33 exchanged for 51)
    W, b = loss.refit(start, np.zeros((X.shape[1], 1)), np.zeros(1))
    options = {"gate": 0.0, "screening_start": False, "refitted": True}
    # one candidate per exchange size: the best single addition by marginal gain lowers nothing
    np.testing.assert_array_equal(splice(loss, 5, W, b, **options).support, start)
    found = splice(loss, 5, W, b, swap_candidates=5, **options)
    np.testing.assert_array_equal(found.support, true)
    assert 2 * X.shape[0] * (_refitted_value(loss, start) - _refitted_value(loss, true)) > 2.0


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_hessian_in_eta_against_finite_differences_and_products(ties):
    X, event, time, weights = _tied_data(3)
    weights[:4] = 0.0  # (rows of weight 0: zero rows and columns)
    loss = CoxLoss(X, event, time, weights, ties=ties)
    rng = np.random.RandomState(2)
    eta = rng.standard_normal(X.shape[0])
    H = loss._eta_hessian(loss._risk(eta))
    eps = 1e-6
    fd = np.array([(loss._eta_gradient(eta + eps * e) - loss._eta_gradient(eta - eps * e)) / (2 * eps)
                   for e in np.eye(eta.size)])
    np.testing.assert_allclose(H, fd, atol=1e-8)
    v = rng.standard_normal(eta.size)
    np.testing.assert_allclose(H @ v, loss._eta_hessp(eta, v), rtol=1e-10, atol=1e-15)
    assert np.all(H[:4] == 0) and np.all(H[:, :4] == 0)
    np.testing.assert_allclose(H @ np.ones(eta.size), 0.0, atol=1e-14)  # (a shift of eta changes nothing)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
@pytest.mark.parametrize("sparse", [False, True])
def test_cox_woodbury_newton_step_equals_the_dense_solve(ties, sparse):
    from sparse_estimators.solvers._cox_newton import CoxWoodbury
    from sparse_estimators.solvers._iobs_curvature import _GLMCache

    rng = np.random.RandomState(4)
    n, p = 30, 45  # (n < p: the route's case; integer times, ties)
    X = rng.standard_normal((n, p))
    X[:, 7] = 2.0  # a constant column: zero in the centred design
    if sparse:
        X[np.abs(X) < 0.7] = 0.0
    time = rng.randint(1, 9, n).astype(float)
    event = rng.rand(n) < 0.7
    weights = rng.randint(0, 3, n).astype(float)
    weights[np.flatnonzero(event)[0]] = 1.0
    loss = CoxLoss(sp.csr_matrix(X) if sparse else X, event, time, weights, ties=ties, alpha=0.05)
    W = np.zeros((p, 1))
    W[[1, 5, 9]] = [[0.4], [-0.3], [0.2]]
    b = np.zeros(1)
    Z = loss.linear_predictor(W, b)
    lam = 0.02
    g = rng.standard_normal(p)
    dense = np.linalg.solve(loss.hessian(W, b) + lam * np.eye(p), g)  # (hessian includes alpha)
    np.testing.assert_allclose(CoxWoodbury(loss, Z, loss.alpha + lam, _GLMCache(loss)).solve(g), dense,
                               rtol=1e-9, atol=1e-12)


def test_iobs_routes_without_pointwise_curvature():
    # the Cox Hessian has no pointwise weights: for n < p, Woodbury through the n x n Hessian in eta
    from sparse_estimators.solvers._iobs import select_hessian_route

    X, y, true = _cox_data(7, n=200, p=300)
    wide = CoxLoss(X, y["event"], y["time"])
    assert select_hessian_route(wide, "auto") == "woodbury"
    assert select_hessian_route(wide, "auto", damping=0.0) == "dense"
    assert select_hessian_route(CoxLoss(X[:, :100], y["event"], y["time"]), "auto") == "dense"
    for route in ("cg", "woodbury", "dense"):
        assert select_hessian_route(wide, route) == route
    fits = {route: IOBSCoxPHSurvivalAnalysis(k=3, hessian=route, splicing=False).fit(X, y)
            for route in ("dense", "woodbury", "cg")}
    for route, fit in fits.items():
        np.testing.assert_array_equal(fit.support_, true, err_msg=route)
    np.testing.assert_allclose(fits["woodbury"].coef_, fits["dense"].coef_, rtol=1e-8)


def test_groups_positive_always_select_constant_columns_and_float32():
    X, y, true = _cox_data(0)
    groups = np.arange(X.shape[1]) // 3
    for Estimator in (IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis):
        model = Estimator(k=3, groups=groups).fit(X, y)
        np.testing.assert_array_equal(model.groups_support_, np.unique(groups[true]))
    # the true coefficient of feature 17 is negative: positive=True keeps non-negative coefficients only
    positive = IHTCoxPHSurvivalAnalysis(k=3, positive=True).fit(X, y)
    assert np.all(positive.coef_ >= 0) and 17 not in positive.support_ and {4, 33} <= set(positive.support_)
    np.testing.assert_array_equal(IHTCoxPHSurvivalAnalysis(k=4, always_select=[0]).fit(X, y).support_,
                                  np.concatenate([[0], true]))
    constant = X.copy()
    constant[:, 5] = 3.0
    model = IHTCoxPHSurvivalAnalysis(k=4).fit(constant, y)
    assert model.coef_[5] == 0.0 and set(true) <= set(model.support_)
    single = IHTCoxPHSurvivalAnalysis(k=3).fit(X.astype(np.float32), y)
    np.testing.assert_array_equal(single.support_, true)
    assert single.coef_.dtype == np.float32 and single.predict(X[:2].astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_all_features_match_scikit_survival_coxph(ties):
    sksurv = pytest.importorskip("sksurv.linear_model")
    X, y, _ = _cox_data(2, n=200, p=6)
    y["time"] = np.ceil(y["time"] * 4)  # (tied times, so that the two ties differ)
    ours = IHTCoxPHSurvivalAnalysis(k=6, ties=ties, alpha=0.0, tol=1e-10).fit(X, y)
    theirs = sksurv.CoxPHSurvivalAnalysis(alpha=0.0, ties=ties, tol=1e-12, n_iter=200).fit(X, y)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-6, atol=1e-8)
    assert ours.score(X, y) == pytest.approx(theirs.score(X, y), abs=1e-12)
    np.testing.assert_array_equal(ours.unique_times_, theirs.unique_times_)
    for method in ("predict_survival_function", "predict_cumulative_hazard_function"):
        np.testing.assert_allclose(getattr(ours, method)(X[:5], return_array=True),
                                   getattr(theirs, method)(X[:5], return_array=True), rtol=1e-6, atol=1e-10)
        mine, other = getattr(ours, method)(X[:2]), getattr(theirs, method)(X[:2])
        assert isinstance(mine[0], StepFunction) and mine.dtype == object
        at = np.array([0.0, 1.0, 3.5, float(y["time"].max())])
        np.testing.assert_allclose(mine[1](at), other[1](at), rtol=1e-6, atol=1e-10)
        assert mine[0].domain == other[0].domain
        with pytest.raises(ValueError, match="x must be within"):
            mine[0](float(y["time"].max()) + 1)


def test_concordance_index_matches_scikit_survival_with_ties():
    metrics = pytest.importorskip("sksurv.metrics")
    rng = np.random.RandomState(0)
    time = rng.randint(1, 30, 300).astype(float)
    event = rng.rand(300) < 0.6
    estimate = np.round(rng.standard_normal(300), 1)  # (tied estimates)
    assert concordance_index(event, time, estimate) == pytest.approx(
        metrics.concordance_index_censored(event, time, estimate)[0], abs=1e-14)
    weights = rng.randint(1, 4, 300)
    assert concordance_index(event, time, estimate, weights.astype(float)) == pytest.approx(
        concordance_index(np.repeat(event, weights), np.repeat(time, weights), np.repeat(estimate, weights)),
        abs=1e-14)


def test_concordance_index_by_hand():
    # events at 1 and 3, censored at 2 and 4: comparable pairs (1,2), (1,3), (1,4), (3,4)
    event, time = np.array([True, False, True, False]), np.array([1.0, 2.0, 3.0, 4.0])
    assert concordance_index(event, time, np.array([4.0, 3.0, 2.0, 1.0])) == 1.0
    assert concordance_index(event, time, np.array([1.0, 2.0, 3.0, 4.0])) == 0.0
    assert concordance_index(event, time, np.array([4.0, 3.0, 2.0, 2.0])) == pytest.approx(3.5 / 4)


# -- invalid targets ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("y, message", [
    (np.arange(10.0), "y must be a structured array with two fields"),
    ([(True, 1.0)] * 10, "y must be a structured array with two fields"),
    (np.array([(1, 1.0)] * 10, dtype=[("event", int), ("time", float)]), "first field of y, 'event'.*not bool"),
    (np.array([(True, "a")] * 10, dtype=[("event", bool), ("time", "U1")]), "second field of y, 'time'.*not a number"),
    (np.array([(True, 1.0, 1.0)] * 10, dtype=[("event", bool), ("time", float), ("x", float)]),
     "y must be a structured array with two fields"),
    (_surv([True] * 9 + [False], [1.0] * 9 + [-1.0]), "times of y .* must be >= 0"),
    (_surv([True] * 10, [1.0] * 9 + [np.nan]), "times of y .* NaN or infinity"),
    (_surv([False] * 10, np.arange(1.0, 11.0)), "Every sample of y is censored"),
    (_surv([True] * 9, np.arange(1.0, 10.0)), "inconsistent numbers of samples"),
    (None, "requires y to be passed"),
])
def test_invalid_targets_are_refused_naming_y(y, message):
    X = np.random.RandomState(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match=message):
        IHTCoxPHSurvivalAnalysis(k=1).fit(X, y)


def test_field_names_of_scikit_survival_data_sets_are_accepted():
    X, y, true = _cox_data(3)
    renamed = y.astype([("fstat", bool), ("lenfol", float)])
    np.testing.assert_array_equal(IHTCoxPHSurvivalAnalysis(k=3).fit(X, renamed).support_, true)


def test_events_of_zero_weight_only_are_refused():
    X, y, _ = _cox_data(4, n=50, p=6)
    with pytest.raises(ValueError, match="Every event of y has sample weight 0"):
        IHTCoxPHSurvivalAnalysis(k=1).fit(X, y, sample_weight=(~y["event"]).astype(float))


# -- choosing k with the partial likelihood ------------------------------------------------------------------------
def test_sparsity_ic_uses_the_cox_partial_likelihood():
    X, y, true = _cox_data(5, n=300, p=30)
    search = SparsityIC(IHTCoxPHSurvivalAnalysis(alpha=0.0), k_grid=range(1, 7), criterion="bic").fit(X, y)
    assert search.k_ == 3
    np.testing.assert_array_equal(search.best_estimator_.support_, true)
    n = X.shape[0]
    path = sparsity_path(IHTCoxPHSurvivalAnalysis(alpha=0.0), X, y, k_grid=search.k_grid_)  # (the same fits)
    for k, crit, fit in zip(search.k_grid_, search.criterion_, path.estimators, strict=True):
        minus_two_log_pl = 2 * n * _direct_neg_log_pl(X, y["event"], y["time"], np.ones(n), fit.coef_, "breslow")
        assert crit == pytest.approx(minus_two_log_pl + k * np.log(n), rel=1e-6)
    ebic = SparsityIC(IHTCoxPHSurvivalAnalysis(), k_grid=range(1, 7)).fit(X, y)
    k = ebic.k_grid_
    penalty = k * np.log(n) + 2 * (gammaln(31) - gammaln(k + 1) - gammaln(31 - k))
    assert ebic.k_ == 3
    assert np.all(np.isfinite(ebic.criterion_ - penalty))


def test_sparsity_cv_scores_with_the_concordance_index():
    X, y, true = _cox_data(6, n=300, p=30)
    search = SparsityCV(IHTCoxPHSurvivalAnalysis(), k_grid=[1, 3, 6], cv=3).fit(X, y)
    assert search.k_ == 3
    np.testing.assert_array_equal(search.best_estimator_.support_, true)
    assert search.score(X, y) == pytest.approx(concordance_index(y["event"], y["time"], search.predict(X)))
    assert np.all((search.cv_results_["mean_test_score"] > 0.5) & (search.cv_results_["mean_test_score"] <= 1))


@pytest.mark.parametrize("make_search", [
    lambda est: SparsityCV(est, k_grid=[1, 3, 6], cv=3),
    lambda est: SparsityIC(est, k_grid=range(1, 7)),
    lambda est: GroupsFromTransformer(StandardScaler(), est),
    lambda est: GroupsFromTransformer(StandardScaler(), SparsityCV(est, k_grid=[1, 3, 6], cv=3)),
], ids=["SparsityCV", "SparsityIC", "GroupsFromTransformer", "GroupsFromTransformer(SparsityCV)"])
def test_wrappers_expose_the_survival_functions_of_the_fitted_estimator(make_search):
    X, y, true = _cox_data(6, n=300, p=30)
    search = make_search(IHTCoxPHSurvivalAnalysis(k=3))
    assert hasattr(search, "predict_survival_function") and hasattr(search, "predict_cumulative_hazard_function")
    with pytest.raises(NotFittedError):
        search.predict_survival_function(X[:5])
    search.fit(X, y)
    inner = getattr(search, "best_estimator_", None) or search.estimator_
    inner = getattr(inner, "best_estimator_", inner)
    np.testing.assert_array_equal(inner.support_, true)
    Xi = X[:7] if not hasattr(search, "transformer_") else search.transformer_.transform(X[:7])
    # S(t | x) = S0(t) ** exp(x coef), H(t | x) = exp(x coef) H0(t), with the chosen model's baseline
    risk = np.exp(Xi @ inner.coef_)
    surv = search.predict_survival_function(X[:7], return_array=True)
    hazard = search.predict_cumulative_hazard_function(X[:7], return_array=True)
    np.testing.assert_allclose(surv, inner.baseline_survival_.y[None, :] ** risk[:, None], rtol=1e-12)
    np.testing.assert_allclose(hazard, risk[:, None] * inner.cum_baseline_hazard_.y[None, :], rtol=1e-12)
    np.testing.assert_allclose(surv, np.exp(-hazard), rtol=1e-10)
    functions = search.predict_survival_function(X[:7])
    t = inner.unique_times_[len(inner.unique_times_) // 2]
    np.testing.assert_allclose([fn(t) for fn in functions], surv[:, len(inner.unique_times_) // 2], rtol=1e-12)
    assert [fn(t) for fn in search.predict_cumulative_hazard_function(X[:7])] == pytest.approx(
        hazard[:, len(inner.unique_times_) // 2], rel=1e-12)


@pytest.mark.parametrize("make_search", [lambda est: SparsityCV(est), lambda est: SparsityIC(est),
                                         lambda est: GroupsFromTransformer(StandardScaler(), est)])
def test_wrappers_of_a_regressor_have_no_survival_functions(make_search):
    from sparse_estimators import IHTRegressor

    search = make_search(IHTRegressor(k=2))
    assert not hasattr(search, "predict_survival_function")
    assert not hasattr(search, "predict_cumulative_hazard_function")
    rng = np.random.RandomState(0)
    X = rng.standard_normal((60, 8))
    search.fit(X, X[:, 1] - X[:, 4])
    assert not hasattr(search, "predict_survival_function")


def test_grid_search_cv_chooses_k_by_concordance():
    """GridSearchCV scores with the estimator's own score (concordance); the chosen model has the functions."""
    X, y, true = _cox_data(6, n=300, p=30)
    grid = GridSearchCV(IHTCoxPHSurvivalAnalysis(), {"k": [1, 3, 6]}, cv=3).fit(X, y)
    assert grid.best_params_ == {"k": 3}
    np.testing.assert_array_equal(grid.best_estimator_.support_, true)
    assert grid.best_estimator_.predict_survival_function(X[:3], return_array=True).shape[0] == 3


# -- scikit-learn's checks -----------------------------------------------------------------------------------------
def _as_survival(y):
    """A numeric target of scikit-learn's checks as event times, all observed (others are passed on unchanged)."""
    y = None if y is None else np.asarray(y)
    if y is None or y.dtype.names or np.iscomplexobj(y) or y.ndim == 0:
        return y
    t = y.astype(float).reshape(len(y), -1)[:, 0]
    return _surv(np.ones(t.size, bool), t - t.min())


class _NumericTarget:
    """Reads scikit-learn's numeric check targets as survival targets (:func:`_as_survival`)."""

    def fit(self, X, y, sample_weight=None, coef_init=None):
        return super().fit(X, _as_survival(y), sample_weight, coef_init)

    def score(self, X, y, sample_weight=None):
        return super().score(X, _as_survival(y), sample_weight)


ADAPTERS = {}
for _Estimator in ESTIMATORS:  # (module-level classes, so that the pickling checks find them)
    ADAPTERS[_Estimator] = globals()[f"NumericTarget{_Estimator.__name__}"] = type(
        f"NumericTarget{_Estimator.__name__}", (_NumericTarget, _Estimator), {"__module__": __name__})


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_check_estimator_with_defaults_on_survival_targets(Estimator):
    # scikit-learn's checks pass numeric targets: the adapter reads them as event times (all observed), so
    # that every check runs the estimator's own fit, predict, score, sample weights, pickling, ... on them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)  # (SkipTestWarning of the array-API check)
        results = check_estimator(ADAPTERS[Estimator](), on_fail=None)
    failed = [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert not failed
    assert skipped <= {"check_array_api_input"}  # (SCIPY_ARRAY_API unset: no array-API input anywhere)


def _chain(exc):
    while exc is not None:
        yield str(exc)
        exc = exc.__cause__ or exc.__context__


@pytest.mark.parametrize("Estimator", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
def test_check_estimator_unadapted_fails_only_for_the_numeric_target(Estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(Estimator(), on_fail=None)
    failed = [r for r in results if r["status"] == "failed"]
    assert failed  # (the checks that fit pass numeric targets)
    for r in failed:
        assert any("y must be a structured array" in text for text in _chain(r["exception"])), r["check_name"]
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert {"check_no_attributes_set_in_init", "check_parameters_default_constructible", "check_get_params_invariance",
            "check_set_params", "check_requires_y_none"} <= passed
