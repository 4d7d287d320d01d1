"""A constant target with an intercept: the null model (coef_ exactly 0, no feature selected, no solver run).

Before, the solvers selected features by the rounding noise of the gradient at the null model (Poisson's
support [1, 3] with coefficients of 1e-33, I-OBS's Gamma and Huber fits, any loss with sample weights).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _problems import REGRESSORS
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators import (
    IHTClassifier,
    IHTRegressor,
    IOBSRegressor,
)
from sparse_estimators.losses import GammaLoss, HuberLoss, LogisticLoss, PoissonLoss, SquaredLoss
from sparse_estimators.model_selection import SparsityIC, sparsity_path

LOSSES = ["squared_error", "poisson", "gamma", "huber"]
C = 0.7  # (0.7 * 3 / 3 is not 0.7: a rounded mean would show)


def _data(n=60, p=8, seed=0):
    X = np.random.default_rng(seed).standard_normal((n, p))
    return X, np.full(n, C)


def _null_intercept(loss, c=C):
    """The null model's intercept, computed independently of the package: the link of the constant."""
    return np.log(c) if loss in ("poisson", "gamma") else c


def _fit(est, X, y, **kwargs):
    sample_weight = kwargs.pop("sample_weight", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est(**kwargs).fit(X, y, sample_weight=sample_weight)


def _assert_null(model, loss, X, forced=(), c=C):
    assert model.support_.tolist() == sorted(forced)
    assert not np.any(model.coef_)
    np.testing.assert_allclose(model.intercept_, _null_intercept(loss, c), rtol=1e-12, atol=0)
    np.testing.assert_allclose(model.predict(X), c, rtol=1e-12)
    assert model.n_iter_ == 0 and model.n_exchanges_ == 0


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("est", REGRESSORS)
def test_constant_target_gives_the_null_model(est, loss):
    X, y = _data()
    model = _fit(est, X, y, k=2, loss=loss)
    _assert_null(model, loss, X)
    assert model.k_ == 2  # (the level asked for, as a positive=True fit with fewer features reports it)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("est", REGRESSORS)
def test_constant_target_k_none_chooses_no_feature(est, loss):
    X, y = _data()
    model = _fit(est, X, y, loss=loss)
    _assert_null(model, loss, X)
    assert model.k_ == 0
    assert not hasattr(model, "k_path_")


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("est", REGRESSORS)
def test_constant_target_with_sample_weights(est, loss):
    # positive weights, and rows of weight 0 whose targets differ: the target is constant where it counts
    X, y = _data()
    rng = np.random.default_rng(1)
    sample_weight = rng.uniform(0.5, 2.0, y.size)
    sample_weight[:5] = 0.0
    y[:5] = 4.0
    _assert_null(_fit(est, X, y, k=2, loss=loss, sample_weight=sample_weight), loss, X[5:])
    _assert_null(_fit(est, X, y, loss=loss, sample_weight=sample_weight), loss, X[5:])


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("est", [IHTRegressor, IOBSRegressor])
def test_constant_target_on_sparse_and_float32_X(est, loss):
    X, y = _data()
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    _assert_null(_fit(est, Xs, y, k=2, loss=loss), loss, Xs)
    model = _fit(est, X.astype(np.float32), y, k=2, loss=loss)
    assert model.coef_.dtype == np.float32
    assert model.support_.size == 0 and not np.any(model.coef_)
    np.testing.assert_allclose(model.intercept_, _null_intercept(loss), rtol=1e-6)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("est", REGRESSORS)
def test_constant_target_keeps_the_forced_features(est, loss):
    X, y = _data()
    for k in (2, None):
        model = _fit(est, X, y, k=k, loss=loss, always_select=[5, 3])
        _assert_null(model, loss, X, forced=[3, 5])
        if k is None:
            assert model.k_ == 2


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_constant_target_with_groups_and_positive(loss):
    X, y = _data()
    groups = np.repeat(np.arange(4), 2)
    model = _fit(IOBSRegressor, X, y, k=2, loss=loss, groups=groups, always_select=[2])
    _assert_null(model, loss, X, forced=[4, 5])
    assert model.groups_support_.tolist() == [2]
    _assert_null(_fit(IHTRegressor, X, y, k=2, loss=loss, groups=groups), loss, X)
    _assert_null(_fit(IOBSRegressor, X, y, k=2, loss=loss, positive=True), loss, X)


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_constant_target_after_a_warm_start(loss):
    X, y = _data()
    model = IOBSRegressor(k=2, loss=loss, warm_start=True).fit(X, np.exp(0.5 * X[:, 0]))
    assert model.support_.size == 2 and np.all(model.coef_[model.support_] != 0)
    _assert_null(model.fit(X, y), loss, X)


def test_constant_target_paths_and_searches():
    X, y = _data()
    path = sparsity_path(IHTRegressor(loss="poisson"), X, y, k_grid=[1, 2, 3])
    assert all(s.size == 0 for s in path.supports) and not np.any(path.coefs)
    search = SparsityIC(IHTRegressor(loss="poisson"), k_grid=[1, 2, 3]).fit(X, y)
    assert search.best_estimator_.support_.size == 0 and not np.any(search.best_estimator_.coef_)


def test_multi_output_constant_targets():
    # every target constant: the null model; one constant target beside others is fitted as before
    X, y = _data()
    model = _fit(IHTRegressor, X, np.column_stack([y, y + 1]), k=2)
    assert model.support_.size == 0 and not np.any(model.coef_)
    np.testing.assert_allclose(model.intercept_, [C, C + 1], rtol=1e-12)
    Y = np.column_stack([y, 2 * X[:, 0] - X[:, 4]])
    model = _fit(IHTRegressor, X, Y, k=2)
    assert model.support_.tolist() == [0, 4]


@pytest.mark.parametrize("loss", LOSSES)
def test_no_intercept_or_a_varying_target_is_fitted(loss):
    # the null model is the answer only with an intercept, and only for a constant target (compared exactly)
    X, y = _data()
    model = IHTRegressor(k=2, loss=loss, fit_intercept=False).fit(X, y)
    assert model.support_.size == 2 and np.all(model.coef_[model.support_] != 0)
    y = y.copy()
    y[7] = np.nextafter(C, 1.0)  # (one ulp)
    cls = {"squared_error": SquaredLoss, "poisson": PoissonLoss, "gamma": GammaLoss, "huber": HuberLoss}[loss]
    assert cls(X, y).null_minimiser() is None
    assert cls(X, np.full(y.size, C), fit_intercept=False).null_minimiser() is None


def test_null_minimiser_of_the_losses():
    X, y = _data()
    assert SquaredLoss(X, y).null_minimiser() is not None and SquaredLoss(X, y).y_mean[0] == C
    np.testing.assert_allclose(PoissonLoss(X, y).null_minimiser(), np.log(C), rtol=1e-15)
    np.testing.assert_allclose(HuberLoss(X, y).null_minimiser(), C, rtol=1e-15)
    assert LogisticLoss(X, np.ones(y.size)).null_minimiser() is None  # (its minimum is not attained)


def test_single_class_classifier_raises():
    X, _ = _data()
    with pytest.raises(ValueError, match="at least 2 classes"):
        IHTClassifier(k=2).fit(X, np.ones(X.shape[0], dtype=int))


@pytest.mark.parametrize("loss", LOSSES)
def test_constant_target_on_dask_X(loss):
    da = pytest.importorskip("dask.array")
    X, y = _data()
    sample_weight = np.ones(y.size)
    sample_weight[:5] = 0.0
    y[:5] = 4.0
    for precompute in (["auto", False] if loss == "squared_error" else ["auto"]):
        model = _fit(IHTRegressor, da.from_array(X, chunks=(20, 8)), y, k=2, loss=loss, precompute=precompute,
                     sample_weight=sample_weight)
        assert model.support_.size == 0 and not np.any(model.coef_)
        np.testing.assert_allclose(model.intercept_, _null_intercept(loss), rtol=1e-12)
