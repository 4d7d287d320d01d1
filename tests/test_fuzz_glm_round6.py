"""The non-Gaussian losses, sixth round: rescaled targets, Huber's score, Poisson's zero sum, positive=True.

The regressors bring a ``y`` of extreme magnitude (beyond ``2**20`` or below
``2**-20``) to the range ``[1, 2)`` by an exact power of two before solving.
The cold start of Huber's intercept (the weighted median of that rescaled
``y``) was multiplied by the factor once more, as if it were in the user's
units: a start ``2**20`` and more times too far, which ``k=None``, the
search paths and ``warm_start`` did not recover from; Huber's D^2 score
under- or overflowed at such magnitudes. With ``positive=True`` a fit could
end with fewer than ``k`` features while another still lowered the loss.
Every check is an exact identity of the data (a power of two on ``y``, a
refit on the same data) or a formula written here (gradients, the bounded
optimum from scipy), never a value copied from the package's output.
"""

import warnings

import numpy as np
import pytest
from _problems import REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal

from sparse_estimators import IHTRegressor, IOBSRegressor
from sparse_estimators.model_selection import SparsityCV
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _huber_data(offset=0.0):
    """150 rows, 12 features, 3 of them far above the noise (sd 0.3); 6 gross outliers; intercept 3."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 12))
    y = X[:, 1] - 0.5 * X[:, 4] + 0.4 * X[:, 7] + 3.0 + 0.3 * rng.standard_normal(150)
    y[:6] += 15.0
    return X + offset, y


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("factor", [2.0 ** -40, 2.0 ** -100, 2.0 ** 40])
def test_huber_k_none_on_a_rescaled_y_is_the_fit_of_y(Est, factor):
    """``y * 2**-40``: the fit is ``2**-40`` times that of ``y / 16`` (the same rescaled problem, exactly).

    Before: k=None chose 8 features at ``2**-40``, 1 at ``2**-100`` (the true 3), an IndexError at ``1e-200``.
    """
    X, y = _huber_data()
    y = y / 16.0  # (max |y| in [1, 2): the problem every factor below is rescaled to)
    reference = Est(loss="huber").fit(X, y)
    assert_array_equal(reference.support_, [1, 4, 7])
    model = Est(loss="huber").fit(X, factor * y)
    assert_array_equal(model.support_, reference.support_)
    assert_allclose(model.coef_ / factor, reference.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(model.intercept_ / factor, reference.intercept_, rtol=1e-12)


def test_huber_sparsity_cv_on_a_rescaled_y_scores_as_on_y():
    """The fold paths start at the rescaled ``y``'s median: the scores of ``y`` (D^2 is scale-free).

    Before: mean test scores of -4.2e11 at k = 1 and 5 (paths started far from the data).
    """
    X, y = _huber_data()
    y = y / 16.0
    search = SparsityCV(IHTRegressor(loss="huber"), k_grid=range(1, 6))
    expected = search.fit(X, y).cv_results_["mean_test_score"]
    got = SparsityCV(IHTRegressor(loss="huber"), k_grid=range(1, 6)).fit(X, 2.0 ** -40 * y).cv_results_
    assert_allclose(got["mean_test_score"], expected, rtol=1e-9)
    assert np.all((expected > 0) & (expected < 1))


@pytest.mark.parametrize("Est", [IHTRegressor, IOBSRegressor])
@pytest.mark.parametrize("factor", [2.0 ** -40, 2.0 ** 40])
def test_huber_warm_start_refit_on_the_same_data_keeps_the_model(Est, factor):
    """Uncentred features (the intercept variable holds the columns' means): a warm refit is the same model.

    Before (``2**-40``): the second fit's ``intercept_`` was 0.29 instead of about ``-1.6e-12``.
    """
    X, y = _huber_data(offset=5.0)
    model = Est(k=3, loss="huber", warm_start=True).fit(X, factor * y)
    coef, intercept = model.coef_.copy(), model.intercept_
    model.fit(X, factor * y)
    assert_allclose(model.coef_ / factor, coef / factor, rtol=1e-9, atol=1e-12)
    assert_allclose(model.intercept_ / factor, intercept / factor, rtol=1e-9)


@pytest.mark.parametrize("factor", [2.0 ** -600, 2.0 ** 600])
def test_huber_score_is_scale_free_at_extreme_magnitudes(factor):
    """D^2 of Huber's loss on ``c y`` and ``c`` times the predictions is that on ``y`` (about 1e-181 and 1e181).

    The fit already rescales such a ``y``. Before: ``score`` 0.0 (its squares underflowed) and NaN (overflowed).
    """
    X, y = _huber_data()
    reference = IHTRegressor(k=3, loss="huber").fit(X, y)
    model = IHTRegressor(k=3, loss="huber").fit(X, factor * y)
    assert_array_equal(model.support_, reference.support_)
    expected = reference.score(X, y)
    assert 0.3 < expected < 1
    assert model.score(X, factor * y) == pytest.approx(expected, rel=1e-12)
    weights = np.random.RandomState(1).uniform(0.5, 2.0, y.size)
    assert model.score(X, factor * y, sample_weight=weights) == pytest.approx(
        reference.score(X, y, sample_weight=weights), rel=1e-12)


@pytest.mark.parametrize("dask", [False, True])
def test_poisson_counts_only_on_rows_of_weight_zero_are_named(dask):
    """``y > 0`` only where ``sample_weight`` is 0: the message says so (before: "got all zeros")."""
    rng = np.random.RandomState(0)
    X, y, weights = rng.standard_normal((40, 3)), np.zeros(40), np.ones(40)
    y[:5], weights[:5] = 2.0, 0.0
    if dask:
        import dask.array as da

        X, y, weights = (da.from_array(v, chunks=10) for v in (X, y, weights))
    with pytest.raises(ValueError, match="y is 0 on every row of positive sample weight"):
        IHTRegressor(k=1, loss="poisson").fit(X, y, sample_weight=weights)
    with pytest.raises(ValueError, match="got all zeros"):
        IHTRegressor(k=1, loss="poisson").fit(X, 0.0 * y)


# -- positive=True: k features unless no other feature lowers the loss ----------------------------------------------
def _positive_problem(seed):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((100, 8))
    beta = np.zeros(8)
    beta[[1, 4, 7]] = [0.8, -0.6, 0.5]  # (feature 4 has a negative effect: positive=True cannot take it)
    return rng, X, X @ beta


def _assert_k_or_no_descent(support, gradient, k, tol=1e-7):
    """``k`` features, or none outside the support whose gradient is negative (raising it from 0 lowers the loss)."""
    outside = np.setdiff1d(np.arange(gradient.size), support)
    assert support.size == k or gradient[outside].min() >= -tol, (support, gradient)


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize(("loss", "seed"), [("poisson", 3), ("gamma", 2)])
def test_positive_log_link_keeps_k_features_while_one_lowers_the_loss(Est, loss, seed):
    """Gradients ``X^T (mu - y) / n`` and ``X^T (1 - y / mu) / n`` written here; coefficients against L-BFGS-B.

    Poisson, before: IOBS ended with 2 features (its Newton step left feature 5 negative, the non-negative
    refit set it to 0, and the splicing search kept the empty slot) while feature 0's gradient was -0.04.
    Gamma: only 2 features lower the loss (every other gradient >= 0): 2 is right, for every algorithm.
    """
    from scipy.optimize import minimize

    rng, X, eta = _positive_problem(seed)
    counts = rng.poisson(np.exp(0.5 * eta)).astype(float)
    amounts = rng.gamma(3.0, np.exp(0.5 * eta) / 3.0)
    y = counts if loss == "poisson" else amounts
    model = Est(k=3, loss=loss, positive=True).fit(X, y)
    S = model.support_
    assert np.all(model.coef_ >= 0) and np.all(model.coef_[S] > 0)
    mu = np.exp(X @ model.coef_ + model.intercept_)
    gradient = X.T @ ((mu - y) if loss == "poisson" else (1.0 - y / mu)) / y.size
    _assert_k_or_no_descent(S, gradient, 3)

    def objective(theta):
        z = X[:, S] @ theta[:-1] + theta[-1]
        return np.mean(np.exp(z) - y * z) if loss == "poisson" else np.mean(y * np.exp(-z) + z)

    ref = minimize(objective, np.r_[np.full(S.size, 0.1), 0.0], method="L-BFGS-B",
                   bounds=[(0, None)] * S.size + [(None, None)], options={"ftol": 1e-15, "gtol": 1e-10})
    assert_allclose(model.coef_[S], ref.x[:-1], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("Est", [IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis])
def test_positive_cox_keeps_k_features_while_one_lowers_the_partial_likelihood(Est):
    """Weighted Breslow gradient by its O(n^2) definition (before: IOBS ended with 2 features, [1, 7])."""
    from sksurv.util import Surv

    rng, X, eta = _positive_problem(0)
    T, C = rng.exponential(np.exp(-eta)), rng.exponential(1.5, eta.size)
    event, time = T < C, np.ceil(np.minimum(T, C) * 3)  # (tied times)
    w = rng.uniform(0.5, 2.0, eta.size)
    model = Est(k=3, alpha=0.0, positive=True).fit(X, Surv.from_arrays(event, time), sample_weight=w)
    assert np.all(model.coef_ >= 0) and np.all(model.coef_[model.support_] > 0)
    r = w * np.exp(X @ model.coef_)
    gradient = np.zeros(X.shape[1])
    for i in np.flatnonzero(event):
        at_risk = time >= time[i]
        gradient -= w[i] * (X[i] - r[at_risk] @ X[at_risk] / r[at_risk].sum())
    _assert_k_or_no_descent(model.support_, gradient / w.sum(), 3)
