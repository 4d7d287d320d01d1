"""Fuzz round over the combinations of thresholding operators, solvers and structures.

Every expectation comes from the mathematics or the documented contract,
never from the code's own output: an independent numpy implementation of the
operators written from their docstrings (algorithms.md Sec. 2), positive
homogeneity at extreme scales, invariances of the fits (relabelled groups,
permuted outputs or classes, flipped binary labels, ``c Y + s``, centred
data without an intercept), the Gram path against the plain one, exact
recovery on noiseless designs, and the shapes and errors of the scikit-learn
API. Supports are compared exactly only where the problem has a clear
answer; coefficients to optimisation tolerance.
"""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from _problems import CLASSIFIERS, REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import (
    AcceleratedIHTRegressor,
    IHTRegressor,
    IOBSRegressor,
    RegularizedIHTRegressor,
)
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft

OPERATORS = ["hard", "soft", Reciprocal(c=0.5), Lq(q=0.5)]
OP_IDS = ["hard", "soft", "rec0.5", "lq0.5"]
REG_IDS = [cls.__name__ for cls in REGRESSORS]
CLF_IDS = [cls.__name__ for cls in CLASSIFIERS]


# --------------------------------------------------------------------------
# an independent implementation of the operators (algorithms.md Sec. 2)
# --------------------------------------------------------------------------
def _ref_shrink(name, a, tau, param):
    """The scalar maps, computed in extended precision relative to ``tau`` (no overflow or underflow)."""
    u = np.asarray(a, dtype=np.longdouble) / np.longdouble(tau)
    if name == "hard":
        w = u
    elif name == "soft":
        w = np.maximum(u - 1, 0)
    elif name == "reciprocal":
        w = (u + np.sqrt(np.maximum(u * u - (1 - np.longdouble(param) ** 2), 0))) / 2
    else:  # lq: the larger root of u = w + K w^(q - 1), by bisection above the minimiser of the right side
        q = param
        K = q * (2 - 2 * q) ** (1 - q) / (2 - q) ** (2 - q)
        lo = np.full(u.shape, (K * (1 - q)) ** (1 / (2 - q)), dtype=np.longdouble)
        hi = u + 1
        for _ in range(200):
            mid = (lo + hi) / 2
            above = mid + K * mid ** (q - 1) > u
            hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
        w = (lo + hi) / 2
    return np.asarray(w * np.longdouble(tau), dtype=float)


def _ref_operator(name, param, z, k):
    """Keep the k largest magnitudes (rows by l2 norm; ties to the lower index), shrink them at tau."""
    z = np.asarray(z, dtype=float)
    mags = np.abs(z) if z.ndim == 1 else np.sqrt((z.astype(np.longdouble) ** 2).sum(axis=1)).astype(float)
    order = np.argsort(-mags, kind="stable")
    keep, tau = order[:k], (mags[order[k]] if k < mags.size else 0.0)
    out = np.zeros_like(z)
    if tau == 0:
        out[keep] = z[keep]
        return out
    new = _ref_shrink(name, mags[keep], tau, param)
    scale = np.where(mags[keep] > 0, new / np.where(mags[keep] > 0, mags[keep], 1), 0.0)
    out[keep] = z[keep] * (scale if z.ndim == 1 else scale[:, None])
    return out


REF_CASES = [(Hard(), "hard", None), (Soft(), "soft", None), (Reciprocal(c=0.0), "reciprocal", 0.0),
             (Reciprocal(c=0.7), "reciprocal", 0.7), (Lq(q=0.1), "lq", 0.1), (Lq(q=2 / 3), "lq", 2 / 3),
             (Lq(q=0.95), "lq", 0.95)]
REF_IDS = ["hard", "soft", "rec0", "rec0.7", "lq0.1", "lq2/3", "lq0.95"]


@pytest.mark.parametrize("op, name, param", REF_CASES, ids=REF_IDS)
def test_operators_match_an_independent_implementation_at_every_scale(op, name, param):
    # positive homogeneity (the module's contract, P(a z) = a P(z)) down to 1e-300 and up to 1e300: the
    # reference works relative to tau, so a product that under- or overflows shows as a wrong value
    rng = np.random.RandomState(0)
    z, Z = rng.standard_normal(30), rng.standard_normal((30, 3))
    for scale, k in itertools.product([1e-300, 1e-160, 1e-3, 1.0, 1e5, 1e160, 1e300], [1, 7, 29]):
        assert_allclose(op(scale * z, k), _ref_operator(name, param, scale * z, k), rtol=1e-9, atol=0)
        # (rows are ranked by l2 norms, computed scaled where their squares leave float64: tests/test_fuzz_core.py)
        assert_allclose(op(scale * Z, k) / scale, _ref_operator(name, param, Z, k), rtol=1e-9, atol=0)
        assert np.count_nonzero(op(scale * z, k)) == k  # (no ties here)


def test_reciprocal_tends_to_hard_as_c_tends_to_one():
    # the shrunk magnitude (a + sqrt(a^2 - tau^2 (1 - c^2))) / 2 rises to a as c -> 1
    rng = np.random.RandomState(1)
    z = rng.standard_normal(60)
    hard = Hard()(z, 15)
    gaps = [np.max(np.abs(Reciprocal(c=c)(z, 15) - hard)) for c in [0.0, 0.5, 0.9, 0.99, 0.9999]]
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 1e-3 * gaps[0]


# --------------------------------------------------------------------------
# regressors: every solver x operator, one and several outputs, both paths
# --------------------------------------------------------------------------
def _regression(seed=0, n=60, p=12, noise=0.3):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    B = np.zeros((p, 3))
    B[[1, 4, 8]] = [[2.0, 1.0, 0.0], [-3.0, 2.0, 0.5], [1.5, -1.0, 0.0]]
    Y = X @ B + noise * rng.standard_normal((n, 3))
    return X, Y


def _nonzero_rows(coef):
    return np.flatnonzero(np.any(np.atleast_2d(coef) != 0, axis=0))


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", REGRESSORS, ids=REG_IDS)
def test_regressor_contract_paths_and_output_conventions(cls, op):
    X, Y = _regression()
    y = Y[:, 0]
    for debias in (True, False):
        kw = dict(k=3, thresholding=op, debias=debias, max_iter=200)
        fits = {}
        for precompute, target in itertools.product((True, False), ("1d", "col", "Y")):
            yy = {"1d": y, "col": y[:, None], "Y": Y}[target]
            model = cls(**kw, precompute=precompute).fit(X, yy)
            shape = {"1d": (12,), "col": (1, 12), "Y": (3, 12)}[target]
            assert np.shape(model.coef_) == shape and np.shape(model.intercept_) == shape[:-1]
            assert model.n_features_in_ == 12 and model.k_ == 3 and 0 <= model.n_iter_ <= 200
            rows = _nonzero_rows(model.coef_)
            assert_array_equal(model.support_, rows)  # one support shared by the outputs
            assert rows.size == 3 if op == "hard" else rows.size <= 3
            assert np.isfinite(model.coef_).all()
            fits[precompute, target] = model
        for target in ("1d", "col", "Y"):  # the Gram path and the plain one: the same fit
            gram, plain = fits[True, target], fits[False, target]
            assert_array_equal(gram.support_, plain.support_)
            assert_allclose(gram.coef_, plain.coef_, rtol=1e-6, atol=1e-8)
        # a one-column Y is the 1-D fit, as a (1, p) row
        assert_allclose(fits[False, "col"].coef_[0], fits[False, "1d"].coef_, rtol=1e-10, atol=1e-12)
        # permuting the outputs permutes the rows of coef_
        perm = [2, 0, 1]
        permuted = cls(**kw, precompute=False).fit(X, Y[:, perm])
        assert_allclose(permuted.coef_, fits[False, "Y"].coef_[perm], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", REGRESSORS, ids=REG_IDS)
def test_regressor_equivariance_and_centred_data_without_intercept(cls, op):
    # c Y + s: coefficients times c, intercepts c b + s (all operators are positively homogeneous)
    X, Y = _regression(seed=1)
    kw = dict(k=3, thresholding=op, precompute=False)
    base = cls(**kw).fit(X, Y)
    for c, s in ((1e-3, 5.0), (1e4, -2.0)):
        moved = cls(**kw).fit(X, c * Y + s)
        assert_array_equal(moved.support_, base.support_)
        assert_allclose(moved.coef_ / c, base.coef_, rtol=1e-6, atol=1e-9)
        assert_allclose(moved.intercept_, c * base.intercept_ + s, rtol=1e-6, atol=1e-6 * c)
    # on centred X and y, fit_intercept=False fits the same coefficients, with intercept 0
    Xc, Yc = X - X.mean(axis=0), Y - Y.mean(axis=0)
    with_b = cls(**kw).fit(Xc, Yc)
    without = cls(**kw, fit_intercept=False).fit(Xc, Yc)
    assert_array_equal(without.support_, with_b.support_)
    assert_allclose(without.coef_, with_b.coef_, rtol=1e-6, atol=1e-9)
    assert_array_equal(without.intercept_, 0.0)


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", REGRESSORS, ids=REG_IDS)
def test_best_iterate_warm_start_and_convergence_warning(cls, op):
    rng = np.random.RandomState(7)
    X = rng.standard_normal((50, 30))
    y = X[:, :6] @ [3, -2, 1.5, 1, -1, 0.5] + 0.5 * rng.standard_normal(50)
    for precompute in (True, False):
        # debias=False: the solver's iterate of lowest objective (the last for hard thresholding)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # (30 iterations: the best of those)
            model = cls(k=4, thresholding=op, debias=False, precompute=precompute, max_iter=30).fit(X, y)
        objective = 0.5 * np.mean((y - model.predict(X)) ** 2)
        if cls is not RegularizedIHTRegressor:  # (its curve holds the penalised objective)
            assert objective <= model.loss_curve_.min() * (1 + 1e-9)
        # a warm-started refit on the same data is no worse
        warm = cls(k=4, thresholding=op, precompute=precompute, warm_start=True).fit(X, y)
        first = np.mean((y - warm.predict(X)) ** 2)
        assert np.mean((y - warm.fit(X, y).predict(X)) ** 2) <= first * (1 + 1e-9)
        # one small fixed step cannot converge: a ConvergenceWarning, one iteration
        with pytest.warns(ConvergenceWarning):
            short = cls(k=4, thresholding=op, precompute=precompute, max_iter=1, step_size=0.01,
                        splicing=False).fit(X, y)
        assert short.n_iter_ == 1 and _nonzero_rows(short.coef_).size <= 4


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", REGRESSORS, ids=REG_IDS)
def test_noiseless_recovery_and_coef_init_at_the_truth(cls, op):
    rng = np.random.RandomState(2)
    X = rng.standard_normal((60, 12))
    beta = np.zeros(12)
    beta[[1, 4, 8]] = [2.0, -3.0, 1.5]
    y = X @ beta + 1.0
    for precompute in (True, False):
        model = cls(k=3, thresholding=op, precompute=precompute).fit(X, y)
        assert_array_equal(model.support_, [1, 4, 8])
        assert_allclose(model.coef_, beta, atol=1e-6)
        assert_allclose(model.intercept_, 1.0, atol=1e-6)
    started = cls(k=3, thresholding=op, precompute=False).fit(X, y, coef_init=beta)
    assert_array_equal(started.support_, [1, 4, 8])
    assert_allclose(started.coef_, beta, atol=1e-6)


# --------------------------------------------------------------------------
# degenerate columns, groups and always_select, regressors and classifiers
# --------------------------------------------------------------------------
def _special_columns(seed=2):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((60, 12))
    X[:, 0], X[:, 2] = 0.0, 5.0  # a column of zeros, a constant one
    X[:, 3] = X[:, 4]  # a duplicated one
    eta = X[:, [1, 4, 8]] @ [2.0, -3.0, 1.5]
    return X, eta


@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=REG_IDS + CLF_IDS)
def test_zero_constant_and_duplicated_columns(cls, op):
    X, eta = _special_columns()
    y = eta + 0.1 * np.random.RandomState(3).standard_normal(60) if cls in REGRESSORS else (eta > 0).astype(int)
    for debias in (True, False):
        model = cls(k=3, thresholding=op, debias=debias).fit(X, y)
        assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_).all()
        coef = np.atleast_2d(model.coef_)
        assert not np.any(coef[:, [0, 2]])  # never the zero or constant column
        assert not np.isin([0, 2], model.support_).any()


@pytest.mark.parametrize("precompute", [True, False])
@pytest.mark.parametrize("cls", REGRESSORS, ids=REG_IDS)
def test_fewer_usable_features_than_exchanges(cls, precompute):
    # k = 5 of 10 features, 3 of them zero columns: abess's search has fewer usable features to add than
    # exchanges to try (it crashed on numpy 2's integer count); the fit keeps 5 non-zero columns and is
    # least squares on them
    rng = np.random.RandomState(0)
    for _ in range(4):
        X = rng.standard_normal((40, 10))
        zero = rng.choice(10, 3, replace=False)
        X[:, zero] = 0.0
        y = X @ rng.standard_normal(10) + rng.standard_normal(40)
        model = cls(k=5, precompute=precompute).fit(X, y)
        assert model.support_.size == 5 and not np.isin(zero, model.support_).any()
        design = np.c_[X[:, model.support_], np.ones(40)]
        assert_allclose(model.coef_[model.support_], np.linalg.lstsq(design, y, rcond=None)[0][:5], rtol=1e-6)


def _grouped(seed=3):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((80, 12))
    beta = np.zeros(12)
    beta[[2, 3, 8, 9]] = [2.0, -1.0, 1.5, 1.0]
    eta = X @ beta
    return X, eta, rng


GROUPS = np.repeat(np.arange(6), 2)
RELABELLED = np.array([50, 3, -7, 11, 0, 2])[GROUPS]  # (another order of the labels)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=REG_IDS + CLF_IDS)
def test_groups_whole_relabelled_singletons_and_always_select(cls, op):
    X, eta, rng = _grouped()
    # (classifiers: three classes, whose rows are thresholded together; a short max_iter, the structure matters)
    y = eta + 0.2 * rng.standard_normal(80) if cls in REGRESSORS else np.digitize(eta, [-1.0, 1.0])
    for debias in (True, False):
        kw = dict(thresholding=op, debias=debias, max_iter=1000 if cls in REGRESSORS else 100)
        model = cls(k=2, groups=GROUPS, **kw).fit(X, y)
        chosen = np.unique(GROUPS[_nonzero_rows(model.coef_)])
        assert chosen.size == 2 if op == "hard" else chosen.size <= 2  # k counts groups
        assert_array_equal(model.support_, np.flatnonzero(np.isin(GROUPS, chosen)))  # whole groups
        assert_array_equal(model.groups_support_, chosen)
        relabelled = cls(k=2, groups=RELABELLED, **kw).fit(X, y)
        assert_array_equal(relabelled.support_, model.support_)
        assert_allclose(relabelled.coef_, model.coef_, rtol=1e-8, atol=1e-10)
        # groups of one feature are the ungrouped fit
        single = cls(k=3, groups=np.arange(12)[::-1] * 7, **kw).fit(X, y)
        plain = cls(k=3, **kw).fit(X, y)
        assert_array_equal(single.support_, plain.support_)
        assert_allclose(single.coef_, plain.coef_, rtol=1e-8, atol=1e-10)
        # an always-selected noise group is kept whole and counts towards k
        forced = cls(k=2, groups=GROUPS, always_select=[0], **kw).fit(X, y)
        assert np.isin([0, 1], forced.support_).all() and forced.support_.size <= 4
        if op == "hard":
            assert forced.support_.size == 4 and np.all(np.atleast_2d(forced.coef_)[:, :2] != 0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("op", OPERATORS, ids=OP_IDS)
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=CLF_IDS)
def test_classifier_label_symmetries(cls, op):
    # the penalised logistic and multinomial losses are symmetric in the labels: swapping the two classes
    # negates the model, permuting three classes permutes the rows of coef_
    rng = np.random.RandomState(5)
    X = rng.standard_normal((90, 10))
    eta = X @ np.r_[2.0, -2.0, 0.0, 1.5, np.zeros(6)]
    yb = (eta + rng.logistic(size=90) > 0).astype(int)
    y3 = np.digitize(eta + 0.5 * rng.standard_normal(90), [-1.0, 1.0])
    for debias in (True, False):
        kw = dict(k=3, thresholding=op, debias=debias, max_iter=200)
        a, b = cls(**kw).fit(X, yb), cls(**kw).fit(X, 1 - yb)
        assert_array_equal(a.support_, b.support_)
        assert_allclose(b.coef_, -a.coef_, rtol=1e-6, atol=1e-8)
        assert_allclose(b.intercept_, -a.intercept_, rtol=1e-6, atol=1e-8)
        perm = np.array([2, 0, 1])  # class c is called perm[c]
        a, b = cls(**kw).fit(X, y3), cls(**kw).fit(X, perm[y3])
        assert_array_equal(a.support_, b.support_)
        assert_allclose(b.coef_[perm], a.coef_, rtol=1e-6, atol=1e-8)
        assert np.shape(a.coef_) == (3, 10) and _nonzero_rows(a.coef_).size <= 3


# --------------------------------------------------------------------------
# scikit-learn citizenship
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=REG_IDS + CLF_IDS)
def test_coef_init_of_a_transposed_shape_is_refused(cls):
    # a (n_features, n_outputs) start has the right number of entries but would be read transposed
    rng = np.random.RandomState(0)
    X = rng.standard_normal((60, 6))
    B = np.zeros((6, 3))
    B[1], B[4] = [2.0, 1.0, -1.0], [-1.0, 3.0, 2.0]
    y = X @ B if cls in REGRESSORS else np.argmax(X @ B, axis=1)
    with pytest.raises(ValueError, match="coef_init"):
        cls(k=2).fit(X, y, coef_init=B)
    with pytest.raises(ValueError, match="coef_init"):
        cls(k=2).fit(X, y, coef_init=B.T.ravel())
    started = cls(k=2).fit(X, y, coef_init=B.T)  # the documented (n_outputs, n_features)
    assert np.shape(started.coef_) == (3, 6)
    one = X @ B[:, 0] if cls in REGRESSORS else (X @ B[:, 0] > 0).astype(int)
    for start in (B[:, 0], B[:, 0][None, :]):  # one output: (n_features,) or (1, n_features)
        assert_array_equal(cls(k=2).fit(X, one, coef_init=start).support_, [1, 4])


def test_grid_search_clone_pickle_and_set_params_over_operators():
    X, Y = _regression(seed=4)
    y = Y[:, 0]
    grid = {"ihtregressor__thresholding": ["hard", "soft", Reciprocal(c=0.3), Lq(q=0.4)],
            "ihtregressor__k": [2, 3]}
    search = GridSearchCV(make_pipeline(StandardScaler(), IHTRegressor()), grid, cv=KFold(3)).fit(X, y)
    assert len(search.cv_results_["params"]) == 8 and np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_params_["ihtregressor__k"] == 3
    for op in (Reciprocal(c=0.3), Lq(q=0.4), Soft()):
        model = IHTRegressor(k=3, thresholding=op).fit(X, y)
        assert clone(model).thresholding == op and not hasattr(clone(model), "coef_")
        assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))
    pipe = make_pipeline(StandardScaler(), IHTRegressor(k=3)).fit(X, y)
    pipe.set_params(ihtregressor__thresholding=Lq(q=0.9)).fit(X, y)
    direct = IHTRegressor(k=3, thresholding=Lq(q=0.9)).fit(StandardScaler().fit_transform(X), y)
    assert_allclose(pipe[-1].coef_, direct.coef_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=REG_IDS + CLF_IDS)
@pytest.mark.parametrize("name, value", [("k", 0), ("k", 2.0), ("k", True), ("thresholding", "Hard"),
                                         ("thresholding", "reciprocal(0.5)"), ("thresholding", Hard),
                                         ("thresholding", None), ("step_size", 0.0), ("step_size", np.inf),
                                         ("max_iter", 0)])
def test_invalid_values_are_named(cls, name, value):
    X, Y = _regression(seed=5)
    y = Y[:, 0] if cls in REGRESSORS else (Y[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=name):
        cls(**{name: value}).fit(X, y)


@pytest.mark.parametrize("make, name", [(lambda: Reciprocal(c=-0.1), "c"), (lambda: Reciprocal(c=1.5), "c"),
                                        (lambda: Reciprocal(c=np.nan), "c"), (lambda: Lq(q=0.0), "q"),
                                        (lambda: Lq(q=1.0), "q"), (lambda: Lq(q=np.nan), "q"),
                                        (lambda: Reciprocal(c="0.5"), "c"), (lambda: Lq(q="0.5"), "q")])
def test_invalid_operator_parameters_are_named(make, name):
    with pytest.raises(ValueError, match=f"{name}="):
        make()


def test_iobs_correction_takes_numpy_booleans_as_the_other_flags():
    X, Y = _regression(seed=6)
    y = Y[:, 0]
    for flag in (np.True_, np.False_):
        ours = IOBSRegressor(k=3, correction=flag).fit(X, y)
        plain = IOBSRegressor(k=3, correction=bool(flag)).fit(X, y)
        assert_array_equal(ours.coef_, plain.coef_)
    with pytest.raises(ValueError, match="correction"):
        IOBSRegressor(k=3, correction=1).fit(X, y)


def test_solver_parameters_with_operators_are_validated():
    X, Y = _regression(seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (valid values fit without warnings)
        AcceleratedIHTRegressor(k=3, thresholding=Lq(q=0.5), momentum=0.0).fit(X, Y)
        RegularizedIHTRegressor(k=3, thresholding="soft", weight_step=0.5).fit(X, Y)
    for value in (1.0, -0.1):
        with pytest.raises(ValueError, match="momentum"):
            AcceleratedIHTRegressor(k=3, thresholding="soft", momentum=value).fit(X, Y)
    for value in (0.0, -1.0):
        with pytest.raises(ValueError, match="weight_step"):
            RegularizedIHTRegressor(k=3, thresholding="soft", weight_step=value).fit(X, Y)
