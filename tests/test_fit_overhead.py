"""The direct routes of small fits (validation, labels, Newton solves) give what the general routes give."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.validation import validate_data

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.linear_model._validation import validated_classification, validated_regression
from sparse_estimators.losses._base import _norm, cholesky_newton_solve
from sparse_estimators.losses._design import column_extremes, shared_extremes


def _data(seed=0, n=60, p=12):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.3 * rng.standard_normal(n)
    return X, y


def _same_fit(a, b):
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    assert np.array_equal(a.support_, b.support_)


def test_plain_arrays_fit_as_lists_do():
    """ndarray input (direct route) and the same values as lists (scikit-learn's validation): identical fits."""
    X, y = _data()
    _same_fit(IHTRegressor(k=3).fit(X, y), IHTRegressor(k=3).fit(X.tolist(), y.tolist()))
    labels = np.where(y > 0, "yes", "no")
    for target in (labels, (y > 0).astype(int) + 3, y > 0):
        direct = IHTClassifier(k=3).fit(X, target)
        general = IHTClassifier(k=3).fit(X.tolist(), list(target))
        _same_fit(direct, general)
        assert np.array_equal(direct.classes_, LabelEncoder().fit(target).classes_)
        assert np.array_equal(direct.predict(X), general.predict(X))


def test_fortran_ordered_x_fits_as_c_ordered():
    X, y = _data(1)
    _same_fit(IHTRegressor(k=3).fit(np.asfortranarray(X), y), IHTRegressor(k=3).fit(X, y))
    _same_fit(IHTClassifier(k=3).fit(np.asfortranarray(X), y > 0), IHTClassifier(k=3).fit(X, y > 0))


def test_direct_route_returns_validate_data_result():
    X, y = _data(2)
    est = IHTRegressor()
    Xv, yv = validated_regression(est, X, y)
    assert Xv is X and yv is y and est.n_features_in_ == X.shape[1]
    Xs, ys = validate_data(IHTRegressor(), X, y, dtype=[np.float64, np.float32], order="C", multi_output=True,
                           y_numeric=True)
    assert np.array_equal(Xs, Xv) and np.array_equal(ys, yv)
    Xf = np.asfortranarray(X)
    Xc, _ = validated_classification(IHTClassifier(), Xf, (y > 0).astype(int))
    assert Xc.flags.c_contiguous and np.array_equal(Xc, X)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_rejected_with_scikit_learns_messages(bad):
    X, y = _data(3)
    Xb = X.copy()
    Xb[4, 2] = bad
    with pytest.raises(ValueError, match="Input X contains"):
        IHTRegressor(k=2).fit(Xb, y)
    with pytest.raises(ValueError, match="Input X contains"):
        IHTClassifier(k=2).fit(Xb, y > 0)
    yb = y.copy()
    yb[0] = bad
    with pytest.raises(ValueError, match="Input y contains"):
        IHTRegressor(k=2).fit(X, yb)


def test_continuous_labels_still_refused():
    X, y = _data(4)
    with pytest.raises(ValueError, match="Unknown label type"):
        IHTClassifier(k=2).fit(X, y)


def test_feature_names_forgotten_on_array_refit():
    pd = pytest.importorskip("pandas")
    X, y = _data(5)
    est = IHTRegressor(k=2).fit(pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]), y)
    assert hasattr(est, "feature_names_in_")
    est.fit(X[:, :8], y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 8


def test_extremes_not_kept_after_the_fit():
    """X changed in place between fits: the second fit sees the new values (its scale), as a fresh array."""
    X, y = _data(6)
    est = IHTRegressor(k=3).fit(X, y)
    X *= 2.0 ** 40  # (outside the scale range: the fit rescales)
    X[:, 5] = 1.0  # (a constant column)
    _same_fit(est.fit(X, y), IHTRegressor(k=3).fit(X.copy(), y))
    with shared_extremes(X):
        high, low = column_extremes(X)
        assert column_extremes(X)[0] is high
    assert column_extremes(X)[0] is not high and np.array_equal(column_extremes(X)[0], X.max(axis=0))


def test_parameter_names_per_class():
    class Extra(IHTRegressor):
        def __init__(self, k=None, *, extra=1, **kwargs):
            super().__init__(k, **kwargs)
            self.extra = extra

    assert "extra" in Extra().get_params() and "extra" not in IHTRegressor().get_params()
    assert "alpha" in IHTClassifier().get_params() and "loss" not in IHTClassifier().get_params()


def test_newton_solve_and_norm_as_scipy_and_numpy():
    rng = np.random.RandomState(7)
    for d in (1, 3, 11):
        A = rng.standard_normal((40, d))
        H, g = A.T @ A + 0.1 * np.eye(d), rng.standard_normal(d)
        L = np.linalg.cholesky(H)
        assert np.array_equal(cholesky_newton_solve(H, g), scipy.linalg.cho_solve((L, True), g))
        assert _norm(g) == np.linalg.norm(g)
