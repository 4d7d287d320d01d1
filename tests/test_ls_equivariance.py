"""Least squares and Poisson: fits of ``c y`` against those of ``y``; fits with ``c`` times the sample weights.

Least squares: the fits of ``c y`` are ``c`` times those of ``y`` (the same
support). abess's exchange threshold ``0.01 k m log(p) log(log N) / N`` was
a loss decrease in absolute units, while the loss's values scale with
``c^2``: on ``y / 16`` it let in exchanges the fit of ``y`` refused. It is
now counted in ``y``'s weighted variance (``SquaredLoss.value_unit``).
Poisson: the fits of ``c y`` (rates, ``counts / exposure``) have the
coefficients of ``y`` and its intercept plus ``log c``, as scikit-learn's
``PoissonRegressor`` at ``alpha=0``; the threshold, the refits' stopping
rules and the splicing gates now count in the dispersion. Gamma's deviance
is scale-free: its fits were already so. Every check is an identity of the
data (a factor on ``y`` or on the weights), never a value copied from the
package.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _problems import CLASSIFIERS, REGRESSORS
from numpy.testing import assert_allclose, assert_array_equal

from sparse_estimators import (
    IHTRegressor,
)
from sparse_estimators.losses import GramSquaredLoss, PoissonLoss, SquaredLoss
from sparse_estimators.model_selection import SparsityCV, SparsityIC
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis, IOBSCoxPHSurvivalAnalysis

FACTORS = (2.0 ** -4, 2.0 ** 4)  # (powers of two: every operation of a fit scales exactly)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _peer_data(seed, rho, snr, n=60, p=100, k=5, outputs=1):
    """Hastie et al.'s designs (AR(1) rows, ``k`` coefficients of 1, spread out or first) at a signal-to-noise ratio.

    ``outputs`` 3: two more targets, a reversed half of the first plus noise and the first plus more noise.
    """
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho * rho) * X[:, j]
    truth = np.round(np.linspace(0, p - 1, k)).astype(int) if seed % 2 == 0 else np.arange(k)
    power = float(np.sum(rho ** np.abs(truth[:, None] - truth[None, :])))  # beta^T Sigma beta
    y = X[:, truth].sum(axis=1) + np.sqrt(power / snr) * rng.standard_normal(n)
    if outputs > 1:
        y = np.c_[y, 0.5 * y[::-1] + rng.standard_normal(n), y + 3.0 * rng.standard_normal(n)]
    return X, y


# designs where fits of y / 16 took other supports before (for most estimators and input forms below)
DESIGNS = [(0, 0.35, 1.0), (0, 0.7, 3.0), (1, 0.7, 3.0), (2, 0.7, 3.0), (0, 0.7, 0.5), (1, 0.7, 0.5)]


def _assert_scaled(model, reference, factor):
    assert_array_equal(model.support_, reference.support_, err_msg=f"factor {factor}")
    assert_allclose(model.coef_ / factor, reference.coef_, rtol=1e-10, atol=0, err_msg=f"factor {factor}")
    assert_allclose(np.asarray(model.intercept_) / factor, reference.intercept_, rtol=1e-10,
                    err_msg=f"factor {factor}")


def _check_scaled(Est, params, X=None, fit=None, outputs=1, designs=DESIGNS, transform=None):
    for seed, rho, snr in designs:
        X, y = _peer_data(seed, rho, snr, outputs=outputs)
        Xf = X if transform is None else transform(X)
        kwargs = {} if fit is None else fit(X)
        reference = Est(**params).fit(Xf, y, **kwargs)
        for factor in FACTORS:
            _assert_scaled(Est(**params).fit(Xf, factor * y, **kwargs), reference, factor)


@pytest.mark.parametrize("Est", REGRESSORS)
def test_fit_of_a_power_of_two_times_y_is_that_times_the_fit(Est):
    # before: other supports at 2**-4 for IHT, AIHT and I-OBS here (RIHT on other designs)
    _check_scaled(Est, dict(k=5))


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("case", ["positive", "weights", "sparse", "float32", "no_intercept"])
def test_fit_of_a_power_of_two_times_y_is_that_times_the_fit_in_every_input_form(Est, case):
    # before: other supports with weights for all four, on sparse X, float32 X and without intercept for three,
    # with positive=True for I-OBS
    params, fit, transform = dict(k=5), None, None
    if case == "positive":
        params["positive"] = True
    elif case == "weights":
        fit = lambda X: {"sample_weight": np.random.RandomState(1).uniform(0.2, 3.0, X.shape[0])}  # noqa: E731
    elif case == "sparse":
        transform = lambda X: sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))  # noqa: E731
    elif case == "float32":
        transform = lambda X: X.astype(np.float32)  # noqa: E731
    else:
        params["fit_intercept"] = False
    _check_scaled(Est, params, fit=fit, transform=transform)


@pytest.mark.parametrize("Est", REGRESSORS)
def test_multi_output_fit_of_a_power_of_two_times_y_is_that_times_the_fit(Est):
    # the unit is the mean of the outputs' variances (the threshold has a factor m already); before: I-OBS failed
    designs = DESIGNS + [(1, 0.7, 0.5), (0, 0.7, 3.0)]
    _check_scaled(Est, dict(k=5), outputs=3, designs=designs)


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("case", ["k_none", "always_select", "groups"])
def test_criterion_forced_and_group_fits_stay_equivariant(Est, case):
    # (these agreed before too: the criterion's log(RSS) and the group search count in relative units)
    params = {"k_none": {}, "always_select": dict(k=5, always_select=[0, 1]),
              "groups": dict(k=3, groups=np.arange(100) // 2)}[case]
    _check_scaled(Est, params, designs=DESIGNS[:4])


@pytest.mark.parametrize("Est", REGRESSORS)
def test_sparsity_ic_chooses_the_same_level_for_a_power_of_two_times_y(Est):
    # before: another level or support for IHT, AIHT and I-OBS
    for seed, rho, snr in DESIGNS:
        X, y = _peer_data(seed, rho, snr)
        reference = SparsityIC(Est(), k_grid=range(2, 9)).fit(X, y)
        for factor in FACTORS:
            search = SparsityIC(Est(), k_grid=range(2, 9)).fit(X, factor * y)
            assert search.k_ == reference.k_
            _assert_scaled(search.best_estimator_, reference.best_estimator_, factor)


def test_squared_loss_unit_is_the_weighted_variance_of_y():
    rng = np.random.RandomState(0)
    X, Y = rng.standard_normal((50, 6)), rng.standard_normal((50, 2)) * [1.0, 3.0] + 5.0
    w = rng.uniform(0.5, 2.0, 50)
    mean = w @ Y / w.sum()
    expected = float(np.mean(w @ (Y - mean) ** 2 / w.sum()))
    for Loss in (SquaredLoss, GramSquaredLoss):
        assert Loss(X, Y, w).value_unit == pytest.approx(expected, rel=1e-12)
        assert Loss(X, Y, 7.0 * w).value_unit == pytest.approx(expected, rel=1e-12)
        assert Loss(X, 4.0 * Y, w).value_unit == pytest.approx(16.0 * expected, rel=1e-12)
    no_intercept = float(np.mean(w @ Y ** 2 / w.sum()))  # (about 0: the null model's fit is 0)
    assert SquaredLoss(X, Y, w, fit_intercept=False).value_unit == pytest.approx(no_intercept, rel=1e-12)
    assert SquaredLoss(X, np.full(50, 2.0)).value_unit == 1.0  # (a constant y: every fit is its mean)


# -- Poisson and Gamma --------------------------------------------------------------------------------------


def _glm_data(seed, loss):
    rng = np.random.RandomState(seed)
    n, p, k = (150, 60, 5) if seed % 2 else (100, 200, 5)
    X = rng.standard_normal((n, p))
    X[:, 1:] = 0.5 * X[:, :-1] + np.sqrt(0.75) * X[:, 1:]
    beta = np.zeros(p)
    beta[rng.choice(p, k, replace=False)] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.1, 0.3, k)
    mu = np.exp(X @ beta + 0.5)
    y = rng.poisson(mu).astype(float) if loss == "poisson" else rng.gamma(2.0, mu / 2.0)
    return X, y, k


@pytest.mark.parametrize("Est", REGRESSORS)
@pytest.mark.parametrize("loss", ["poisson", "gamma"])
def test_log_link_fit_of_c_times_y_has_the_coefficients_and_the_intercept_plus_log_c(Est, loss):
    # Poisson before: other supports on 4 to 8 of these 24 fits per estimator (Gamma: none, its deviance is
    # scale-free)
    for seed in range(8):
        X, y, k = _glm_data(seed, loss)
        reference = Est(k=k, loss=loss).fit(X, y)
        for factor in (2.0 ** -4, 2.0 ** 4, 10.0):
            model = Est(k=k, loss=loss).fit(X, factor * y)
            assert_array_equal(model.support_, reference.support_, err_msg=f"seed {seed}, factor {factor}")
            assert_allclose(model.coef_, reference.coef_, rtol=1e-7, atol=1e-10)
            assert model.intercept_ == pytest.approx(reference.intercept_ + np.log(factor), rel=1e-9, abs=1e-9)


def test_poisson_sparsity_cv_scores_rates_and_counts_alike():
    # each fold's fit is equivariant and D^2 is scale-free: the same scores and level for y / 16 and 10 y (k=None's
    # criterion, the likelihood of counts, is not; SparsityCV is the way to choose k for rates)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((150, 40))
    y = rng.poisson(np.exp(X[:, :4] @ [0.3, -0.3, 0.2, 0.25] + 0.5)).astype(float)
    reference = SparsityCV(IHTRegressor(loss="poisson"), k_grid=range(1, 8)).fit(X, y)
    for factor in (2.0 ** -4, 10.0):
        search = SparsityCV(IHTRegressor(loss="poisson"), k_grid=range(1, 8)).fit(X, factor * y)
        assert_allclose(search.cv_results_["mean_test_score"], reference.cv_results_["mean_test_score"], rtol=1e-8)
        assert search.k_ == reference.k_
        assert_array_equal(search.best_estimator_.support_, reference.best_estimator_.support_)


def test_poisson_unit_is_the_null_models_pearson_dispersion():
    rng = np.random.RandomState(3)
    X, y, w = rng.standard_normal((80, 4)), rng.poisson(2.0, 80).astype(float), rng.uniform(0.5, 2.0, 80)
    m = w @ y / w.sum()
    expected = float(w @ (y - m) ** 2 / (m * w.sum()))
    assert PoissonLoss(X, y, w).value_unit == pytest.approx(expected, rel=1e-12)
    assert PoissonLoss(X, 10.0 * y, 3.0 * w).value_unit == pytest.approx(10.0 * expected, rel=1e-12)
    loss = PoissonLoss(X, y, w)
    W, b = loss.refit(np.array([0, 1]), *loss.zeros())
    # the splicing gates' dispersion: the mean deviance over N - k - 1 degrees of freedom (N: the weights' sum)
    N = max(w.sum(), 80.0)
    assert loss.noise_scale(loss.value(W, b), 2) == pytest.approx(loss.deviance(W, b) * N / (N - 3), rel=1e-10)


# -- sample weights times a constant --------------------------------------------------------------------------


def _weighted_data(kind, seed, n=120, p=80, k=5):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[:, 1:] = 0.5 * X[:, :-1] + np.sqrt(0.75) * X[:, 1:]
    beta = np.zeros(p)
    beta[rng.choice(p, k, replace=False)] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.2, 0.5, k)
    eta = X @ beta
    if kind in ("squared_error", "huber"):
        y = eta + rng.standard_normal(n)
    elif kind == "poisson":
        y = rng.poisson(np.exp(eta + 0.5)).astype(float)
    elif kind == "gamma":
        y = rng.gamma(3.0, np.exp(eta) / 3.0)
    elif kind == "logistic":
        y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-2.0 * eta))).astype(int)
    elif kind == "multinomial":
        y = np.argmax(np.c_[2.0 * eta, -2.0 * eta, np.zeros(n)] + rng.gumbel(size=(n, 3)), axis=1)
    else:
        t = rng.exponential(np.exp(-eta))
        c = rng.exponential(2.0 * np.median(t), n)
        y = np.array(list(zip(t <= c, np.minimum(t, c), strict=True)), dtype=[("event", bool), ("time", float)])
    # weights of relative importance (their sum below the number of rows: N is that number, see
    # BaseLoss.n_observations); weights summing to more are frequency weights, whose scale is data
    w = np.random.RandomState(seed + 100).uniform(0.1, 0.9, n)
    return X, y, w, k


CASES = ([(kind, Est) for kind in ("squared_error", "huber", "poisson", "gamma") for Est in REGRESSORS]
         + [(kind, Est) for kind in ("logistic", "multinomial") for Est in CLASSIFIERS]
         + [("cox", IHTCoxPHSurvivalAnalysis), ("cox", IOBSCoxPHSurvivalAnalysis)])


@pytest.mark.parametrize("kind, Est", CASES)
def test_weights_times_a_constant_give_the_same_fit(kind, Est):
    for seed in range(3):
        X, y, w, k = _weighted_data(kind, seed)
        params = dict(k=k) if kind in ("logistic", "multinomial", "cox") else dict(k=k, loss=kind)
        reference = Est(**params).fit(X, y, sample_weight=w)
        for factor in (2.0 ** -4, 0.5, 0.1):
            model = Est(**params).fit(X, y, sample_weight=factor * w)
            assert_array_equal(model.support_, reference.support_, err_msg=f"seed {seed}, factor {factor}")
            assert_allclose(model.coef_, reference.coef_, rtol=1e-7, atol=1e-10)
            assert_allclose(getattr(model, "intercept_", 0.0), getattr(reference, "intercept_", 0.0), rtol=1e-7,
                            atol=1e-10)
