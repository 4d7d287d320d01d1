"""Input and hyperparameter validation, warnings, and the unfitted / diverged states."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.utils._param_validation import InvalidParameterError

PARAMETRIZE_OVER_PUBLIC_ESTIMATORS = True  # see conftest.py


@pytest.fixture
def data(make_regression, make_classification):
    """Factory: a small clean problem of the estimator's kind, ``(X, y)`` with 12 features."""

    def make(Estimator, seed=0):
        if is_classifier(Estimator()):
            X, y, _ = make_classification(n=120, p=12, k_true=2, seed=seed)
        else:
            X, y, _, _ = make_regression(n=60, p=12, k_true=2, noise=0.5, seed=seed)
        return X, y

    return make


# -- input data ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("value, problem", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")])
def test_non_finite_X(Estimator, data, value, problem, sparse):
    X, y = data(Estimator)
    X[3, 4] = value
    with pytest.raises(ValueError, match=f"Input X contains {problem}"):
        Estimator().fit(sp.csr_matrix(X) if sparse else X, y)
    est = Estimator(k=2).fit(*data(Estimator))
    with pytest.raises(ValueError, match=f"Input X contains {problem}"):
        est.predict(X)


@pytest.mark.parametrize("value, problem", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_y(Estimator, data, value, problem):
    X, y = data(Estimator)
    y = y.astype(float)
    y[5] = value
    with pytest.raises(ValueError, match=f"Input y contains {problem}"):
        Estimator().fit(X, y)


def test_wrong_shapes(Estimator, data):
    X, y = data(Estimator)
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        Estimator().fit(X[:, 0], y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Estimator().fit(X, y[:-1])
    with pytest.raises(ValueError, match="sample_weight"):
        Estimator().fit(X, y, sample_weight=np.ones(len(y) - 1))


def test_predict_with_the_wrong_number_of_features(Estimator, data):
    X, y = data(Estimator)
    est = Estimator(k=2).fit(X, y)
    methods = ["predict", "decision_function", "predict_proba", "predict_log_proba"]
    for method in [m for m in methods if hasattr(est, m)]:
        with pytest.raises(ValueError, match=r"X has 11 features, but \w+ is expecting 12 features"):
            getattr(est, method)(X[:, :-1])
    with pytest.raises(ValueError, match="13 features"):
        est.score(np.hstack([X, X[:, :1]]), y)


def test_predict_before_fit_raises_not_fitted(Estimator, data):
    X, _ = data(Estimator)
    est = Estimator()
    methods = ["predict", "decision_function", "predict_proba", "predict_log_proba"]
    for method in [m for m in methods if hasattr(est, m)]:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X)


def test_single_class(Classifier, data):
    X, _ = data(Classifier)
    with pytest.raises(ValueError, match="class"):
        Classifier().fit(X, np.zeros(X.shape[0], dtype=int))
    with pytest.raises(ValueError, match="class"):
        Classifier().fit(X, np.full(X.shape[0], "only"))
    # two labels, but only one with positive weight
    y = np.arange(X.shape[0]) % 2
    with pytest.raises(ValueError, match="class"):
        Classifier().fit(X, y, sample_weight=(y == 1).astype(float))


def test_continuous_targets_are_rejected_by_classifiers(Classifier, data):
    X, _ = data(Classifier)
    with pytest.raises(ValueError, match="Unknown label type"):
        Classifier().fit(X, np.linspace(0.0, 1.0, X.shape[0]))


# -- hyperparameters ---------------------------------------------------------------------------------------
BAD_PARAMS = [
    ("k", 0), ("k", -1), ("k", 1.5), ("k", "3"), ("k", True),
    ("thresholding", "hardest"), ("thresholding", None), ("thresholding", 2),
    ("step_size", 0), ("step_size", -1), ("step_size", "big"), ("step_size", np.nan), ("step_size", np.inf),
    ("max_iter", 0), ("max_iter", -5), ("max_iter", 10.5),
    ("tol", -1), ("tol", np.nan),
    ("fit_intercept", "yes"), ("fit_intercept", 1), ("fit_intercept", None),
    ("debias", "no"), ("warm_start", 0), ("splicing", "always"), ("splicing", 1), ("splicing", None),
    ("verbose", -1),
]


@pytest.mark.parametrize("name, value", BAD_PARAMS, ids=[f"{n}={v!r}" for n, v in BAD_PARAMS])
def test_bad_hyperparameter_is_named(Estimator, data, name, value):
    X, y = data(Estimator)
    est = Estimator(**{name: value})  # no validation in __init__ (scikit-learn convention)
    with pytest.raises(ValueError, match=f"'{name}'"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


BAD_CLASSIFIER_PARAMS = [("alpha", -1.0), ("alpha", -1e-12), ("alpha", np.nan), ("alpha", "big"),
                         ("class_weight", "bogus"), ("class_weight", 3)]


@pytest.mark.parametrize("value", ["always", 1, None])
def test_bad_precompute_is_named(Regressor, data, value):
    X, y = data(Regressor)
    with pytest.raises(ValueError, match="'precompute'"):
        Regressor(precompute=value).fit(X, y)


@pytest.mark.parametrize("name, value", BAD_CLASSIFIER_PARAMS, ids=[f"{n}={v!r}" for n, v in BAD_CLASSIFIER_PARAMS])
def test_bad_classifier_hyperparameter_is_named(Classifier, data, name, value):
    X, y = data(Classifier)
    with pytest.raises(ValueError, match=f"'{name}'"):
        Classifier(**{name: value}).fit(X, y)


def test_failed_fit_keeps_the_previous_model(Estimator, data):
    X, y = data(Estimator)
    est = Estimator(k=2).fit(X, y)
    coef = est.coef_.copy()
    with pytest.raises(ValueError, match="'k'"):
        est.set_params(k=0).fit(X, y)
    np.testing.assert_array_equal(est.coef_, coef)


def test_coef_init_of_the_wrong_size(Estimator, data):
    X, y = data(Estimator)
    for bad in (np.zeros(X.shape[1] + 1), np.zeros(X.shape[1] - 1), np.zeros((2, X.shape[1]))):
        with pytest.raises(ValueError, match="coef_init"):
            Estimator(k=2).fit(X, y, coef_init=bad)
    nan = np.zeros(X.shape[1])
    nan[0] = np.nan
    with pytest.raises(ValueError, match="coef_init"):
        Estimator(k=2).fit(X, y, coef_init=nan)


# -- k --------------------------------------------------------------------------------------------------------
def test_k_larger_than_n_features_is_clipped_with_a_warning(Estimator, data):
    X, y = data(Estimator)
    p = X.shape[1]
    with pytest.warns(UserWarning, match=f"k={p + 5} is larger than n_features={p}"):
        est = Estimator(k=p + 5).fit(X, y)
    np.testing.assert_array_equal(est.support_, np.arange(p))
    assert est.get_params()["k"] == p + 5  # the parameter itself is not modified
    if not is_classifier(est):
        # all features and a least-squares refit: ordinary least squares
        reference = LinearRegression().fit(X, y)
        np.testing.assert_allclose(est.coef_, reference.coef_, rtol=1e-8)
    # k == n_features is not clipped: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Estimator(k=p).fit(X, y)


# -- convergence and divergence -------------------------------------------------------------------------------
# Estimators whose ``step_size`` is not a gradient step and that document that
# their fit cannot diverge (I-OBS: a fraction of a safeguarded Newton step,
# halved whenever the objective would increase). Every other estimator,
# including any added later, is expected to detect and report divergence.
CANNOT_DIVERGE = {"IOBSRegressor", "IOBSClassifier"}


def _diverging(Estimator, make_regression, make_classification, step_size=50):
    """A problem and an estimator whose fixed step (``step_size / L``) makes gradient steps diverge.

    Least squares: any step above 2 / L diverges along the top eigenvector.
    Logistic: its gradient is bounded, so the blow-up needs a strong l2 term,
    ``alpha = 10``, which dominates ``L``: the coefficients are multiplied by
    about ``1 - 50 = -49`` at each step.
    """
    if is_classifier(Estimator()):
        X, y, _ = make_classification(n=100, p=20, k_true=3, seed=2)
        return X, y, Estimator(k=3, step_size=step_size, alpha=10.0)
    X, y, _, _ = make_regression(n=100, p=20, k_true=3, noise=0.1, seed=2)
    return X, y, Estimator(k=3, step_size=step_size)


def _fit_diverging(Estimator, make_regression, make_classification, step_size=50):
    X, y, est = _diverging(Estimator, make_regression, make_classification, step_size)
    if Estimator.__name__ in CANNOT_DIVERGE:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*diverge", category=ConvergenceWarning)
            est.fit(X, y)
    else:
        with pytest.warns(ConvergenceWarning, match="diverge"):
            est.fit(X, y)
    return X, est


def test_divergence_is_reported_and_leaves_finite_coefficients(Estimator, make_regression, make_classification):
    X, est = _fit_diverging(Estimator, make_regression, make_classification)
    assert np.all(np.isfinite(est.coef_))
    assert np.all(np.isfinite(est.intercept_))
    assert np.all(np.isfinite(est.loss_curve_[:-1]))  # all but the iteration that blew up, if recorded
    if Estimator.__name__ not in CANNOT_DIVERGE:
        assert est.n_iter_ < est.max_iter  # stopped when the blow-up was detected
    if not is_classifier(est):
        assert np.all(np.isfinite(est.predict(X)))


@pytest.mark.parametrize("step_size", [1e3, 1e8, 1e15])
def test_huge_steps_never_leave_non_finite_values(Estimator, make_regression, make_classification, step_size):
    X, est = _fit_diverging(Estimator, make_regression, make_classification, step_size)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))


# Regression tests: both failed on the estimators that can diverge until the
# divergence handling of IterationMonitor was fixed during this work.
def test_after_divergence_loss_curve_has_n_iter_entries(Estimator, make_regression, make_classification):
    # the iteration that blew up is counted in n_iter_, so it has its loss_curve_ entry
    _, est = _fit_diverging(Estimator, make_regression, make_classification)
    assert len(est.loss_curve_) == est.n_iter_


def test_after_divergence_the_model_still_has_k_features(Estimator, make_regression, make_classification):
    # the 'best finite iterate' must not be the start W0 = 0 (no feature at
    # all): coef_ is documented to have exactly k non-zeros
    _, est = _fit_diverging(Estimator, make_regression, make_classification)
    assert est.support_.size == 3
    assert np.count_nonzero(est.coef_) == 3


def test_max_iter_one_warns_and_stops(Estimator, data):
    X, y = data(Estimator)
    with pytest.warns(ConvergenceWarning, match=re.escape("max_iter=1")):
        est = Estimator(k=2, max_iter=1).fit(X, y)
    assert est.n_iter_ == 1
    assert len(est.loss_curve_) == 1
    assert np.count_nonzero(est.coef_) == 2


def test_converged_fit_does_not_warn(Estimator, data):
    X, y = data(Estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = Estimator(k=2).fit(X, y)
    assert 1 <= est.n_iter_ < est.max_iter



# -- declarative parameter validation (issue 25): scikit-learn's InvalidParameterError -------------------
DECLARED_BAD = [("k", 0, r"in the range \[1, inf\) or None"), ("max_iter", 10.5, r"in the range \[1, inf\)"),
                ("tol", -1.0, r"in the range \[0(\.0)?, inf\)"), ("step_size", 0.0, r"'auto'"),
                ("splicing", "always", r"'auto'"), ("thresholding", "hardest", "ThresholdingOperator")]


@pytest.mark.parametrize("name, value, allowed", DECLARED_BAD, ids=[f"{n}={v!r}" for n, v, _ in DECLARED_BAD])
def test_invalid_parameter_error_names_the_class_and_the_range(Estimator, data, name, value, allowed):
    X, y = data(Estimator)
    est = Estimator(**{name: value})
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of {Estimator.__name__} must be.*"
                                                    f"{allowed}"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    assert set(Estimator._parameter_constraints) == set(Estimator().get_params())  # every parameter declared


def test_numpy_integer_parameters_are_accepted(Estimator, data):
    X, y = data(Estimator)
    est = Estimator(k=np.arange(1, 4)[1], max_iter=np.int64(500), verbose=np.int32(0)).fit(X, y)
    assert est.k_ == 2 and isinstance(est.k_, int)


@pytest.mark.parametrize("search, name, value, allowed", [
    ("SparsityCV", "cv", 1, r"\[2, inf\)"), ("SparsityCV", "scoring", "best", "a callable"),
    ("SparsityCV", "error_score", "ignore", r"\{'raise'\}"), ("SparsityCV", "return_train_score", "yes", "bool"),
    ("SparsityCV", "n_jobs", 1.5, "int"), ("SparsityIC", "criterion", "cv", "aic"),
    ("SparsityIC", "gamma", 2.0, r"\[0(\.0)?, 1(\.0)?\]"), ("SparsityIC", "k_grid", "abc", "array-like"),
])
def test_search_parameters_are_declared(search, name, value, allowed):
    from sklearn.datasets import make_regression

    from sparse_estimators import IHTRegressor, model_selection

    X, y = make_regression(n_samples=40, n_features=6, random_state=0)
    cls = getattr(model_selection, search)
    est = cls(IHTRegressor(), **{name: value})
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of {search} must be.*{allowed}"):
        est.fit(X, y)
    assert set(cls._parameter_constraints) == set(cls(IHTRegressor()).get_params(deep=False))
