"""Regression tests for defects found by fuzzing (issue 24 item 6, issue 26 item 8)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.model_selection import GridSearchCV, KFold

from sparse_estimators import (
    AcceleratedIHTClassifier,
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
    RegularizedIHTClassifier,
    RegularizedIHTRegressor,
)

REGRESSORS = [IHTRegressor, AcceleratedIHTRegressor, RegularizedIHTRegressor, IOBSRegressor]
CLASSIFIERS = [IHTClassifier, AcceleratedIHTClassifier, RegularizedIHTClassifier, IOBSClassifier]


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
