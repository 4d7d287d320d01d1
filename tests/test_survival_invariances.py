"""Invariances the Cox models must keep exactly or to the data's precision, against independent references.

Uncentred features of large magnitude (the l2 term must stay ``alpha/2 ||coef||^2`` in the user's units
whatever the internal power-of-two rescaling), rows of sample weight 0 (absent, however extreme their
values), and a strictly increasing transform of the times (the partial likelihood reads their order only).
"""

import warnings

import numpy as np
import pytest
from _loss_problems import cox_data
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)

sksurv = pytest.importorskip("sksurv")
from sksurv.linear_model import CoxPHSurvivalAnalysis  # noqa: E402
from sksurv.util import Surv  # noqa: E402

ESTIMATORS = [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
              IOBSCoxPHSurvivalAnalysis]


@pytest.mark.filterwarnings("ignore:.*baseline_risk_score_:UserWarning")  # (X + 1e7: X coef_ about -1.6e7)
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_large_uncentred_features_keep_the_penalty_in_the_users_units(Est):
    """``X + 1e7`` and a timestamp-like column (1.7e9 + 1e7 z) beside ordinary ones.

    Data beyond ``_policy.SCALE_RANGE`` are fitted rescaled by a power of two; the l2 term was left at
    ``alpha`` on the rescaled coefficients, ``alpha / scale^2`` on the user's (2^50 times stronger for
    the timestamp): before, ``X + 1e7`` gave coefficients of 5e-11 and a concordance of 0.5, and the
    timestamp column (n = 150) support [1, 5, 8] with coefficients 3e-6 (concordance 0.514 against 0.888).
    """
    X, y, _, support = cox_data(seed=5, n=150, p=9)
    base = Est(k=3).fit(X, y)
    assert_array_equal(base.support_, support)
    shifted = Est(k=3).fit(X + 1e7, y)
    assert_array_equal(shifted.support_, support)
    assert_allclose(shifted.coef_, base.coef_, rtol=1e-6, atol=1e-9)  # (X + 1e7 keeps about 9 digits of X)
    assert shifted.score(X + 1e7, y) == base.score(X, y)
    X2 = X.copy()
    X2[:, 8] = 1.7e9 + 1e7 * X[:, 8]
    stamped = Est(k=3).fit(X2, y)
    assert_array_equal(stamped.support_, support)
    # scikit-survival's ridge (on the sum, not the mean) on the centred support: the same penalised optimum
    ref = CoxPHSurvivalAnalysis(alpha=1e-4 * X.shape[0]).fit(X2[:, support] - X2[:, support].mean(axis=0), y)
    assert_allclose(stamped.coef_[support], ref.coef_, rtol=1e-6)


@pytest.mark.parametrize("power", [-30, 30])
def test_a_power_of_two_scale_of_x_and_alpha_scales_the_coefficients(power):
    """``X c`` with ``alpha c^2`` has the coefficients ``coef / c`` (the same objective in other units)."""
    X, y, _, _ = cox_data(seed=6, n=120, p=9, tied=True)
    c = 2.0 ** power
    for ties in ("breslow", "efron"):
        base = IHTCoxPHSurvivalAnalysis(k=3, ties=ties, alpha=0.05).fit(X, y)
        scaled = IHTCoxPHSurvivalAnalysis(k=3, ties=ties, alpha=0.05 * c * c).fit(X * c, y)
        assert_array_equal(scaled.support_, base.support_)
        assert_allclose(scaled.coef_ * c, base.coef_, rtol=1e-9)


def test_data_far_below_float_magnitudes_fit_without_overflow():
    """``X * 1e-160`` is rescaled by 2^531: ``alpha x_scale^2`` overflowed (OverflowError) before the cap.

    The documented l2 term on coefficients of order 1e160 is then the null model's in effect: a finite,
    all-but-zero fit of ``k`` features (as ``alpha`` that large on ``X``), never an error or a NaN.
    """
    X, y, _, _ = cox_data(seed=6, n=120, p=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = IHTCoxPHSurvivalAnalysis(k=3).fit(X * 1e-160, y)
    assert model.support_.size == 3 and np.all(np.isfinite(model.coef_))
    assert np.all(np.isfinite(model.predict(X * 1e-160)))


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_rows_of_weight_zero_are_absent_however_extreme(Est, ties):
    """Five rows of weight 0 with a value of 1e6 in column 0 and varying values in a column constant elsewhere.

    Before, every fit raised "The Cox partial likelihood cannot be evaluated at these coefficients"
    (those rows' risk scores set the shift of the risk sets' exponentials, and the others' underflowed),
    and the column constant on the rows of positive weight entered the support with a coefficient of 1e-17.
    """
    X, y, _, _ = cox_data(seed=5, n=100, p=9, tied=True)
    X[:, 1] = 2.5
    extra = np.full((5, 9), 7.0)
    extra[:, 0] = 1e6
    extra[:, 1] = np.arange(5) * 1e3
    Xz, yz = np.r_[X, extra], np.r_[y, y[:5]]
    weight = np.r_[np.ones(100), np.zeros(5)]
    for k in (3, 9):
        dropped = Est(k=k, ties=ties).fit(X, y)
        zero = Est(k=k, ties=ties).fit(Xz, yz, sample_weight=weight)
        assert_array_equal(zero.support_, dropped.support_)
        assert 1 not in zero.support_ and zero.coef_[1] == 0.0
        assert_allclose(zero.coef_, dropped.coef_, rtol=1e-10, atol=1e-12)
        assert zero.baseline_risk_score_ == 0.0
        assert_array_equal(zero.unique_times_, dropped.unique_times_)
        assert_allclose(zero.cum_baseline_hazard_.y, dropped.cum_baseline_hazard_.y, rtol=1e-10)
        assert_allclose(zero.predict_survival_function(X[:5], return_array=True),
                        dropped.predict_survival_function(X[:5], return_array=True), rtol=1e-10)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_an_increasing_transform_of_time_changes_nothing_but_the_times(ties):
    """``exp(t / 3) + 7``: the same bits for ``coef_`` and the concordance; the functions move with the times.

    (Held before this round too: a guard, with tied times and censorings tied with events.)
    """
    X, y, _, _ = cox_data(seed=2, n=120, p=12, tied=True)
    y2 = Surv.from_arrays(y["event"], np.exp(y["time"] / 3.0) + 7.0)
    for Est in ESTIMATORS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = Est(k=3, ties=ties).fit(X, y), Est(k=3, ties=ties).fit(X, y2)
        assert_array_equal(a.coef_, b.coef_)
        assert a.score(X, y) == b.score(X, y2)
        assert_array_equal(a.predict_survival_function(X[:4], return_array=True),
                           b.predict_survival_function(X[:4], return_array=True))
        t = np.unique(y["time"])
        fa, fb = a.predict_cumulative_hazard_function(X[:2]), b.predict_cumulative_hazard_function(X[:2])
        assert_array_equal(fa[1](t), fb[1](np.exp(t / 3.0) + 7.0))


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_positive_fit_with_a_column_of_large_scale_matches_scikit_survival(Est, ties):
    """``positive=True`` with one feature of scale 1e4 (n = 60, k = 2 of 5, both true coefficients positive).

    Before, every fit raised "The Cox partial likelihood cannot be evaluated at these coefficients": the
    non-negative refit's L-BFGS-B took a first trial step of norm 1, a linear predictor spanning about 5e4
    along the large column (of 40 such fits on 20 data sets, 40 raised with IHT, 10 accelerated, 18
    regularized, 4 I-OBS; this data set: IHT and accelerated). The optimum itself is ordinary: it
    is scikit-survival's, whose l2 term ``alpha/2 ||coef||^2`` is on the summed partial likelihood.
    """
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    t = rng.exponential(np.exp(-(X[:, 0] + X[:, 1])))
    c = rng.exponential(2.0, 60)
    y = Surv.from_arrays(t <= c, np.minimum(t, c))
    X[:, 1] *= 1e4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # (I-OBS: max_iter reached along the large column)
        model = Est(k=2, positive=True, ties=ties).fit(X, y)
    assert_array_equal(model.support_, [0, 1])
    ref = CoxPHSurvivalAnalysis(alpha=1e-4 * 60, ties=ties, tol=1e-12).fit(X[:, :2], y)
    assert np.all(ref.coef_ > 0)
    assert_allclose(model.coef_[:2], ref.coef_, rtol=1e-6)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_refit_from_a_far_start_backtracks_to_scikit_survivals_optimum(ties):
    """``CoxLoss.refit`` warm-started at 20 and 50 times the true coefficients (``X coef`` spanning 188 and 470).

    The splicing search warm-starts its candidate refits where it stands. There the partial likelihood is
    nearly flat, and Newton's first full step leaves the range where it can be evaluated: before, the refit
    raised "The Cox partial likelihood cannot be evaluated at these coefficients" (as did every fit of a
    55 x 13 data set of the package's fuzzing, k = 8, whose optimum spans 36), instead of halving the step.
    """
    from sparse_estimators.losses import CoxLoss

    X, y, beta, support = cox_data(seed=0, n=60, p=9)
    ref = CoxPHSurvivalAnalysis(alpha=1e-4 * 60, ties=ties, tol=1e-12).fit(X[:, support], y)
    for factor in (20, 50):
        loss = CoxLoss(X, y["event"], y["time"], None, ties, 1e-4)
        start = np.zeros((9, 1))
        start[support, 0] = factor * beta[support]
        W, _ = loss.refit(support, start, np.zeros(1))
        assert_allclose(W[support, 0], ref.coef_, rtol=1e-8)


@pytest.mark.parametrize("positive", [False, True])
def test_iobs_from_a_far_coef_init_ends_where_the_cold_fit_does(positive):
    """``coef_init`` at 50 times the true coefficients (``X coef`` spanning about 470, still in range).

    Before, both fits raised "The Cox partial likelihood cannot be evaluated at these coefficients" (as did
    ``positive=True`` already at 10 times): the damped Newton step's trial points and the refits' steps left
    the range of the exponentials instead of being shortened. The cold fit's support and, without the sign
    constraint, scikit-survival's coefficients on it.
    """
    X, y, beta, support = cox_data(seed=0, n=60, p=9)
    init = 50.0 * (np.abs(beta) if positive else beta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cold = IOBSCoxPHSurvivalAnalysis(k=3, positive=positive).fit(X, y)
        warm = IOBSCoxPHSurvivalAnalysis(k=3, positive=positive).fit(X, y, coef_init=init)
    assert_array_equal(warm.support_, cold.support_)
    assert_allclose(warm.coef_, cold.coef_, rtol=1e-6, atol=1e-12)
    if not positive:
        assert_array_equal(warm.support_, support)
        ref = CoxPHSurvivalAnalysis(alpha=1e-4 * 60, tol=1e-12).fit(X[:, support], y)
        assert_allclose(warm.coef_[support], ref.coef_, rtol=1e-8)
