"""Data of subnormal magnitude (below ``2**-1022``): rescaled exactly, or refused with a ValueError naming X or y.

Data outside ``_policy.SCALE_RANGE`` are fitted on ``X * 2**e`` for a power of
two ``e``; for subnormal data ``2**e`` exceeds the float range (``e > 1023``),
and ``np.ldexp`` overflowed to infinity (every fit failed). The data below have
8 significant bits, so that ``X * 2**j`` holds them exactly even as subnormal
numbers: the fit of ``X * 2**-1060`` must then be the fit of ``X * 2**-600``
(one rescaled problem), its coefficients multiplied by ``2**460``; a fit whose
coefficients in X's units leave the float range is a ValueError.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _problems import CLASSIFIERS
from numpy.testing import assert_array_equal

from sparse_estimators import (
    IHTClassifier,
    IHTRegressor,
    IOBSClassifier,
    IOBSRegressor,
)
from sparse_estimators.linear_model._scaling import _BeyondFloat, _power_of_two
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis

REFERENCE = -600  # (rescaled, with a representable scale)


def _data(seed=0, n=120, p=15):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, p)) * 64) / 64  # (8 significant bits: exact as subnormal numbers)
    eta = X[:, 1] - 0.8 * X[:, 4] + 0.6 * X[:, 7]
    y = np.round((eta + 0.3 * rng.standard_normal(n)) * 64) / 64
    noisy = eta + rng.logistic(size=n)
    return X, y, {2: (noisy > 0).astype(int), 3: np.digitize(noisy, [-0.7, 0.7])}, eta, rng


def _times(A, j):
    """``A * 2**j`` (exact here), in two steps: ``2**j`` itself is not a float for ``j < -1074``."""
    half = j // 2
    return (A * 2.0 ** half) * 2.0 ** (j - half)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no overflow on the way: the fit of X * 2**-600 has none)
        return est.fit(X, y)


def _form(X, sparse):
    return sp.csr_matrix(X) if sparse else X


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("loss", ["squared_error", "huber"])
@pytest.mark.parametrize("Est", [IHTRegressor, IOBSRegressor])
@pytest.mark.parametrize("j", [-1040, -1060])
def test_subnormal_x_and_y_give_the_scaled_fit(Est, loss, sparse, j):
    X, y, _, _, _ = _data()
    reference = _fit(Est(k=3, loss=loss), _form(_times(X, REFERENCE), sparse), _times(y, REFERENCE))
    model = _fit(Est(k=3, loss=loss), _form(_times(X, j), sparse), _times(y, j))
    assert_array_equal(model.support_, reference.support_)
    assert_array_equal(model.coef_, reference.coef_)  # (X and y by the same factor: the same coefficients)
    assert model.intercept_ == np.ldexp(reference.intercept_, j - REFERENCE)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_subnormal_x_gives_the_classifiers_scaled_fit(Est, n_classes, sparse):
    X, _, labels, _, _ = _data()
    y = labels[n_classes]
    reference = _fit(Est(k=3), _form(_times(X, REFERENCE), sparse), y)
    model = _fit(Est(k=3), _form(_times(X, -1060), sparse), y)
    assert_array_equal(model.support_, reference.support_)
    # (the default alpha outweighs the loss on both: capped at RESCALED_ALPHA_MAX, one rescaled problem)
    assert_array_equal(np.ldexp(model.coef_, -1060), np.ldexp(reference.coef_, REFERENCE))
    assert_array_equal(model.intercept_, reference.intercept_)
    assert np.all(np.isfinite(model.decision_function(_times(X, -1060))))


@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
def test_subnormal_x_gives_the_cox_models_scaled_fit(Est):
    X, _, _, eta, rng = _data()
    T, C = rng.exponential(np.exp(-eta)), rng.exponential(2.0, eta.size)
    y = np.array(list(zip(T <= C, np.minimum(T, C), strict=True)), dtype=[("event", bool), ("time", float)])
    reference = _fit(Est(k=3), _times(X, REFERENCE), y)
    model = _fit(Est(k=3), _times(X, -1060), y)
    assert_array_equal(model.support_, reference.support_)
    assert_array_equal(np.ldexp(model.coef_, -1060), np.ldexp(reference.coef_, REFERENCE))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("est, target", [
    (IHTRegressor(k=3, loss="poisson"), "counts"), (IOBSRegressor(k=3, loss="gamma"), "positive"),
    (IHTRegressor(k=3), "y"), (IHTClassifier(k=3, alpha=0.0), 3), (IOBSClassifier(k=3, alpha=0.0), 2),
])
def test_coefficients_beyond_float_range_are_a_value_error_naming_x(est, target, sparse):
    X, y, labels, eta, rng = _data()
    y = {"counts": rng.poisson(np.exp(0.5 * eta)).astype(float), "positive": rng.gamma(2.0, np.exp(0.3 * eta) / 2),
         "y": y}.get(target, labels.get(target))
    # (y of ordinary magnitude, or an unpenalised classifier: coefficients about 2**1060 in X's units)
    with pytest.raises(ValueError, match="units of X exceed the float range"):
        _fit(est, _form(_times(X, -1060), sparse), y)


@pytest.mark.parametrize("loss", ["poisson", "gamma"])
def test_subnormal_targets_of_a_log_link_are_a_value_error_naming_y(loss):
    X, _, _, eta, rng = _data()
    y = rng.poisson(np.exp(0.5 * eta)) + 1.0
    _fit(IHTRegressor(k=3, loss=loss), X, _times(y, -1000))  # (normal numbers: fitted)
    with pytest.raises(ValueError, match="y's values are all subnormal"):
        _fit(IHTRegressor(k=3, loss=loss), X, _times(y, -1060))


def test_dask_x_beyond_its_moments_range_is_a_value_error_naming_x():
    da = pytest.importorskip("dask.array")
    X, y, labels, _, _ = _data()
    for j in [-600, -1060, 600]:
        Xd = da.from_array(_times(X, j), chunks=(40, 15))
        for est, target in [(IHTRegressor(k=3), y), (IHTClassifier(k=3), labels[3])]:
            with pytest.raises(ValueError, match="largest magnitude of X"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (X * 2**600: the pass's squares overflow)
                est.fit(Xd, target)
    model = _fit(IHTClassifier(k=3), da.from_array(_times(X, -400), chunks=(40, 15)), labels[3])  # (in range)
    assert_array_equal(model.support_, _fit(IHTClassifier(k=3), _times(X, -400), labels[3]).support_)


def test_a_power_of_two_beyond_float_range_multiplies_exactly():
    scale = _power_of_two(1060)
    assert isinstance(scale, _BeyondFloat) and scale != 1.0
    assert _power_of_two(1000) == 2.0 ** 1000 and _power_of_two(-1074) == 5e-324
    tiny = _times(np.array([1.5, -3.0, 0.0]), -1060)
    assert_array_equal(tiny * scale, [1.5, -3.0, 0.0])
    assert (scale / 2.0 ** 100) == 2.0 ** 960 and 1.0 / scale == 2.0 ** -1060
    assert_array_equal(np.array([2.0 ** -1000]) * _power_of_two(2000), [2.0 ** 1000])  # (three steps)


@pytest.mark.parametrize("Est", [IHTRegressor, IHTClassifier])
def test_subnormal_float32_x_gives_the_scaled_fit(Est):
    X, y, labels, _, _ = _data()
    X = X[:, :10]
    target = (lambda j: _times(y, j).astype(np.float32)) if Est is IHTRegressor else (lambda j: labels[3])
    # (float32's subnormal numbers are below 2**-126: their scale, up to 2**150, is not a float32)
    # (a classifier's alpha times c**2 for X times c: the same rescaled problem, alpha below the cap)
    params = ({}, {}) if Est is IHTRegressor else ({"alpha": 1e-4}, {"alpha": 1e-4 * 2.0 ** -150})
    reference = _fit(Est(k=3, **params[0]), _times(X, -60).astype(np.float32), target(-60))
    model = _fit(Est(k=3, **params[1]), _times(X, -135).astype(np.float32), target(-135))
    assert_array_equal(model.support_, reference.support_)
    factor = 0 if Est is IHTRegressor else 75  # (the regressor's X and y by the same factor: the same coefficients)
    assert_array_equal(model.coef_, np.ldexp(reference.coef_.astype(float), factor).astype(np.float32))


@pytest.mark.parametrize("loss", ["squared_error", "huber"])
@pytest.mark.parametrize("j", [-600, -1060])
def test_scores_and_sparsity_cv_of_tiny_data_are_those_of_the_data(loss, j):
    """R^2 and Huber's D^2 are scale-free: the squares of data below ``2**-537`` underflowed to 0 (R^2 was 1 for
    any fit, and ``SparsityCV`` chose ``k = 1``), and a subnormal ``y`` overflowed the score's rescaling."""
    from sparse_estimators.model_selection import SparsityCV

    X, y, _, _, _ = _data(n=300, p=10)
    if loss == "huber":
        y = y.copy()
        y[::25] += 20.0  # (outliers)
    reference = IHTRegressor(k=3, loss=loss).fit(X, y)
    model = IHTRegressor(k=3, loss=loss).fit(_times(X, j), _times(y, j))
    # (the predictions of subnormal X X coef_ hold about 14 bits: 1e-4)
    assert model.score(_times(X, j), _times(y, j)) == pytest.approx(reference.score(X, y), abs=1e-4 if j < -1022
                                                                    else 1e-12)
    assert SparsityCV(IHTRegressor(loss=loss)).fit(_times(X, j), _times(y, j)).k_ == \
        SparsityCV(IHTRegressor(loss=loss)).fit(X, y).k_
