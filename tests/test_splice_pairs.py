"""Exact single exchanges for least squares (splice's ``pair_candidates``, ``solvers/_splice_pairs.py``)."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from sparse_estimators.losses import GramSquaredLoss, PoissonLoss, SquaredLoss
from sparse_estimators.solvers import splice
from sparse_estimators.solvers._splice_pairs import best_pair


def _rss(X, y, support, sample_weight=None):
    """Half the weighted mean squared residual of scikit-learn's least squares (intercept) on ``support``."""
    A = X[:, support]
    fit = LinearRegression().fit(A, y, sample_weight=sample_weight)
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    return 0.5 * float(w @ (y - fit.predict(A)) ** 2) / w.sum()


def _start(loss, support):
    W, b = loss.zeros()
    W[support] = 1.0
    return loss.refit(support, W, b)


def _stand_in_design(seed, n=200, p=40):
    """True features 0 to 4 (feature 0 the strongest); feature 5 is feature 0 plus a little noise."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    X[:, 5] = X[:, 0] + 0.35 * rng.standard_normal(n)
    y = X[:, :5] @ np.array([3.0, 2.0, 2.0, 2.0, 2.0]) + rng.standard_normal(n) + 2.0
    return X, y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("loss_class", [SquaredLoss, GramSquaredLoss])
def test_best_pair_is_the_brute_force_best_single_exchange(seed, weighted, loss_class):
    """Over every selected and every unselected feature: the exchange, and its decrease, of exhaustive refits."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((60, 15))
    X[:, 7] += 0.8 * X[:, 2]
    y = X[:, [0, 2, 4, 9]] @ np.array([1.0, 1.5, -1.0, 0.8]) + rng.standard_normal(60)
    w = rng.uniform(0.5, 2.0, 60) if weighted else None
    loss = loss_class(X, y, sample_weight=w)
    support = np.array([0, 3, 7, 9])
    W, b = _start(loss, support)
    Z = loss.linear_predictor(W, b, support)
    gradient = loss.gradient_from_z(Z, W)[0]
    forward = np.ones(15)
    forward[support] = -np.inf
    exchanged, decrease = best_pair(loss, support, W, gradient, forward, 15, loss.coordinate_curvatures())
    f = _rss(X, y, support, w)
    decreases = {(i, j): f - _rss(X, y, np.sort(np.r_[np.setdiff1d(support, [i]), j]), w)
                 for i in support for j in np.setdiff1d(np.arange(15), support)}
    (i, j), best = max(decreases.items(), key=lambda item: item[1])
    assert best - sorted(decreases.values())[-2] > 1e-6  # (a unique best exchange)
    np.testing.assert_array_equal(exchanged, np.sort(np.r_[np.setdiff1d(support, [i]), j]))
    np.testing.assert_allclose(decrease, best, rtol=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_exchanges_a_stand_in_for_the_true_feature(seed):
    """A correlated false positive in place of the strongest true feature: the round's ranking keeps it.

    Its own removal cost is the largest of the support (it carries the true
    feature's effect), so the round never tries to remove it; the exact
    exchange finds it, and the search ends on the true support.
    """
    X, y = _stand_in_design(seed)
    loss = SquaredLoss(X, y)
    W, b = _start(loss, np.array([1, 2, 3, 4, 5]))
    stays = splice(loss, 5, W, b, screening_start=False)
    np.testing.assert_array_equal(stays.support, [1, 2, 3, 4, 5])
    assert stays.n_iter == 0
    result = splice(loss, 5, W, b, screening_start=False, pair_candidates=10)
    np.testing.assert_array_equal(result.support, np.arange(5))
    assert result.n_iter == 1
    # the decrease: scikit-learn's refits on the two supports
    assert stays.objective == [] and result.objective[0] == pytest.approx(
        _rss(X, y, [0, 1, 2, 3, 4]), rel=1e-10)
    assert _rss(X, y, [1, 2, 3, 4, 5]) - _rss(X, y, [0, 1, 2, 3, 4]) > 0.1


def test_no_exchange_below_the_gate():
    """From the true support of a well-separated design nothing is exchanged (the same gate as the round's)."""
    X, y = _stand_in_design(0)
    loss = SquaredLoss(X, y)
    W, b = _start(loss, np.arange(5))
    result = splice(loss, 5, W, b, screening_start=False, pair_candidates=40)
    np.testing.assert_array_equal(result.support, np.arange(5))
    assert result.n_iter == 0


def test_protected_features_stay():
    """A forced feature is never exchanged out by the exact exchanges either."""
    X, y = _stand_in_design(1)
    loss = SquaredLoss(X, y)
    W, b = _start(loss, np.array([1, 2, 3, 4, 5]))
    result = splice(loss, 5, W, b, screening_start=False, pair_candidates=10, forced=[5])
    assert 5 in result.support


def test_added_feature_significance_gate():
    """The exchange is refused when the added feature's removal cost is below ``pair_add_gate``'s level.

    Feature 0's cost in the new fit, ``w_0^2 h_0 / 2``, from scikit-learn's
    refit, sets the level (in units of ``log(p) s / N``) above which the exchange stays refused.
    """
    X, y = _stand_in_design(2)
    loss = SquaredLoss(X, y)
    W, b = _start(loss, np.array([1, 2, 3, 4, 5]))
    support = np.arange(5)
    fit = LinearRegression().fit(X[:, support], y)
    cost = 0.5 * fit.coef_[0] ** 2 * X[:, 0].var()
    s2 = 2 * _rss(X, y, support) * len(y) / (len(y) - 5 - 1)
    level = cost / (np.log(X.shape[1]) * s2 / len(y))
    for gate, expected in ((0.9 * level, support), (1.1 * level, [1, 2, 3, 4, 5])):
        result = splice(loss, 5, W, b, screening_start=False, pair_candidates=10, pair_add_gate=gate)
        np.testing.assert_array_equal(result.support, expected)


@pytest.mark.parametrize("name", ["IHTRegressor", "AcceleratedIHTRegressor", "RegularizedIHTRegressor",
                                  "IOBSRegressor"])
def test_regressors_try_exact_exchanges_from_min_k(name):
    """The regressors' splicing asks for the exact exchanges and more rounds at ``k >= _policy.LARGE_K`` only.

    Below, the small fits' time went up with no F1 gain (doc/changelog.rst,
    "exact single exchanges"); at and above, ``large_k.py``'s gain at k = 500.
    """
    import sparse_estimators
    from sparse_estimators import _policy

    X, y = _stand_in_design(0)
    loss = SquaredLoss(X, y)
    estimator = getattr(sparse_estimators, name)()
    below, at = estimator._splice_kwargs(loss, _policy.LARGE_K - 1), estimator._splice_kwargs(loss, _policy.LARGE_K)
    assert "pair_candidates" not in below and "max_rounds" not in below  # (splice's defaults: 0 and 20)
    assert at["pair_candidates"] == _policy.PAIR_SWAP_CANDIDATES
    assert at["max_rounds"] == _policy.LARGE_K_MAX_ROUNDS
    # (other losses: the exact exchanges do not apply, the rounds stay splice's default)
    poisson = estimator._splice_kwargs(PoissonLoss(X, np.abs(y)), _policy.LARGE_K)
    assert "max_rounds" not in poisson


def _stand_in_pairs_design(n=240, p=160, k=50):
    """``k`` true features (0 to ``k - 1``); feature ``k + j`` stands in for feature ``j`` (a correlated neighbour)."""
    rng = np.random.RandomState(1)
    X = rng.standard_normal((n, p))
    X[:, k:2 * k] = X[:, :k] + 0.3 * rng.standard_normal((n, k))
    y = X[:, :k] @ rng.uniform(1.0, 2.0, k) + rng.standard_normal(n) + 3.0
    return X, y


@pytest.mark.parametrize("name", ["IHTRegressor", "AcceleratedIHTRegressor", "RegularizedIHTRegressor",
                                  "IOBSRegressor"])
def test_regressors_exchange_stand_ins_at_large_k(name):
    """At ``k = 50`` the regressors' searches end on the true support, as the data's options and layouts vary.

    Without the exact exchanges the IHT solvers kept 31 to 36 of the 50 true
    features (stand-ins in place of the others) and I-OBS 49. Column order,
    the unit of ``y``, a sparse or float32 ``X`` and the Gram route leave
    the support where it is, integer weights give the support and
    coefficients of repeated rows (in any order); the coefficients are
    scikit-learn's least squares on the support.
    """
    import scipy.sparse as sp

    import sparse_estimators

    X, y = _stand_in_pairs_design()
    n, p = X.shape
    Estimator = getattr(sparse_estimators, name)
    true = np.arange(50)
    rng = np.random.RandomState(0)
    weights = rng.randint(0, 3, n).astype(float)
    rows = np.repeat(np.arange(n), weights.astype(int))
    columns = rng.permutation(p)
    fits = {
        "plain": Estimator(k=50).fit(X, y).coef_,
        "weights": Estimator(k=50).fit(X, y, sample_weight=weights).coef_,
        "repeated rows": Estimator(k=50).fit(X[rows], y[rows]).coef_,
        "rows permuted": Estimator(k=50).fit(X[rows[::-1]], y[rows[::-1]]).coef_,
        "columns permuted": Estimator(k=50).fit(X[:, columns], y).coef_[np.argsort(columns)],
        "y times -7": Estimator(k=50).fit(X, -7.0 * y).coef_ / -7.0,
        "csc": Estimator(k=50, precompute=False).fit(sp.csc_matrix(X), y).coef_,
        "float32": Estimator(k=50).fit(X.astype(np.float32), y).coef_,
        "gram": Estimator(k=50, precompute=True).fit(X, y).coef_,
        "no gram": Estimator(k=50, precompute=False).fit(X, y).coef_,
    }
    for case in ("plain", "columns permuted", "y times -7", "csc", "float32", "gram", "no gram"):
        np.testing.assert_array_equal(np.flatnonzero(fits[case]), true, err_msg=case)
    reference = LinearRegression().fit(X[:, true], y).coef_
    for case in ("plain", "columns permuted", "y times -7", "csc", "gram", "no gram"):
        np.testing.assert_allclose(fits[case][true], reference, rtol=1e-8, err_msg=case)
    np.testing.assert_allclose(fits["float32"][true], reference, rtol=1e-4)
    # (the weighted fit, on two thirds of the rows, keeps some stand-ins: the same ones for repeated rows)
    support = np.flatnonzero(fits["weights"])
    assert support.size == 50
    weighted = LinearRegression().fit(X[:, support], y, sample_weight=weights).coef_
    for case in ("weights", "repeated rows", "rows permuted"):
        np.testing.assert_array_equal(np.flatnonzero(fits[case]), support, err_msg=case)
        np.testing.assert_allclose(fits[case][support], weighted, rtol=1e-8, err_msg=case)
