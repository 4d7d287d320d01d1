"""Regression tests for defects found by fuzzing (issue 24 item 6, issue 26 item 8)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _problems import CLASSIFIERS, REGRESSORS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from sparse_estimators import (
    AcceleratedIHTClassifier,
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
    RegularizedIHTRegressor,
)


def _data(classification):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 12))
    y = 2 * X[:, 0] - X[:, 3] + 0.3 * rng.standard_normal(80)
    return X, ((y > 0).astype(int) if classification else y)


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_numpy_integer_parameters(cls, dtype):
    """``k`` and ``max_iter`` as numpy integers fit like Python ints (``np.int64`` crashed the splicing search)."""
    X, y = _data(cls in CLASSIFIERS)
    ours = cls(k=dtype(2), max_iter=dtype(200)).fit(X, y)
    ref = cls(k=2, max_iter=200).fit(X, y)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.coef_, ref.coef_)
    assert ours.support_.tolist() == [0, 3]


@pytest.mark.parametrize("cls", REGRESSORS + CLASSIFIERS, ids=lambda c: c.__name__)
def test_gridsearchcv_over_np_arange(cls):
    X, y = _data(cls in CLASSIFIERS)
    search = GridSearchCV(cls(), {"k": np.arange(1, 5)}, cv=KFold(3), error_score="raise").fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_params_["k"] >= 2


@pytest.mark.parametrize("cls", [IHTRegressor, IOBSRegressor, IHTClassifier, IOBSClassifier],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("weights, message", [
    (-np.ones(80), "Negative values in data passed to"),
    (np.zeros(80), "positive sum|at least one non-zero"),
    (np.r_[np.nan, np.ones(79)], "NaN"),
])
def test_bad_sample_weights_are_rejected(cls, weights, message):
    X, y = _data(cls in (IHTClassifier, IOBSClassifier))
    est = cls(k=2)
    with pytest.raises(ValueError, match=message):
        est.fit(X, y, sample_weight=weights)
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("cls", [AcceleratedIHTRegressor, AcceleratedIHTClassifier], ids=lambda c: c.__name__)
@pytest.mark.parametrize("momentum", [1.0, 5, -0.1, np.nan])
def test_momentum_outside_its_range(cls, momentum):
    X, y = _data(cls is AcceleratedIHTClassifier)
    with pytest.raises(ValueError, match="'momentum' parameter"):
        cls(k=2, momentum=momentum).fit(X, y)


def test_class_weight_nan_is_named():
    X, y = _data(True)
    with pytest.raises(ValueError, match="'class_weight' parameter must give finite"):
        IHTClassifier(k=2, class_weight={0: np.nan, 1: 1}).fit(X, y)


ALL = REGRESSORS + CLASSIFIERS


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@settings(deadline=None, max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), value=st.sampled_from([0.1, 1.0, -7.3, 1e3, 0.0]),
       n=st.sampled_from([40, 200]), sparse=st.booleans(), weighted=st.booleans())
def test_a_constant_column_is_never_selected(cls, seed, value, n, sparse, weighted):
    """Issue 26 item 1: on the Gram path a constant column was selected with a coefficient of 1e15."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, 8))
    j = seed % 8
    X[:, j] = value
    y = 2 * X[:, (j + 1) % 8] - X[:, (j + 3) % 8] + 0.1 * rng.standard_normal(n)
    if cls in CLASSIFIERS:
        y = (y > np.median(y)).astype(int)
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    est = cls(k=3, max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(sp.csc_matrix(X) if sparse else X, y, sample_weight=sw)
    assert j not in est.support_
    assert np.all(np.abs(est.coef_) < 1e3)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.too_slow])
@given(x_exp=st.integers(-150, 150), y_exp=st.integers(-150, 150), sparse=st.booleans())
def test_results_do_not_depend_on_the_scale_of_x_and_y(cls, x_exp, y_exp, sparse):
    """Issue 26 item 3: X * 1e155 gave an empty model, y * 1e160 all-zero coefficients."""
    X, y = _data(cls in CLASSIFIERS)
    ref = cls(k=2).fit(X, y)
    sx, sy = 10.0 ** x_exp, (1.0 if cls in CLASSIFIERS else 10.0 ** y_exp)
    Xs = X * sx
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or convergence warnings either
        est = cls(k=2).fit(sp.csr_matrix(Xs) if sparse else Xs, y * sy)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert np.all(np.isfinite(est.coef_))
    if cls in CLASSIFIERS:  # (the classifiers' ridge ``alpha`` is not scale-free: supports, not values)
        return
    np.testing.assert_allclose(est.coef_ * sx / sy, ref.coef_, rtol=1e-6, atol=1e-9 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(np.asarray(est.intercept_) / sy, ref.intercept_, rtol=1e-6, atol=1e-9)


def test_regularized_iht_step_stays_bounded_without_curvature():
    """Issue 26 item 4: the automatic step doubled without bound (ZeroDivisionError); an intercept-only model."""
    from sparse_estimators.losses import SquaredLoss
    from sparse_estimators.solvers import regularized_iht
    from sparse_estimators.thresholding import Hard

    rng = np.random.RandomState(0)
    y = rng.standard_normal(40)
    est = RegularizedIHTRegressor(k=2).fit(np.ones((40, 8)), y)
    np.testing.assert_array_equal(est.coef_, 0.0)
    assert est.intercept_ == pytest.approx(y.mean())
    # straight through the solver, a design of zeros (no curvature at all): the step is capped
    loss = SquaredLoss(np.zeros((40, 8)), y, None, True)
    result = regularized_iht(loss, Hard(), 2, W0=np.zeros((8, 1)), b0=np.zeros(1), max_iter=200)
    assert np.isfinite(result.step_size) and np.all(np.isfinite(result.coef))


def test_thresholding_rejects_nan_and_does_not_overflow():
    """Issue 26 item 9: NaN gave an empty support or NaN kept; 1e155 overflowed to inf."""
    from sparse_estimators.thresholding import Hard, Reciprocal, Soft, select_top_k

    for values, k in (([np.nan, 1, 2], 1), ([1, np.nan, 3, -5], 2), ([np.nan, 1], 2), ([1, 2, np.nan], 2)):
        with pytest.raises(ValueError, match="NaN"):
            select_top_k(np.abs(np.array(values, dtype=float)), k)
        for op in (Hard(), Soft(), Reciprocal()):
            with pytest.raises(ValueError, match="NaN"):
                op(np.array(values, dtype=float), k)
    out = Reciprocal()(np.array([1e155, 1.0]), 1)
    # reciprocal thresholding with c = 0 at tau = 1: (a + sqrt(a^2 - 1)) / 2, about a for a = 1e155
    np.testing.assert_allclose(out, [1e155, 0.0], rtol=1e-12)
    np.testing.assert_allclose(Reciprocal()(np.array([3.0, 1.0]), 1), [(3 + np.sqrt(8)) / 2, 0.0])


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_warm_start_with_other_classes_starts_cold(cls):
    """Issue 26 item 7: same coef_ size, other classes: a reshape error (IOBS: a matmul mismatch)."""
    X, yc = _data(True)
    y3 = np.arange(X.shape[0]) % 3
    est = cls(k=2, warm_start=True, max_iter=300).fit(X[:, :2], y3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[:, :6], yc)
        ref = cls(k=2, max_iter=300).fit(X[:, :6], yc)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.coef_, ref.coef_)


def test_operator_subclass_without_shrink_is_named():
    """Issue 26 item 8: a bare NotImplementedError at fit time."""
    from sparse_estimators.thresholding import ThresholdingOperator

    class Incomplete(ThresholdingOperator):
        pass

    X, y = _data(False)
    est = IHTRegressor(k=2, thresholding=Incomplete())
    with pytest.raises(ValueError, match="does not implement shrink"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_numeric_strings_as_y_are_read_as_numbers(cls):
    """Issue 32 item 10: a numpy string y raised numpy's UFuncTypeError; LinearRegression reads it as numbers."""
    X, y = _data(False)
    text = np.array([repr(float(v)) for v in y])  # (repr: the exact float back)
    ours = cls(k=2).fit(X, text)
    ref = cls(k=2).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, ref.coef_)
    with pytest.raises(ValueError, match="target y must be numeric"):
        cls(k=2).fit(X, np.where(np.arange(X.shape[0]) % 2, "a", "b"))


def test_numeric_strings_as_y_in_the_search():
    """Issue 32 item 10: SparsityCV passes the converted y to its folds and scorers."""
    from sparse_estimators.model_selection import SparsityCV

    X, y = _data(False)
    search = SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3).fit(X, np.array([repr(float(v)) for v in y]))
    ref = SparsityCV(IHTRegressor(), k_grid=[1, 2, 3], cv=3).fit(X, y)
    assert search.k_ == ref.k_
    np.testing.assert_array_equal(search.best_estimator_.coef_, ref.best_estimator_.coef_)


@pytest.mark.parametrize("cls", REGRESSORS + ["ReducedRankRegressor"], ids=lambda c: getattr(c, "__name__", c))
@pytest.mark.parametrize("shape", [(300, 10), (40, 80)])
def test_sparse_gram_with_dominant_means_matches_the_dense_fit(cls, shape):
    """Issue 32 item 2: sparse X, precompute=True, mean 100 and sd 1e-6: the implicitly centred Gram matrix
    cancelled to noise (wrong support, R^2 0.2 against 0.998 dense)."""
    from sparse_estimators import ReducedRankRegressor

    rng = np.random.RandomState(0)
    n, p = shape
    E = rng.standard_normal((n, p))
    X = 100.0 + 1e-6 * E
    y = 2 * E[:, 0] - E[:, 3] + 0.1 * rng.standard_normal(n)
    if cls == "ReducedRankRegressor":
        cls, kwargs = ReducedRankRegressor, {"rank": 1}
        y = np.column_stack([y, -y + 0.1 * rng.standard_normal(n), 0.5 * y])
    else:
        kwargs = {"k": 2}
    dense = cls(**kwargs).fit(X, y)
    for precompute in (True, False):
        est = cls(precompute=precompute, **kwargs).fit(sp.csr_matrix(X), y)
        if "k" in kwargs:  # (the rank models have no support_)
            np.testing.assert_array_equal(est.support_, dense.support_)
        # the data's own precision: entries of 100 + 1e-6 e carry e to about 1e-16 * 100 / 1e-6 = 1e-8
        np.testing.assert_allclose(est.predict(X), dense.predict(X), rtol=0, atol=1e-5 * np.std(y))
    if kwargs.get("k") == 2:
        assert dense.support_.tolist() == [0, 3]


@pytest.mark.parametrize("cls", CLASSIFIERS + ["ReducedRankClassifier"], ids=lambda c: getattr(c, "__name__", c))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifiers_are_shift_invariant(cls, n_classes):
    """Issue 32 item 1: a constant added to every feature changed the support (X + 100) or collapsed the fit to
    chance with coefficients of 1e-12 (X + 1e8). The intercept absorbs a shift: the model must not change."""
    from sparse_estimators import ReducedRankClassifier

    rng = np.random.RandomState(3)
    n, p = 60, 200
    X = rng.standard_normal((n, p))
    z = 2 * X[:, 0] - 1.5 * X[:, 3] + X[:, 7] + 0.5 * rng.standard_normal(n)
    y = (z > 0).astype(int) if n_classes == 2 else np.digitize(z, [-1, 1])
    if cls == "ReducedRankClassifier":
        # (its iteration converges linearly and stops at tol: a 1e-8 change of the data moves the stopping
        # point by more than that, and at X + 1e8 its gradients keep about 8 digits, so where it stops depends
        # on the CPU's rounding: coefficients to 1e-4 to 3e-4 of their largest, probabilities to 1e-5 to 1e-4
        # on two CPUs; a collapse to chance, the defect this guards, moves them by 0.1 or more)
        est, coef_tol, proba_tol = ReducedRankClassifier(rank=1), 2e-3, 1e-3
        X = X[:, :20]
    else:
        est, coef_tol, proba_tol = cls(k=3), 1e-5, 1e-5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (ReducedRankClassifier on two classes: a void rank)
        ref = clone(est).fit(X, y)
        for shift in (100.0, 1e8):
            fit = clone(est).fit(X + shift, y)
            if hasattr(ref, "support_"):  # (the rank models have none)
                np.testing.assert_array_equal(fit.support_, ref.support_)
            # X + 1e8 keeps X to about 1e-8: the probabilities to about that
            np.testing.assert_allclose(fit.predict_proba(X + shift), ref.predict_proba(X), rtol=0, atol=proba_tol)
            np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=0, atol=coef_tol * np.abs(ref.coef_).max())
    assert ref.score(X, y) > 0.85
