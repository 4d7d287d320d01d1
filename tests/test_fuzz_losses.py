"""Invariances of every regressor under every loss, and of the Cox models: options that must not change the model.

Each property is checked against the data, not against the package's own
output on other data: integer sample weights against repeated rows (and
weight 0 against dropped rows), a constant factor on the weights, sparse
against dense ``X``, permuted features and samples, the equivariances of
the losses (Huber's in ``y``, the log link's intercept), the D^2 and
concordance scores against scikit-learn's and scikit-survival's functions,
and the cross-validation scores against fits made fold by fold. The data
have a high signal, so that the support is unique and the coefficients on
it are the unique optimum of a convex problem (compared to the solvers'
tolerance, never to rounding).
"""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _loss_problems import cox_data
from _problems import REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.metrics import d2_tweedie_score
from sklearn.model_selection import KFold

from sparse_estimators import IHTRegressor, IOBSRegressor
from sparse_estimators.model_selection import SparsityCV
from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)

LOSSES = ["squared_error", "poisson", "gamma", "huber"]
COX = [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
       IOBSCoxPHSurvivalAnalysis]
# the solvers stop at a relative change of 1e-4: fits of the same problem agree to about that
RTOL, ATOL = 1e-3, 1e-4


def _data(loss, seed=0, n=150, p=18):
    """Gaussian ``X``; ``y`` of the loss's family with (log-)mean ``X beta + 0.5``, 3 features far from noise.

    The true features lie in 3 different groups of ``np.arange(p) // 3``; Huber's
    ``y`` has 5 gross outliers.
    """
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    support = np.sort(3 * rng.choice(p // 3, 3, replace=False) + rng.randint(0, 3, 3))
    beta = np.zeros(p)
    beta[support] = rng.choice([-1.0, 1.0], 3) * rng.uniform(0.5, 0.7, 3)
    eta = X @ beta + 0.5
    if loss == "poisson":
        y = rng.poisson(5.0 * np.exp(eta)).astype(float)
    elif loss == "gamma":
        y = rng.gamma(50.0, np.exp(eta) / 50.0)
    else:
        y = eta + 0.05 * rng.standard_normal(n)
        if loss == "huber":
            y[:5] += 20.0
    return X, y, beta, support


def _assert_same_model(a, b, perm=None):
    """The same support and (to the solvers' tolerance) coefficients; ``b`` fitted on ``X[:, perm]``."""
    coef, support = b.coef_, b.support_
    if perm is not None:
        coef = np.empty_like(b.coef_)
        coef[perm] = b.coef_
        support = np.sort(perm[b.support_])
    assert_array_equal(a.support_, support)
    assert_allclose(a.coef_, coef, rtol=RTOL, atol=ATOL)
    assert_allclose(a.intercept_, b.intercept_, rtol=RTOL, atol=ATOL)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (k clipped and such: not what these tests judge)
        yield


# -- the regressors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_weights_equal_repeated_and_dropped_rows_and_ignore_their_scale(Est, loss):
    X, y, _, support = _data(loss)
    rng = np.random.RandomState(1)
    counts = rng.randint(0, 4, X.shape[0])  # (a quarter of the rows have weight 0: dropped)
    rows = np.repeat(np.arange(X.shape[0]), counts)
    weighted = Est(k=3, loss=loss).fit(X, y, sample_weight=counts)
    assert_array_equal(weighted.support_, support)
    _assert_same_model(weighted, Est(k=3, loss=loss).fit(X[rows], y[rows]))
    relative = rng.uniform(0.5, 2.0, X.shape[0])
    _assert_same_model(Est(k=3, loss=loss).fit(X, y, sample_weight=relative),
                       Est(k=3, loss=loss).fit(X, y, sample_weight=relative / relative.sum()))


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_matrix])
def test_sparse_X_fits_as_dense(Est, loss, fmt):
    X, y, _, _ = _data(loss)
    weights = np.random.RandomState(2).uniform(0.5, 2.0, X.shape[0])
    for params in ({}, {"splicing": False}, {"groups": np.arange(X.shape[1]) // 3}):
        dense = Est(k=3, loss=loss, **params).fit(X, y, sample_weight=weights)
        sparse = Est(k=3, loss=loss, **params).fit(fmt(X), y, sample_weight=weights)
        _assert_same_model(dense, sparse)
        assert_allclose(sparse.predict(fmt(X)), dense.predict(X), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_float32_in_float32_out_and_float64_stays(Est, loss):
    X, y, _, support = _data(loss)
    for X32 in (X.astype(np.float32), sp.csr_matrix(X.astype(np.float32))):
        for params in ({"k": 3}, {"k": None}, {"k": 3, "positive": True, "always_select": [0]}):
            model = Est(loss=loss, **params).fit(X32, y)
            assert model.coef_.dtype == np.float32 and np.asarray(model.intercept_).dtype == np.float32
            assert model.predict(X32).dtype == np.float32
    model = Est(k=3, loss=loss).fit(X, y)
    assert model.coef_.dtype == np.float64 and type(model.intercept_) is float
    assert model.predict(X).dtype == np.float64


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_permuted_features_and_samples(Est, loss):
    X, y, _, _ = _data(loss)
    rng = np.random.RandomState(3)
    model = Est(k=3, loss=loss).fit(X, y)
    features = rng.permutation(X.shape[1])
    _assert_same_model(model, Est(k=3, loss=loss).fit(X[:, features], y), perm=features)
    samples = rng.permutation(X.shape[0])
    _assert_same_model(model, Est(k=3, loss=loss).fit(X[samples], y[samples]))


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_always_select_positive_and_groups(Est, loss):
    X, y, beta, support = _data(loss)
    p = X.shape[1]
    extra = np.setdiff1d(np.arange(p), support)[:2]
    forced = Est(k=5, loss=loss, always_select=extra).fit(X, y)
    assert_array_equal(forced.support_, np.union1d(extra, support))
    # positive=True: non-negative coefficients; with the negative features' columns flipped it is the free fit
    free = Est(k=3, loss=loss).fit(X, y)
    positive = Est(k=3, loss=loss, positive=True).fit(X, y)
    assert np.all(positive.coef_ >= 0) and set(support[beta[support] > 0]) <= set(positive.support_)
    flip = np.where(beta < 0, -1.0, 1.0)
    flipped = Est(k=3, loss=loss, positive=True).fit(X * flip, y)
    assert_array_equal(flipped.support_, support)
    assert_allclose(flipped.coef_ * flip, free.coef_, rtol=RTOL, atol=ATOL)
    # a forced feature whose true coefficient is negative stays, at 0, under positive=True
    negative = support[beta[support] < 0][:1]
    if negative.size:
        both = Est(k=3, loss=loss, positive=True, always_select=negative).fit(X, y)
        assert negative[0] in both.support_ and np.all(both.coef_ >= 0)
    # groups: whole groups, exactly k of them, the true ones; labels of any kind, in any order
    groups = np.arange(p) // 3
    grouped = Est(k=3, loss=loss, groups=groups).fit(X, y)
    assert_array_equal(grouped.groups_support_, groups[support])
    assert_array_equal(grouped.support_, np.flatnonzero(np.isin(groups, groups[support])))
    named = Est(k=3, loss=loss, groups=np.array([f"g{g}" for g in groups])).fit(X, y)
    _assert_same_model(grouped, named)
    features = np.random.RandomState(4).permutation(p)
    _assert_same_model(grouped, Est(k=3, loss=loss, groups=groups[features]).fit(X[:, features], y), perm=features)
    counts = np.random.RandomState(5).randint(0, 4, X.shape[0])
    rows = np.repeat(np.arange(X.shape[0]), counts)
    _assert_same_model(Est(k=3, loss=loss, groups=groups).fit(X, y, sample_weight=counts),
                       Est(k=3, loss=loss, groups=groups).fit(X[rows], y[rows]))


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_k_none_reports_its_support_and_weights_count_as_rows(Est, loss):
    X, y, _, support = _data(loss)
    model = Est(loss=loss).fit(X, y)
    assert model.k_ == model.support_.size == np.count_nonzero(model.coef_)
    assert set(support) <= set(model.support_)  # (seed 0's least squares also takes a noise feature of gain 12)
    doubled = Est(loss=loss).fit(X, y, sample_weight=np.full(X.shape[0], 2))
    repeated = Est(loss=loss).fit(np.vstack([X, X]), np.concatenate([y, y]))
    assert doubled.k_ == repeated.k_
    _assert_same_model(doubled, repeated)
    grouped = Est(loss=loss, groups=np.arange(X.shape[1]) // 3).fit(sp.csr_matrix(X), y)
    assert grouped.k_ == grouped.groups_support_.size


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_equivariance_in_y(Est, loss):
    """Huber and least squares: ``a y + c`` gives ``a coef_``; a log link: ``c y`` gives ``intercept_ + log c``."""
    X, y, _, _ = _data(loss)
    model = Est(k=3, loss=loss).fit(X, y)
    if loss in ("poisson", "gamma"):
        scaled = Est(k=3, loss=loss).fit(X, 4.0 * y)
        assert_array_equal(scaled.support_, model.support_)
        assert_allclose(scaled.coef_, model.coef_, rtol=RTOL, atol=ATOL)
        assert scaled.intercept_ == pytest.approx(model.intercept_ + np.log(4.0), abs=ATOL)
        assert_allclose(scaled.predict(X), 4.0 * model.predict(X), rtol=10 * RTOL)
    else:
        affine = Est(k=3, loss=loss).fit(X, -3.0 * y + 1.0)
        assert_array_equal(affine.support_, model.support_)
        assert_allclose(affine.coef_, -3.0 * model.coef_, rtol=RTOL, atol=10 * ATOL)
        assert affine.intercept_ == pytest.approx(-3.0 * model.intercept_ + 1.0, abs=10 * ATOL)


@pytest.mark.parametrize("Est", [IHTRegressor, IOBSRegressor])
@pytest.mark.parametrize("seed", [0, 6])
def test_huber_fit_of_minus_y_is_minus_the_fit(Est, seed):
    """Heavy-tailed noise, an even number of rows: the scales' medians split the rows in halves.

    (With the lower median, ``-y`` moved the pilot scale by up to 6 % and these coefficients by 0.3 %.)
    """
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((100, 20))
    y = X[:, :3] @ np.array([1.0, -1.0, 0.5]) + rng.standard_t(2, 100)
    model, mirrored = Est(k=3, loss="huber").fit(X, y), Est(k=3, loss="huber").fit(X, -y)
    assert_array_equal(mirrored.support_, model.support_)
    assert_allclose(mirrored.coef_, -model.coef_, rtol=1e-9, atol=1e-12)
    assert mirrored.intercept_ == pytest.approx(-model.intercept_, rel=1e-9, abs=1e-12)


def test_weighted_median_is_the_median_of_the_repeated_values():
    from sparse_estimators.losses._robust import weighted_median

    rng = np.random.RandomState(0)
    for n in (1, 2, 3, 4, 7, 10, 51):
        values = rng.standard_normal(n)
        counts = rng.randint(0, 4, n)
        counts[rng.randint(n)] += 1
        for v in (values, -values, np.round(values)):  # (rounded: tied values)
            for c in (counts, np.ones(n, int), np.append(np.ones(n - 1, int), 0)):
                if c.sum():
                    assert weighted_median(v, c.astype(float)) == pytest.approx(np.median(np.repeat(v, c)))


@pytest.mark.parametrize("Est", [IHTRegressor, IOBSRegressor])
@pytest.mark.parametrize("seed", [0, 2])
def test_huber_k_none_keeps_features_far_above_the_noise(Est, seed):
    """5 features of 4 to 7 noise standard deviations each, 10 % gross outliers: k=None takes all 5.

    (Judged at the pilot scale, the MAD of ``y``, which holds the signal, the criterion took 1 to 4 of them.)
    """
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((100, 200))
    support = np.sort(rng.choice(200, 5, replace=False))
    beta = np.zeros(200)
    beta[support] = rng.choice([-1.0, 1.0], 5) * rng.uniform(0.4, 0.7, 5)
    y = X @ beta + 1.0 + 0.1 * rng.standard_normal(100)
    y[:10] += rng.uniform(20.0, 40.0, 10)
    model = Est(loss="huber").fit(X, y)
    assert model.k_ == 5
    assert_array_equal(model.support_, support)
    scaled = Est(loss="huber").fit(X, 10.0 * y + 4.0)
    assert scaled.k_ == 5
    assert_allclose(scaled.criterion_path_, model.criterion_path_, rtol=1e-6)  # (equivariant, as the pilot)


@pytest.mark.parametrize("Est", [IHTRegressor, IOBSRegressor])
@pytest.mark.parametrize("loss, power", [("poisson", 1), ("gamma", 2)])
def test_log_link_predicts_positive_means_scored_by_weighted_d2(Est, loss, power):
    X, y, _, _ = _data(loss)
    weights = np.random.RandomState(6).uniform(0.5, 2.0, X.shape[0])
    model = Est(k=3, loss=loss).fit(X, y, sample_weight=weights)
    mean = np.exp(X @ model.coef_ + model.intercept_)
    assert np.all(model.predict(X) > 0)
    assert_allclose(model.predict(X), mean, rtol=1e-12)
    for w in (None, weights):
        assert model.score(X, y, sample_weight=w) == pytest.approx(
            d2_tweedie_score(y, mean, sample_weight=w, power=power), rel=1e-10)


@pytest.mark.parametrize("loss", LOSSES)
def test_sparsity_cv_scores_are_the_fold_fits_scores(loss):
    """At the true level (a unique model per fold); below it a warm-started path point may hold other features."""
    X, y, _, _ = _data(loss, n=120)
    weights = np.random.RandomState(7).uniform(0.5, 2.0, X.shape[0])
    cv = KFold(3, shuffle=True, random_state=0)
    search = SparsityCV(IHTRegressor(loss=loss), k_grid=[1, 2, 3], cv=cv).fit(X, y, sample_weight=weights)
    expected = np.mean([IHTRegressor(k=3, loss=loss).fit(X[train], y[train], sample_weight=weights[train])
                        .score(X[test], y[test], sample_weight=weights[test]) for train, test in cv.split(X)])
    assert search.cv_results_["mean_test_score"][2] == pytest.approx(expected, rel=1e-4)
    assert search.k_ == 3


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", LOSSES)
def test_pickle_clone_warm_start_and_coef_init(Est, loss):
    X, y, _, _ = _data(loss)
    model = Est(k=3, loss=loss).fit(X, y)
    assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
    assert_allclose(clone(model).fit(X, y).predict(X), model.predict(X), rtol=1e-10)
    warm = Est(k=3, loss=loss, warm_start=True).fit(X, y)
    _assert_same_model(model, warm.fit(X, y))
    _assert_same_model(model, Est(k=3, loss=loss).fit(X, y, coef_init=model.coef_))


# -- the Cox models --------------------------------------------------------------------------------------------------
def _survival_at(model, X, times):
    return np.array([f(times) for f in model.predict_survival_function(X)])


@pytest.mark.parametrize("Est", COX)
@pytest.mark.parametrize("tied", [False, True])
def test_cox_weights_rows_permutations_and_sparse_X(Est, tied):
    X, y, _, support = cox_data(tied=tied)
    rng = np.random.RandomState(8)
    model = Est(k=3).fit(X, y)
    assert_array_equal(model.support_, support)
    counts = rng.randint(0, 4, X.shape[0])
    rows = np.repeat(np.arange(X.shape[0]), counts)
    weighted, repeated = Est(k=3).fit(X, y, sample_weight=counts), Est(k=3).fit(X[rows], y[rows])
    _assert_same_model(weighted, repeated)
    times = repeated.unique_times_  # (the weight-0 rows' times are steps of size 0 in the weighted baseline)
    assert_allclose(_survival_at(weighted, X[:5], times), _survival_at(repeated, X[:5], times), atol=ATOL)
    relative = rng.uniform(0.5, 2.0, X.shape[0])
    _assert_same_model(Est(k=3).fit(X, y, sample_weight=relative), Est(k=3).fit(X, y, sample_weight=7.0 * relative))
    samples = rng.permutation(X.shape[0])
    _assert_same_model(model, Est(k=3).fit(X[samples], y[samples]))
    features = rng.permutation(X.shape[1])
    _assert_same_model(model, Est(k=3).fit(X[:, features], y), perm=features)
    _assert_same_model(model, Est(k=3).fit(sp.csc_matrix(X), y))
    if not tied:  # (without tied times Efron's likelihood is Breslow's)
        _assert_same_model(model, Est(k=3, ties="efron").fit(sp.csr_matrix(X), y))


@pytest.mark.parametrize("Est", COX)
def test_cox_partial_likelihood_ignores_the_scale_of_time(Est):
    from sksurv.util import Surv

    X, y, _, _ = cox_data(tied=True)
    model = Est(k=3).fit(X, y)
    _assert_same_model(model, Est(k=3).fit(X, Surv.from_arrays(y["event"], 37.0 * y["time"] + 5.0)))


@pytest.mark.parametrize("tied", [False, True])
def test_cox_scores_and_functions_against_independent_computations(tied):
    from sksurv.metrics import concordance_index_censored

    X, y, _, _ = cox_data(tied=tied)
    event, time = y["event"], y["time"]
    model = IHTCoxPHSurvivalAnalysis(k=3).fit(X, y)
    risk = model.predict(X)
    assert model.score(X, y) == pytest.approx(concordance_index_censored(event, time, risk)[0], rel=1e-12)
    counts = np.random.RandomState(9).randint(0, 4, X.shape[0])  # weights: each comparable pair counts w_i w_j
    rows = np.repeat(np.arange(X.shape[0]), counts)
    assert model.score(X, y, sample_weight=counts) == pytest.approx(
        concordance_index_censored(event[rows], time[rows], risk[rows])[0], rel=1e-12)
    # Breslow's baseline cumulative hazard by its definition: the sum over event times u <= t of d(u) / sum_{T >= u} r
    r = np.exp(X @ model.coef_)
    jumps = {u: event[time == u].sum() / r[time >= u].sum() for u in np.unique(time[event])}
    expected = [sum(v for u, v in jumps.items() if u <= t) for t in model.unique_times_]
    assert_allclose(model.cum_baseline_hazard_.y, expected, rtol=1e-10)
    S = model.predict_survival_function(X[:20], return_array=True)
    assert np.all(np.diff(S, axis=1) <= 0) and S.min() >= 0 and S.max() <= 1
    assert_allclose(S, np.exp(-model.predict_cumulative_hazard_function(X[:20], return_array=True)), rtol=1e-12)
