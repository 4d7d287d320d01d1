"""The Cox models' warning of a monotone partial likelihood (few events), against a brute-force reference.

With two features the directions along which the log partial likelihood never falls form an arc of the
circle; its ends are perpendicular to some ``x_i - x_j`` (``i`` an event, ``j`` in its risk set), so those
angles and the midpoints between them decide exactly whether a direction raises it for ever.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sparse_estimators.losses import CoxLoss
from sparse_estimators.survival import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    MonotoneLikelihoodWarning,
    RegularizedIHTCoxPHSurvivalAnalysis,
)
from sparse_estimators.survival._monotone import monotone_direction

ESTIMATORS = [IHTCoxPHSurvivalAnalysis, AcceleratedIHTCoxPHSurvivalAnalysis, RegularizedIHTCoxPHSurvivalAnalysis,
              IOBSCoxPHSurvivalAnalysis]
DTYPE = [("event", bool), ("time", float)]


def _surv(event, time):
    return np.array(list(zip(event, time, strict=True)), dtype=DTYPE)


def _monotone_by_angles(A, event, time, weight=None):
    """Two columns: whether some direction keeps every event's score the largest of its risk set, one strictly."""
    live = np.ones(time.size, bool) if weight is None else weight > 0
    V = np.array([A[i] - A[j] for i in np.flatnonzero(event & live) for j in np.flatnonzero(live & (time >= time[i]))])
    tol = 1e-9 * np.abs(V).max()
    critical = np.sort(np.concatenate([np.arctan2(V[:, 0], -V[:, 1]), np.arctan2(-V[:, 0], V[:, 1])]) % (2 * np.pi))
    middle = 0.5 * (critical + np.r_[critical[1:], critical[0] + 2 * np.pi])
    angles = np.concatenate([critical, middle])
    gaps = V @ np.array([np.cos(angles), np.sin(angles)])
    return bool(np.any((gaps.min(axis=0) >= -tol) & (gaps.max(axis=0) > tol)))


def _rare_events(seed, n=40, p=6, events=2):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    time = rng.exponential(1.0, n)
    event = np.zeros(n, bool)
    event[rng.choice(n, events, replace=False)] = True
    return X, event, time


def _fit(Est, X, y, **params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = Est(**params).fit(X, y)
    mono = [w for w in caught if issubclass(w.category, MonotoneLikelihoodWarning)]
    return model, mono


def test_two_events_warn_exactly_when_the_selected_features_give_a_monotone_likelihood():
    """n = 40, p = 6, k = 2, two events: the warning fires exactly on the fits the angles call monotone.

    Before, every fit was silent; on the monotone ones the coefficients are the l2
    term's optimum (about 5 to 11 on seeds 4, 7 and 10), and the unpenalised ones grow without bound.
    """
    verdicts = []
    for seed in range(12):
        X, event, time = _rare_events(seed)
        model, mono = _fit(IHTCoxPHSurvivalAnalysis, X, _surv(event, time), k=2)
        expected = _monotone_by_angles(X[:, model.support_], event, time)
        assert bool(mono) == expected, seed
        verdicts.append(expected)
        if expected:
            message = str(mono[0].message)
            assert "monotone" in message and "2 event(s) among 40 samples" in message and "alpha=0.0001" in message
            # the unpenalised loss falls along the fitted direction, without end
            loss = CoxLoss(X[:, model.support_], event, time)
            values = [loss.value(t * model.coef_[model.support_][:, None], np.zeros(1)) for t in (1.0, 2.0, 4.0)]
            assert values[0] > values[1] > values[2]
    assert 2 <= sum(verdicts) <= 10  # (both cases occur)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_a_category_holding_every_event_warns_and_leaves_the_coefficients(Est, ties):
    """Quasi-separation: all events in category 1 of a binary feature (tied scores inside it), with tied times.

    The fitted direction does not order the events strictly (the second feature varies within the category):
    the linear programme finds the direction. The coefficients are those of the fit without the check.
    """
    rng = np.random.RandomState(3)
    x = np.r_[np.ones(20), np.zeros(20)]
    time = np.ceil(3 * rng.exponential(1.0, 40))
    event = (x == 1) & (rng.rand(40) < 0.5)
    X = np.c_[x, rng.standard_normal(40)]
    assert _monotone_by_angles(X, event, time)
    model, mono = _fit(Est, X, _surv(event, time), k=2, ties=ties)
    assert_array_equal(model.support_, [0, 1])
    assert len(mono) == 1 and "feature(s) [0]" in str(mono[0].message)
    assert mono[0].filename == __file__  # (stacklevel: the user's call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_array_equal(Est(k=2, ties=ties).fit(X, _surv(event, time)).coef_, model.coef_)
    _, mono0 = _fit(Est, X, _surv(event, time), k=2, ties=ties, alpha=0.0)
    assert mono0 and "where the solver stopped (alpha=0)" in str(mono0[0].message)


def test_rows_of_weight_zero_are_absent_for_the_check():
    """A row of weight 0 that would break the monotone likelihood: the fit warns as without the row."""
    X, event, time = _rare_events(4)
    model, mono = _fit(IHTCoxPHSurvivalAnalysis, X, _surv(event, time), k=2)
    assert mono
    S = model.support_
    first = np.argmin(np.where(event, time, np.inf))
    extra = X[first] + 10.0 * np.sign(model.coef_)  # (later than the events, a larger score than theirs)
    X2, event2, time2 = np.r_[X, extra[None]], np.r_[event, False], np.r_[time, time.max() + 1.0]
    weight = np.r_[np.ones(40), 0.0]
    assert not _monotone_by_angles(X2[:, S], event2, time2)
    assert _monotone_by_angles(X2[:, S], event2, time2, weight)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        IHTCoxPHSurvivalAnalysis(k=2).fit(X2, _surv(event2, time2), sample_weight=weight)
    assert any(issubclass(w.category, MonotoneLikelihoodWarning) for w in caught)


def test_monotone_direction_against_the_angles_on_small_random_problems():
    """200 small problems (n = 12, 1 to 5 events, ties in time and in the features, some zero weights)."""
    rng = np.random.RandomState(0)
    outcomes = set()
    for _ in range(200):
        n = 12
        A = rng.randint(-2, 3, (n, 2)).astype(float) if rng.rand() < 0.5 else rng.standard_normal((n, 2))
        time = rng.randint(1, 6, n).astype(float)
        event = np.zeros(n, bool)
        event[rng.choice(n, rng.randint(1, 6), replace=False)] = True
        weight = (rng.rand(n) < 0.85).astype(float)
        if not np.any(event & (weight > 0)):
            continue
        expected = _monotone_by_angles(A, event, time, weight)
        d = monotone_direction(A, event, time, weight)
        assert (d is not None) == expected
        if d is not None:  # the direction itself: every event's score the largest of its risk set
            eta = A @ d
            live = weight > 0
            for i in np.flatnonzero(event & live):
                assert eta[i] >= eta[live & (time >= time[i])].max() - 1e-9 * np.abs(eta).max()
        outcomes.add(expected)
    assert outcomes == {True, False}


@pytest.mark.parametrize("name", ["load_whas500", "load_veterans_lung_cancer", "load_gbsg2"])
def test_no_warning_on_the_bundled_data_sets(name):
    sksurv = pytest.importorskip("sksurv")
    from sklearn.preprocessing import StandardScaler
    from sksurv import datasets
    from sksurv.column import encode_categorical

    assert sksurv
    X, y = getattr(datasets, name)()
    X = encode_categorical(X).to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MonotoneLikelihoodWarning)
        for data in (X, StandardScaler().fit_transform(X)):
            for k in (1, 3, X.shape[1]):
                IHTCoxPHSurvivalAnalysis(k=k).fit(data, y)
            IOBSCoxPHSurvivalAnalysis(k=3, ties="efron").fit(data, y)
