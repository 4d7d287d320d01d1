"""``positive=True`` on the regressors: non-negative coefficients (issue 25).

Checked against independent computations: the best non-negative support by
exhaustive search over all supports (``scipy.optimize.nnls`` on each), and
``LinearRegression(positive=True)`` on the selected columns.
"""

import itertools
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from _problems import REGRESSORS
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression

from sparse_estimators import (
    AcceleratedIHTRegressor,
    IHTClassifier,
    IHTRegressor,
)
from sparse_estimators.model_selection import SparsityCV, sparsity_path


def _design(seed=0, n=200, p=10):
    """Two strong negative-free features, one strong negative one, one weaker positive one."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    y = 2 * X[:, 0] - 3 * X[:, 1] + 1.5 * X[:, 2] + 1.0 * X[:, 5] + 0.3 * rng.standard_normal(n)
    return X, y


def _best_nonnegative_support(X, y, k, sample_weight=None):
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    root = np.sqrt(w)
    Xc, yc = X - np.average(X, axis=0, weights=w), y - np.average(y, weights=w)
    return min(itertools.combinations(range(X.shape[1]), k),
               key=lambda S: scipy.optimize.nnls(Xc[:, S] * root[:, None], yc * root)[1])


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("precompute", [False, True])
@pytest.mark.parametrize("k", [2, 3])
def test_positive_finds_the_best_nonnegative_support(cls, precompute, k):
    X, y = _design()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = cls(k=k, positive=True, precompute=precompute).fit(X, y)
    unconstrained = cls(k=k, precompute=precompute).fit(X, y)
    assert 1 in unconstrained.support_ and unconstrained.coef_[1] < 0  # the constraint matters here
    np.testing.assert_array_equal(model.support_, _best_nonnegative_support(X, y, k))
    assert np.all(model.coef_ >= 0)
    ref = LinearRegression(positive=True).fit(X[:, model.support_], y)
    np.testing.assert_allclose(model.coef_[model.support_], ref.coef_, rtol=1e-7)
    assert model.intercept_ == pytest.approx(ref.intercept_, rel=1e-7)


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_positive_with_weights_sparse_input_and_several_targets(cls):
    X, y = _design(seed=1)
    w = np.random.RandomState(1).randint(1, 4, len(y)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        weighted = cls(k=2, positive=True).fit(X, y, sample_weight=w)
        sparse = cls(k=2, positive=True).fit(sp.csr_matrix(X), y)
        multi = cls(k=2, positive=True).fit(X, np.column_stack([y, 0.5 * y]))
    np.testing.assert_array_equal(weighted.support_, _best_nonnegative_support(X, y, 2, w))
    ref = LinearRegression(positive=True).fit(X[:, weighted.support_], y, sample_weight=w)
    np.testing.assert_allclose(weighted.coef_[weighted.support_], ref.coef_, rtol=1e-7)
    np.testing.assert_array_equal(sparse.support_, _best_nonnegative_support(X, y, 2))
    assert np.all(sparse.coef_ >= 0) and np.all(multi.coef_ >= 0)


def test_positive_with_negative_true_effects_fits_the_best_nonnegative_model():
    """Only negative true effects: the best non-negative model of k features uses what correlates positively."""
    rng = np.random.RandomState(2)
    X = rng.standard_normal((100, 5))
    y = -X[:, 0] - 2 * X[:, 3]
    model = IHTRegressor(k=2, positive=True).fit(X, y)
    assert np.all(model.coef_ >= 0) and not {0, 3} & set(model.support_)
    best = list(_best_nonnegative_support(X, y, 2))
    ref = LinearRegression(positive=True).fit(X[:, best], y)
    assert model.score(X, y) == pytest.approx(ref.score(X[:, best], y), abs=1e-10)


def test_positive_along_the_path_the_automatic_k_and_sparsitycv():
    X, y = _design(seed=3)
    path = sparsity_path(IHTRegressor(positive=True), X, y, [1, 2, 3])
    assert np.all(path.coefs >= 0)
    for k, support in zip([1, 2, 3], path.supports, strict=True):
        np.testing.assert_array_equal(support, _best_nonnegative_support(X, y, k))
    auto = IHTRegressor(positive=True).fit(X, y)
    np.testing.assert_array_equal(auto.support_, [0, 2, 5])  # every feature of positive effect, not feature 1
    search = SparsityCV(IHTRegressor(positive=True), k_grid=range(1, 6), cv=3).fit(X, y)
    assert np.all(search.best_estimator_.coef_ >= 0) and search.k_ >= 3


def test_positive_is_validated_and_only_on_regressors():
    X, y = _design()
    with pytest.raises(ValueError, match="'positive' parameter of IHTRegressor"):
        IHTRegressor(k=2, positive="yes").fit(X, y)
    assert "positive" not in IHTClassifier().get_params()


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("debias", [True, False])
def test_positive_keeps_always_select_features_at_zero(cls, debias):
    """A forced feature whose best non-negative coefficient is 0 stays in ``support_`` with coefficient 0 (issue 32).

    Feature 1 has a negative effect: the non-negative fit with it forced sets its
    coefficient to 0 (``LinearRegression(positive=True)`` on the same columns agrees),
    and it used to drop out of the support, which could come back empty.
    """
    X, y = _design()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = cls(k=3, positive=True, always_select=[1], debias=debias).fit(X, y)
        alone = cls(k=1, positive=True, always_select=[1], debias=debias).fit(X, y)
    assert 1 in model.support_ and model.support_.size == 3 and np.all(model.coef_ >= 0)
    np.testing.assert_array_equal(alone.support_, [1])  # (was empty)
    assert np.all(alone.coef_ == 0)
    if debias:  # the other two slots: the best non-negative pair, and the refit is the constrained one
        np.testing.assert_array_equal(model.support_, [0, 1, 2])
        ref = LinearRegression(positive=True).fit(X[:, [0, 1, 2]], y)
        assert ref.coef_[1] == 0
        np.testing.assert_allclose(model.coef_[[0, 1, 2]], ref.coef_, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_positive_keeps_always_select_groups(cls):
    """With groups, a forced group of negative effects stays selected with zero coefficients (issue 32)."""
    rng = np.random.RandomState(4)
    X = rng.standard_normal((200, 10))
    y = 2 * X[:, 0] + 1.5 * X[:, 2] - X[:, 8] - X[:, 9] + 0.3 * rng.standard_normal(200)
    groups = np.repeat(np.arange(5), 2)  # group 4: features 8 and 9, both of negative effect
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = cls(k=2, positive=True, groups=groups, always_select=[4]).fit(X, y)
        alone = cls(k=1, positive=True, groups=groups, always_select=[4]).fit(X, y)
    np.testing.assert_array_equal(model.groups_support_, [0, 4])
    assert {8, 9} <= set(model.support_) and np.all(model.coef_ >= 0)
    ref = LinearRegression(positive=True).fit(X[:, [0, 1, 8, 9]], y)
    assert np.all(ref.coef_[2:] == 0)
    np.testing.assert_allclose(model.coef_[[0, 1, 8, 9]], ref.coef_, rtol=1e-7, atol=1e-12)
    np.testing.assert_array_equal(alone.groups_support_, [4])  # (was empty)
    np.testing.assert_array_equal(alone.support_, [8, 9])
    assert np.all(alone.coef_ == 0)


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("debias", [True, False])
def test_positive_groups_keep_their_features_at_zero(cls, debias):
    """A selected group is in ``support_`` whole, a feature at 0 included; a group fitted to 0 leaves.

    Group 0 holds a positive (feature 0) and a negative effect (feature 1):
    the non-negative fit keeps the group with ``coef_[1] == 0``
    (``LinearRegression(positive=True)`` on groups 0 and 1 agrees), and
    feature 1 used to be left out of ``support_`` while ``groups_support_``
    listed group 0. Groups are selected or dropped whole, as features are
    without groups: a group whose whole non-negative fit is 0 leaves the
    support (fewer than ``k`` groups), as a feature does without groups.
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 6))
    groups = [0, 0, 1, 1, 2, 2]
    y = 3 * X[:, 0] - 2 * X[:, 1] + 2 * X[:, 2] + 2 * X[:, 3] + 0.2 * X[:, 4] + 0.1 * rng.standard_normal(200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = cls(k=2, positive=True, groups=groups, debias=debias).fit(X, y)
    np.testing.assert_array_equal(model.groups_support_, [0, 1])
    np.testing.assert_array_equal(model.support_, [0, 1, 2, 3])  # (was [0, 2, 3])
    np.testing.assert_array_equal(model.get_support(), [True] * 4 + [False] * 2)
    assert model.coef_[1] == 0 and np.all(model.coef_ >= 0)
    ref = LinearRegression(positive=True).fit(X[:, :4], y)
    assert ref.coef_[1] == 0
    if debias:
        np.testing.assert_allclose(model.coef_[:4], ref.coef_, rtol=1e-7, atol=1e-12)
    # groups 0 and 2 of negative effects only: the non-negative fit of any pair of groups is group 1's alone
    y = 2 * X[:, 2] + 2 * X[:, 3] - X[:, 0] - X[:, 1] - X[:, 4] - X[:, 5] + 0.1 * rng.standard_normal(200)
    assert np.all(LinearRegression(positive=True).fit(X, y).coef_[[0, 1, 4, 5]] == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = cls(k=2, positive=True, groups=groups, debias=debias).fit(X, y)
    np.testing.assert_array_equal(model.groups_support_, [1])
    np.testing.assert_array_equal(model.support_, [2, 3])


@pytest.mark.parametrize("seed", [13, 16, 25, 27, 28])
def test_accelerated_positive_expands_by_admissible_gradients(seed):
    # accelerated IHT expands the support by the k largest gradients; with positive=True those pointing out of the
    # feasible set (a coefficient that wants to go negative) were chosen too, the step projected back to zero and
    # the fit stopped at W = 0 after one iteration on these data (support_ []). Reference: brute-force NNLS pairs.
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((60, 8))
    y = X @ rng.standard_normal(8) + 0.5 * rng.standard_normal(60)
    best = max(LinearRegression(positive=True).fit(X[:, list(c)], y).score(X[:, list(c)], y)
               for c in itertools.combinations(range(8), 2))
    model = AcceleratedIHTRegressor(k=2, positive=True).fit(X, y)
    assert model.support_.size == 2
    assert model.score(X, y) >= best - 1e-6


def test_accelerated_positive_groups_is_not_stuck_at_zero():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((60, 8))
    X[:, 4] = X[:, 0] + 0.3 * rng.standard_normal(60)
    y = X @ rng.standard_normal(8) + 0.5 * rng.standard_normal(60)
    groups = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    best = max(LinearRegression(positive=True).fit(X[:, np.isin(groups, c)], y).score(X[:, np.isin(groups, c)], y)
               for c in itertools.combinations(range(4), 2))
    model = AcceleratedIHTRegressor(k=2, positive=True, groups=groups).fit(X, y)
    assert model.groups_support_.size == 2
    assert model.score(X, y) >= best - 1e-6


def test_refit_where_nnls_reaches_its_iteration_limit(monkeypatch):
    """scipy's ``nnls`` raising at its iteration limit: the refit takes BVLS's solution of the same problem.

    scipy's reimplemented ``nnls`` raised ``RuntimeError`` out of ``fit`` on
    badly scaled columns (n = 40, weights from 1e-6 to 1e6, condition 1.5e10);
    here it is made to raise on every call. Reference: scikit-learn's
    non-negative least squares on the support, computed before.
    """
    X, y = _design(3)
    weights = np.random.RandomState(0).uniform(0.5, 2.0, len(y))
    support = np.flatnonzero(IHTRegressor(k=3, positive=True).fit(X, y, sample_weight=weights).coef_)
    reference = LinearRegression(positive=True).fit(X[:, support], y, sample_weight=weights)

    def limit(*args, **kwargs):
        raise RuntimeError("Maximum number of iterations reached.")

    monkeypatch.setattr(scipy.optimize, "nnls", limit)
    est = IHTRegressor(k=3, positive=True).fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(np.flatnonzero(est.coef_), support)
    np.testing.assert_allclose(est.coef_[support], reference.coef_, rtol=1e-7)
    np.testing.assert_allclose(est.intercept_, reference.intercept_, rtol=1e-7)
    # with bounds that bind: the best of the unconstrained least squares on every subset whose solution is >= 0
    from sparse_estimators.losses._squared import _nnls

    rng = np.random.RandomState(1)
    A = rng.standard_normal((30, 5))
    b = A @ np.array([1.0, -2.0, 0.5, -0.5, 2.0]) + 0.1 * rng.standard_normal(30)
    best = np.inf, None
    for size in range(6):
        for S in itertools.combinations(range(5), size):
            x = np.zeros(5)
            x[list(S)] = np.linalg.lstsq(A[:, list(S)], b, rcond=None)[0] if S else []
            if (x >= 0).all() and np.sum((A @ x - b) ** 2) < best[0]:
                best = np.sum((A @ x - b) ** 2), x
    assert np.count_nonzero(best[1]) < 5
    np.testing.assert_allclose(_nnls(A, b), best[1], rtol=1e-7, atol=1e-12)
