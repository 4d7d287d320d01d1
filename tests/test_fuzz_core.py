"""Fuzz round on the sparse core: scale, dtypes, constraints, weights, schedules and errors, against references.

Each expectation comes from outside the code under test: the l2 norms of
rows and groups from ``math.hypot`` (scaled, no overflow or underflow) and
the operators' positive homogeneity ``P(a z) = a P(z)`` at any scale; the
coefficients of ``positive=True`` fits from ``scipy.optimize.nnls`` on the
found support; weight 0 against dropped rows, and float32 against float64
fits of the same data (the documented dtypes, as scikit-learn's linear
models keep float32); regularized IHT's documented weight schedule with
groups (unweighted after 0.5 to 0.7 ``max_iter``, no ConvergenceWarning);
``SparsityCV``'s error against ``GridSearchCV``'s NaN scores on the same
folds; minus twice the log-likelihood proportional to the scale of
frequency weights, however large; lq thresholding at a subnormal threshold
against the prox's bound on its shrinkage. The data have a high signal, so that the supports are unique;
coefficients are compared to the solvers' tolerance, never to rounding.
"""

import math
import warnings

import numpy as np
import pytest
from _problems import CLASSIFIERS, REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import nnls
from sklearn.model_selection import GridSearchCV, KFold

from sparse_estimators import (
    IHTClassifier,
    IHTRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)
from sparse_estimators.model_selection import SparsityCV
from sparse_estimators.structures import Groups, Rows
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft

OPERATORS = [Hard(), Soft(), Reciprocal(c=0.3), Lq(q=0.5)]
OP_IDS = ["hard", "soft", "rec0.3", "lq0.5"]
#: beyond the squares' range (1e154 and 1e-154 for float64), the entries themselves normal floats
EXTREME_SCALES = [2.0 ** -1000, 1e-300, 1e-170, 1e160, 1e300, 2.0 ** 1000]


def _hypot_rows(Z):
    return np.array([math.hypot(*row) for row in Z])


def _hypot_groups(Z, codes, n_groups):
    return np.array([math.hypot(*Z[codes == g].ravel()) for g in range(n_groups)])


def _top(norms, k):
    """The k largest (ties: the lower index), sorted."""
    return np.sort(np.argsort(-norms, kind="stable")[:k])


# --------------------------------------------------------------------------
# row and group norms at extreme scales (the projections' ranking)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
def test_row_projection_is_homogeneous_at_extreme_scales(op):
    # the rows of a matrix are ranked by their l2 norms: from 1e154 up the squares overflowed to inf and
    # below 1e-154 underflowed to 0, the ranking became ties broken by the row index (4 of 7 rows
    # wrong here) and the soft-type operators returned NaN (inf / inf)
    rng = np.random.RandomState(0)
    Z = rng.standard_normal((30, 3))
    for scale in EXTREME_SCALES:
        out, support = op(scale * Z, 7, return_support=True)
        assert_array_equal(support, _top(_hypot_rows(scale * Z), 7))
        assert np.all(np.isfinite(out))
        assert_allclose(out / scale, op(Z, 7), rtol=1e-12, atol=0)


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
def test_group_projection_is_homogeneous_at_extreme_scales(op):
    rng = np.random.RandomState(1)
    Z = rng.standard_normal((30, 2))
    codes = rng.permutation(np.repeat(np.arange(10), 3))
    structure = Groups(op, codes)
    forced = structure.with_forced([4])  # (the projection with always_select's units, another path)
    for scale in EXTREME_SCALES:
        norms = _hypot_groups(scale * Z, codes, 10)
        assert_allclose(structure.unit_scores(scale * Z), norms, rtol=1e-14, atol=0)
        out, support = structure(scale * Z, 3, return_support=True)
        assert_array_equal(support, np.flatnonzero(np.isin(codes, _top(norms, 3))))
        assert_allclose(out / scale, structure(Z, 3), rtol=1e-12, atol=0)
        others = norms.copy()
        others[4] = -1.0
        _, support = forced(scale * Z, 3, return_support=True)
        assert_array_equal(support, np.flatnonzero(np.isin(codes, np.r_[4, _top(others, 2)])))
        assert_allclose(forced(scale * Z, 3) / scale, forced(Z, 3), rtol=1e-12, atol=0)


def test_row_scores_and_expansion_at_extreme_scales():
    # Rows with forced features ranks by unit_scores; the support expansion of accelerated IHT too
    rng = np.random.RandomState(2)
    G = rng.standard_normal((40, 4))
    rows = Rows(Hard()).with_forced([0])
    mask = np.zeros(40, dtype=bool)
    mask[[3, 9]] = True
    for scale in EXTREME_SCALES:
        norms = _hypot_rows(scale * G)
        assert_allclose(rows.unit_scores(scale * G), norms, rtol=1e-14, atol=0)
        others = norms.copy()
        others[[0, 3, 9]] = -1.0
        expected = mask.copy()
        expected[[0, *_top(others, 5)]] = True
        assert_array_equal(rows.expand(scale * G, mask, 5), expected)
        assert_array_equal(Rows(Hard()).expand(scale * G, mask, 5)[[3, 9]], True)
        free = norms.copy()
        free[[3, 9]] = -1.0
        assert_array_equal(np.flatnonzero(Rows(Hard()).expand(scale * G, mask, 5) & ~mask), _top(free, 5))


def test_row_norms_keep_zero_infinite_and_nan_rows():
    # a zero row stays 0 (not NaN from 0 / 0), an infinite entry gives inf beside finite rows scaled right,
    # a NaN row stays NaN (refused)
    Z = np.array([[0.0, 0.0], [np.inf, 1.0], [1e200, 1e200], [3.0, 4.0]])
    assert_allclose(Rows(Hard()).unit_scores(Z), [0.0, np.inf, math.hypot(1e200, 1e200), 5.0], rtol=1e-15)
    assert_allclose(Groups(Hard(), [0, 0, 1, 1]).unit_scores(Z), [np.inf, math.hypot(1e200, 1e200, 3.0, 4.0)],
                    rtol=1e-15)
    tiny = np.array([[0.0, 0.0], [1e-200, 0.0], [3e-200, 4e-200]])
    assert_allclose(Rows(Hard()).unit_scores(tiny), [0.0, 1e-200, 5e-200], rtol=1e-15)
    assert_allclose(Groups(Hard(), [0, 0, 1]).unit_scores(tiny), [1e-200, 5e-200], rtol=1e-15)
    with pytest.raises(ValueError, match="NaN"):
        Hard()(np.array([[np.nan, 1.0], [1e200, 1e200], [1.0, 1.0]]), 1)


def test_float32_row_and_group_norms_beyond_float32_range():
    # float32 squares leave the range from about 1e19 up and 1e-19 down
    rng = np.random.RandomState(3)
    Z = rng.standard_normal((20, 3))
    codes = np.repeat(np.arange(10), 2)
    for scale in [1e-35, 1e-25, 1e25, 1e35]:
        Zs = (scale * Z).astype(np.float32)
        assert_allclose(Rows(Hard()).unit_scores(Zs), _hypot_rows(Zs.astype(float)), rtol=1e-6)
        assert_allclose(Groups(Hard(), codes).unit_scores(Zs), _hypot_groups(Zs.astype(float), codes, 10), rtol=1e-6)
        out = Soft()(Zs, 5)
        assert out.dtype == np.float32 and np.all(np.isfinite(out))


# --------------------------------------------------------------------------
# contracts that held in this round (kept as guards): positive, zero weights, float32
# --------------------------------------------------------------------------
def _regression(seed, n=100, p=12, outputs=1):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    B = np.zeros((p, outputs))
    B[[1, 4, 7, 9]] = rng.uniform(0.6, 1.2, (4, outputs))
    Y = X @ B + 0.3 * rng.standard_normal((n, outputs))
    return X, (Y[:, 0] if outputs == 1 else Y)


@pytest.mark.parametrize("Regressor", REGRESSORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("options", [{"k": 3}, {"k": 2, "groups": np.repeat(np.arange(6), 2)},
                                     {"k": 3, "always_select": [0]}, {"k": 2, "groups": np.repeat(np.arange(6), 2),
                                                                      "always_select": [3]}],
                         ids=["rows", "groups", "always", "groups-always"])
def test_positive_fits_are_nnls_on_their_support(Regressor, options):
    # coef_ >= 0 and, on the support (every feature of the selected groups), the non-negative least squares
    # of the centred data; the forced features (groups) counted in k and kept
    X, Y = _regression(1, outputs=2)
    for y in (Y[:, 0], Y):
        est = Regressor(positive=True, **options).fit(X, y)
        coef = np.atleast_2d(est.coef_)
        assert np.all(coef >= 0)
        S = est.support_
        codes = options.get("groups")
        units = S if codes is None else np.unique(codes[S])
        assert units.size == options["k"] and set(options.get("always_select", [])) <= set(units.tolist())
        Xc = X[:, S] - X[:, S].mean(axis=0)
        for j, target in enumerate(np.atleast_2d(y.T)):
            assert_allclose(coef[j, S], nnls(Xc, target - target.mean())[0], atol=1e-6)


@pytest.mark.parametrize("Estimator", REGRESSORS + CLASSIFIERS, ids=lambda c: c.__name__)
def test_zero_weights_are_dropped_rows_with_groups_and_several_outputs(Estimator):
    X, Y = _regression(2, n=120, outputs=2)
    rng = np.random.RandomState(2)
    w = rng.uniform(0.5, 2, 120)
    w[::4] = 0
    keep = w > 0
    groups = np.repeat(np.arange(6), 2)
    targets = [Y, Y[:, 0]] if Estimator in REGRESSORS else [np.digitize(Y[:, 0] - Y[:, 0].mean(), [-0.7, 0.7])]
    for y in targets:
        for options in ({"k": 2, "groups": groups}, {"k": None}):
            a = Estimator(**options).fit(X, y, sample_weight=w)
            b = Estimator(**options).fit(X[keep], y[keep], sample_weight=w[keep])
            assert_array_equal(a.support_, b.support_)
            assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-7)
            assert_allclose(a.intercept_, b.intercept_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("Regressor", REGRESSORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("loss", ["squared_error", "poisson", "gamma", "huber"])
def test_float32_regressors_keep_float32_and_the_float64_fit(Regressor, loss):
    # as scikit-learn's linear models: float32 coef_, intercept_ and predictions, the float64 fit's support
    rng = np.random.RandomState(4)
    X = rng.standard_normal((150, 10)).astype(np.float32)
    eta = 0.5 * X[:, 1] - 0.4 * X[:, 4] + 0.3 * X[:, 7]
    y = {"squared_error": eta + 0.1 * rng.standard_normal(150), "poisson": rng.poisson(np.exp(eta)).astype(float),
         "gamma": rng.gamma(3.0, np.exp(eta) / 3.0), "huber": eta + 0.1 * rng.standard_normal(150)}[loss]
    single = Regressor(k=3, loss=loss).fit(X, y)
    double = Regressor(k=3, loss=loss).fit(X.astype(np.float64), y)
    assert single.coef_.dtype == np.float32 and np.asarray(single.intercept_).dtype == np.float32
    assert single.predict(X).dtype == np.float32
    assert_array_equal(single.support_, double.support_)
    assert_allclose(single.coef_, double.coef_, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("Classifier", CLASSIFIERS, ids=lambda c: c.__name__)
def test_float32_classifiers_keep_float32(Classifier):
    rng = np.random.RandomState(5)
    X = rng.standard_normal((150, 10)).astype(np.float32)
    for y in ((X[:, 1] - X[:, 4] > 0).astype(int), np.digitize(X[:, 1] - X[:, 4], [-0.5, 0.5])):
        single = Classifier(k=2).fit(X, y)
        double = Classifier(k=2).fit(X.astype(np.float64), y)
        for value in (single.coef_, np.asarray(single.intercept_), single.predict_proba(X),
                      single.decision_function(X)):
            assert value.dtype == np.float32
        assert_array_equal(single.support_, double.support_)
        assert_allclose(single.predict_proba(X), double.predict_proba(X), atol=1e-3)


# --------------------------------------------------------------------------
# regularized IHT with groups: the default weight schedule counts features
# --------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", [RegularizedIHTRegressor, RegularizedIHTClassifier], ids=lambda c: c.__name__)
def test_regularized_iht_with_groups_unweights_its_support_within_max_iter(Estimator):
    # the documented schedule: a stable support is unweighted after about 0.7 max_iter iterations (at least
    # 0.5), then the fit stops; the default step k / max_iter counted groups while the weights are per
    # feature, so a support of 2 groups of 3 features stayed weighted past max_iter (ConvergenceWarning
    # on every such fit, 1000 iterations)
    rng = np.random.RandomState(6)
    X = rng.standard_normal((200, 18))
    groups = np.repeat(np.arange(6), 3)
    eta = X[:, 3:6] @ [1.0, -0.8, 0.6] + X[:, 12:15] @ [0.7, 0.9, -1.0]
    y = eta + 0.3 * rng.standard_normal(200) if Estimator is RegularizedIHTRegressor else (eta > 0).astype(int)
    for max_iter in (200, 1000):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (a ConvergenceWarning fails the test)
            est = Estimator(k=2, groups=groups, max_iter=max_iter).fit(X, y)
        assert 0.5 * max_iter <= est.n_iter_ < max_iter
        assert_array_equal(est.support_, np.r_[3:6, 12:15])


# --------------------------------------------------------------------------
# classifiers with a class missing from a training fold
# --------------------------------------------------------------------------
def test_cv_error_names_the_failed_scoring_not_r2():
    # class 2 only in the first (unshuffled) fold: a probability scorer cannot score that fold's models,
    # scikit-learn's GridSearchCV gives NaN at every k too; the error blamed one-sample folds and R^2
    rng = np.random.RandomState(8)
    X = rng.standard_normal((60, 8))
    y = (X[:, 0] > 0).astype(int)
    y[:3] = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = GridSearchCV(IHTClassifier(), {"k": [1, 2, 3]}, cv=KFold(5), scoring="neg_log_loss").fit(X, y)
        assert np.all(np.isnan(reference.cv_results_["mean_test_score"]))
        search = SparsityCV(IHTClassifier(), k_grid=[1, 2, 3], cv=KFold(5), scoring="neg_log_loss")
        with pytest.raises(ValueError, match="scoring 'neg_log_loss' failed") as info:
            search.fit(X, y)
    assert "R^2" not in str(info.value) and "error_score='raise'" in str(info.value)
    with pytest.raises(ValueError, match="labels"):  # (scikit-learn's own error, as the message says)
        search.set_params(error_score="raise").fit(X, y)


# -- huge frequency weights: the information criteria stay finite -------------------------------------------


@pytest.mark.parametrize("loss_name", ["poisson", "gamma", "logistic"])
def test_likelihood_scales_with_huge_frequency_weights(loss_name):
    """Weights as repeated rows: ``N`` times the weighted mean, so ``-2 log L`` is proportional to the weights' scale.

    Before, ``2 N (w @ terms)`` overflowed once the weights summed past about
    1e154: the criterion was ``inf`` at every ``k`` and ``k=None`` chose 1.
    """
    from sparse_estimators.losses import GammaLoss, LogisticLoss, PoissonLoss

    rng = np.random.default_rng(3)
    n, p = 120, 6
    X = rng.standard_normal((n, p))
    z = X[:, :2] @ np.array([0.7, -0.5])
    y = {"poisson": rng.poisson(np.exp(z)).astype(float),
         "gamma": rng.gamma(2.0, np.exp(z) / 2.0),
         "logistic": (z + 0.5 * rng.standard_normal(n) > 0).astype(float)}[loss_name]
    make = {"poisson": PoissonLoss, "gamma": GammaLoss, "logistic": LogisticLoss}[loss_name]
    w = rng.uniform(0.5, 2.0, n)
    W = np.zeros((p, 1))
    W[:2, 0] = [0.3, -0.2]
    b = np.array([0.1])
    small = make(X, y, sample_weight=w * 1e100).minus_two_log_likelihood(W, b)
    huge = make(X, y, sample_weight=w * 1e200).minus_two_log_likelihood(W, b)
    assert np.isfinite(small) and np.isfinite(huge)
    assert_allclose(huge, small * 1e100, rtol=1e-10)


@pytest.mark.parametrize("loss", ["poisson", "gamma"])
def test_k_none_with_huge_frequency_weights(loss):
    """``k=None`` at weights times 1e200 chooses as at times 1e140 (both: data repeated beyond any penalty)."""
    rng = np.random.default_rng(4)
    n, p = 150, 8
    X = rng.standard_normal((n, p))
    mu = np.exp(X[:, :2] @ np.array([0.6, -0.5]))
    y = rng.poisson(mu).astype(float) if loss == "poisson" else rng.gamma(2.0, mu / 2.0)
    w = rng.uniform(0.5, 2.0, n)
    reference = IHTRegressor(k=None, loss=loss).fit(X, y, sample_weight=w * 1e140)
    huge = IHTRegressor(k=None, loss=loss).fit(X, y, sample_weight=w * 1e200)
    assert reference.k_ > 1  # (the reference did not fall back to the smallest k)
    assert huge.k_ == reference.k_
    assert_array_equal(np.flatnonzero(huge.coef_), np.flatnonzero(reference.coef_))


# -- lq thresholding at a subnormal threshold ------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.3, 2.0 / 3.0, 0.9])
def test_lq_with_subnormal_threshold_keeps_the_large_entries(q):
    """A subnormal ``tau`` shrinks the kept entries by ``K tau^(2-q) |z|^(q-1)``, far below their rounding.

    Before, ``|z| / tau`` overflowed: NaN coefficients and overflow warnings.
    """
    z = np.array([3.0, -2.0, 1e-310, 5e-311, 0.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = Lq(q)(z, 3)
    assert_allclose(out[[0, 1, 5]], z[[0, 1, 5]], rtol=1e-12)
    assert_array_equal(out[[2, 3, 4]], 0.0)
