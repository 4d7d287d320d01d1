"""Splicing with feature groups: whole groups are exchanged (issue 22)."""

import warnings

import numpy as np
import pytest
from _problems import one_large_group, recording_solver

from sparse_estimators import AcceleratedIHTRegressor, IHTClassifier, IHTRegressor
from sparse_estimators.losses import SquaredLoss
from sparse_estimators.solvers import splice
from sparse_estimators.solvers._splice_groups import _UnitSearch
from sparse_estimators.structures import Groups, Rows
from sparse_estimators.thresholding import Hard


def _decoy(seed, n=200, decoy_noise=1.5):
    """Groups A (label 0, 3 features) and B (label 1, 2 features) carry the signal; D (label 2) is a decoy.

    D's three columns are the signal plus independent noise, so that D alone
    correlates with ``y`` more than A or B: IHT with ``k=2`` picks D first.
    Twenty noise groups of 2 to 5 features follow.
    """
    rng = np.random.RandomState(seed)
    sizes = [3, 2, 3] + list(rng.randint(2, 6, 20))
    labels = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.standard_normal((n, labels.size))
    beta = np.zeros(labels.size)
    beta[labels == 0] = [1.0, -1.0, 1.0]
    beta[labels == 1] = [1.0, 1.0]
    signal = X @ beta
    X[:, labels == 2] = signal[:, None] / signal.std() + decoy_noise * rng.standard_normal((n, 3))
    return X, signal + 0.3 * rng.standard_normal(n), labels


@pytest.mark.parametrize("cls", [IHTRegressor, AcceleratedIHTRegressor])
@pytest.mark.parametrize("seed", [0, 2])
def test_splicing_replaces_the_decoy_group_by_the_true_one(cls, seed):
    X, y, labels = _decoy(seed)
    stuck = cls(k=2, groups=labels, splicing=False).fit(X, y)
    assert 2 in stuck.groups_support_  # (the design: without splicing the decoy is kept)
    spliced = cls(k=2, groups=labels).fit(X, y)
    np.testing.assert_array_equal(spliced.groups_support_, [0, 1])
    assert spliced.n_exchanges_ >= 1
    np.testing.assert_array_equal(spliced.support_, np.flatnonzero(labels <= 1))


def test_forced_group_is_never_exchanged_out():
    X, y, labels = _decoy(0)
    # group 5 is noise: the cheapest to remove, and kept all the same
    model = IHTRegressor(k=3, groups=labels, always_select=[5]).fit(X, y)
    np.testing.assert_array_equal(model.groups_support_, [0, 1, 5])
    assert np.all(model.coef_[labels == 5] != 0)


@pytest.mark.parametrize("seed", range(3))
def test_splice_keeps_forced_units_and_k_whole_groups(seed):
    rng = np.random.RandomState(seed)
    X, y, labels = _decoy(seed)
    loss = SquaredLoss(X, y[:, None])
    structure = Groups(Hard(), labels)
    # a poor start: 4 random groups, one of them forced
    start_units = np.sort(rng.choice(np.arange(3, labels.max() + 1), 4, replace=False))
    support = structure.features(start_units)
    W, b = loss.refit(support, *loss.zeros())
    result = splice(loss, 4, W, b, structure=structure, forced=structure.features(start_units[:1]))
    units = structure.units(result.support)
    assert units.size == 4 and start_units[0] in units
    np.testing.assert_array_equal(result.support, structure.features(units))  # unions of whole groups
    assert {0, 1} <= set(units.tolist())  # the true groups came in
    assert result.n_iter >= 1 and np.all(np.diff(result.objective) < 0)


@pytest.mark.parametrize("cls", [IHTRegressor, IHTClassifier])
@pytest.mark.parametrize("k", [1, 3, 6])
def test_group_fits_select_exactly_k_whole_groups(cls, k):
    rng = np.random.RandomState(k)
    labels = np.repeat(np.arange(15), rng.randint(1, 6, 15))
    X = rng.standard_normal((120, labels.size))
    z = X[:, labels == 3].sum(axis=1) - X[:, labels == 7].sum(axis=1)
    y = z + rng.standard_normal(120) if cls is IHTRegressor else (z + rng.logistic(size=120) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(k=k, groups=labels, splicing=True).fit(X, y)
    assert len(model.groups_support_) == k
    np.testing.assert_array_equal(model.support_, np.flatnonzero(np.isin(labels, model.groups_support_)))


def test_rows_structure_is_the_row_search():
    X, y, _ = _decoy(1)
    loss = SquaredLoss(X, y[:, None])
    W, b = loss.refit(np.arange(4), *loss.zeros())
    plain = splice(loss, 4, W, b)
    rows = splice(loss, 4, W, b, structure=Rows(Hard()))
    np.testing.assert_array_equal(plain.support, rows.support)
    np.testing.assert_array_equal(plain.coef, rows.coef)


def test_unit_gain_is_the_exact_decrease_for_least_squares():
    """One block Newton step is exact for least squares: the gain is the loss decrease of the best step."""
    rng = np.random.RandomState(3)
    X, y, labels = _decoy(3)
    weights = rng.uniform(0.5, 2.0, y.size)
    loss = SquaredLoss(X + 3.0, y[:, None], sample_weight=weights)  # (centering and weights matter)
    structure = Groups(Hard(), labels)
    search = _UnitSearch(loss, 2, structure, None, 5, 20, 0.25, 0.0, None)
    W, b = loss.refit(structure.features([0]), *loss.zeros())
    f = loss.value(W, b)
    gain = search.unit_gain(loss.linear_predictor(W, b), W)[0]
    for unit in (1, 2, 7):
        cols = structure.features([unit])
        Xc = X[:, cols] - np.average(X[:, cols], axis=0, weights=weights)  # (X + 3 centered the same)
        r = y - loss.intercept(W, b) - (X + 3.0) @ W[:, 0]
        r = r - np.average(r, weights=weights)
        step = np.linalg.solve(Xc.T @ (weights[:, None] * Xc), Xc.T @ (weights * r))
        W_new = W.copy()
        W_new[cols, 0] += step
        assert gain[unit] == pytest.approx(f - loss.value(W_new, b), rel=1e-8)


@pytest.mark.parametrize("variant", ["sparse", "precompute", "float32"])
def test_group_splicing_is_the_same_on_every_design(variant):
    import scipy.sparse as sp

    X, y, labels = _decoy(2)
    dense = IHTRegressor(k=2, groups=labels, precompute=False).fit(X, y)
    if variant == "sparse":
        other = IHTRegressor(k=2, groups=labels).fit(sp.csc_matrix(X), y)
    elif variant == "precompute":
        other = IHTRegressor(k=2, groups=labels, precompute=True).fit(X, y)
    else:
        other = IHTRegressor(k=2, groups=labels, precompute=False).fit(X.astype(np.float32), y)
    np.testing.assert_array_equal(other.groups_support_, [0, 1])
    np.testing.assert_allclose(other.coef_, dense.coef_, rtol=1e-4, atol=1e-6)


def test_constant_and_duplicated_columns_in_groups():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 12))
    X[:, 1] = 3.0  # constant, in group 0
    X[:, 5] = X[:, 4]  # duplicated, in group 1
    labels = np.repeat(np.arange(4), 3)
    y = X[:, 4] + X[:, 9] + rng.standard_normal(100)
    model = IHTRegressor(k=2, groups=labels).fit(X, y)
    np.testing.assert_array_equal(model.groups_support_, [1, 3])
    assert np.all(np.isfinite(model.coef_))
    # the start has the constant column's group: the exchange must bring the duplicated one in
    start = np.zeros(12)
    start[[0, 2, 9]] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (max_iter=1: not converged)
        stuck = IHTRegressor(k=2, groups=labels, max_iter=1, splicing=False).fit(X, y, coef_init=start)
        warm = IHTRegressor(k=2, groups=labels, max_iter=1).fit(X, y, coef_init=start)
    np.testing.assert_array_equal(stuck.groups_support_, [0, 3])
    np.testing.assert_array_equal(warm.groups_support_, [1, 3])


@pytest.mark.parametrize("cls", [IHTRegressor, IHTClassifier])
def test_group_fits_exchange_at_most_two_groups_at_once(cls, monkeypatch):
    """With groups both tasks exchange up to 2 groups per round (issue 33: the same group F1 for less time).

    The feature search keeps its own size (5, the splice default): only group fits get ``max_exchange=2``.
    """
    from sparse_estimators.linear_model import _base

    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs.get("max_exchange"))
        return splice(*args, **kwargs)

    monkeypatch.setattr(_base, "splice", recording)
    X, y, labels = _decoy(0)
    if cls is IHTClassifier:
        y = (y > np.median(y)).astype(int)
    cls(k=2, groups=labels, splicing=True).fit(X, y)
    cls(k=2, splicing=True).fit(X, y)
    assert seen == [2, None]


def test_unit_price_levels_are_the_chi_squared_quantiles():
    """A unit's level is the chi-squared quantile at 1 - 1/G with its number of usable coefficients as dof."""
    import scipy.stats

    X, y, labels = _decoy(1)
    X[:, 5] = 2.0  # (a constant column: not a degree of freedom of its group)
    loss = SquaredLoss(X, y[:, None])
    structure = Groups(Hard(), labels)
    search = _UnitSearch(loss, 2, structure, None, 5, 20, 0.25, 0.0, None)
    G = labels.max() + 1
    dof = np.bincount(labels, minlength=G) - np.bincount(labels[[5]], minlength=G)
    np.testing.assert_allclose(search.level, scipy.stats.chi2.isf(1.0 / G, dof), rtol=1e-12)


@pytest.mark.parametrize("padding", [4.0, 0.0])
def test_unit_cost_is_the_exact_increase_for_least_squares(padding, monkeypatch):
    """At a refit, removing a unit raises the least-squares loss by exactly ``w_u^T H_u w_u / 2``: the same
    from the blocks stacked with padding (units of several sizes in one stack) as from one stack per size."""
    from sparse_estimators import _policy

    monkeypatch.setattr(_policy, "UNIT_PADDING", padding)
    rng = np.random.RandomState(4)
    X, y, labels = _decoy(4)
    X = X.copy()
    X[:, labels == 5] = 2.0  # (a constant group: its block is 0)
    weights = rng.uniform(0.5, 2.0, y.size)
    loss = SquaredLoss(X, y[:, None], sample_weight=weights)
    structure = Groups(Hard(), labels)
    search = _UnitSearch(loss, 4, structure, None, 5, 20, 0.25, 0.0, None)
    assert len(search.blocks) == (1 if padding else np.unique(np.bincount(labels)).size)
    units = np.array([0, 1, 2, 5, 9])
    W, b = loss.refit(structure.features(units), *loss.zeros())
    f = loss.value(W, b)
    cost = search.unit_cost(W, units)
    for unit, c in zip(units, cost, strict=True):
        W_out = W.copy()
        W_out[labels == unit] = 0.0
        assert c == pytest.approx(loss.value(W_out, b) - f, rel=1e-8, abs=1e-14)
    assert cost[3] == 0.0


def test_one_stack_of_blocks_needs_only_one_copy_of_the_columns():
    """The padded stack of unit blocks is formed whenever one copy of X's columns fits in ``max_bytes``.

    Here the padded (n, G, largest unit) array would not fit (the design's
    units have 2 to 5 features) but X does: one stack, whose blocks are
    ``X_u^T S X_u / sum(S)`` of the centred columns (computed here unit by
    unit), the identity at the padding; with less room, one stack per size
    with the same blocks.
    """
    from sparse_estimators.solvers._splice_groups import _unit_blocks

    rng = np.random.RandomState(5)
    X, y, labels = _decoy(5)
    weights = rng.uniform(0.5, 2.0, y.size)
    loss = SquaredLoss(X, y[:, None], sample_weight=weights)
    n, p = X.shape
    G, largest = labels.max() + 1, np.bincount(labels).max()
    assert 8 * n * p < 8 * n * G * largest
    Xc = X - np.average(X, axis=0, weights=weights)
    share = weights / weights.sum()
    for max_bytes, n_stacks in [(8 * n * p, 1), (8 * n * p - 1, np.unique(np.bincount(labels)).size)]:
        stacks = _unit_blocks(loss, labels, G, max_bytes=max_bytes)
        assert len(stacks) == n_stacks
        for units, members, H, _ in stacks:
            for unit, cols, block in zip(units, members, H, strict=True):
                real = cols < p
                np.testing.assert_array_equal(cols[real], np.flatnonzero(labels == unit))
                expected = (Xc[:, cols[real]] * share[:, None]).T @ Xc[:, cols[real]]
                np.testing.assert_allclose(block[np.ix_(real, real)], expected, rtol=1e-10, atol=1e-12)
                np.testing.assert_array_equal(block[~real][:, ~real], np.eye(int((~real).sum())))
                assert not block[np.ix_(real, ~real)].any()


def test_group_search_stops_logistic_candidate_refits_at_the_group_decrement(monkeypatch):
    """The group search's logistic candidates stop at UNIT_CANDIDATE_DECREMENT; the feature search keeps 1e-6.

    Counted on the one-output Newton loop: every candidate refit of a group
    fit is asked for the group level, those of a feature fit for none (the
    loss's own ``candidate_decrement``, 1e-6 for the logistic loss).
    """
    from sparse_estimators._policy import UNIT_CANDIDATE_DECREMENT
    from sparse_estimators.losses._logistic import LogisticLoss
    from sparse_estimators.losses._pointwise_newton import _PointwiseNewtonRefit

    seen = []
    newton = _PointwiseNewtonRefit._newton

    def recording(self, A, theta, k, max_iter, precise, fallback=None, decrement=None, **stop):
        if not precise and fallback is not None:  # (the candidates of refit_candidates)
            seen.append(decrement)
        return newton(self, A, theta, k, max_iter, precise, fallback=fallback, decrement=decrement, **stop)

    monkeypatch.setattr(_PointwiseNewtonRefit, "_newton", recording)
    X, y, labels = _decoy(0)
    y = (y > np.median(y)).astype(int)
    IHTClassifier(k=2, groups=labels, splicing=True).fit(X, y)
    assert seen and set(seen) == {UNIT_CANDIDATE_DECREMENT}
    assert UNIT_CANDIDATE_DECREMENT > LogisticLoss.candidate_decrement
    seen.clear()
    IHTClassifier(k=3, splicing=True).fit(X, y)
    assert seen and set(seen) == {None}


def test_candidate_decrement_stops_earlier_within_its_squared_level():
    """``refit_candidates(decrement=...)``: fewer pointwise evaluations, values within 1 % of the decrement.

    (The last full Newton step gains about half the decrement; what is left is
    of the order of its square, far below the group prices, about 0.05 here.)
    """
    from sparse_estimators.losses import LogisticLoss

    X, y, labels = _decoy(1)
    y = (y > np.median(y)).astype(int)
    loss = LogisticLoss(X, y)
    W, b = np.zeros((X.shape[1], 1)), loss.initial_intercept()
    supports = [np.flatnonzero(labels == g) for g in (0, 1, 2)]
    supports = [np.sort(np.concatenate([supports[0], s])) for s in supports[1:]]
    counts, values = {}, {}
    parts = loss._parts
    for level in (None, 1e-3):
        calls = []
        loss._parts = lambda z, calls=calls: calls.append(1) or parts(z)
        loss.__dict__.pop("_candidate_cache", None)
        refits = loss.refit_candidates(supports, W, b, decrement=level)
        values[level] = [r[2] for r in refits]
        counts[level] = len(calls)
    del loss._parts
    exact = [loss.value(*loss.refit(s, W, b)) for s in supports]
    assert counts[1e-3] < counts[None]
    assert np.all(np.abs(np.subtract(values[1e-3], exact)) <= 1e-5 * (1 + np.abs(exact)))
    assert np.all(np.abs(np.subtract(values[None], exact)) <= 1e-10 * (1 + np.abs(exact)))


def test_group_search_lone_logistic_start_refit_stops_at_the_group_decrement(monkeypatch):
    """The second search's start (one support) is refitted like the candidates: the group decrement, one pass.

    It used to be refitted alone (``refit_candidates`` without ``decrement``:
    the Newton loop from zero to the logistic loss's own 1e-6, the only
    candidate refit of a group fit that did); the value it reaches stays
    within the level of the test above.
    """
    from sparse_estimators._policy import UNIT_CANDIDATE_DECREMENT
    from sparse_estimators.losses import LogisticLoss

    calls = []
    candidates = LogisticLoss.refit_candidates

    def recording(self, supports, W, b, **options):
        calls.append((len(supports), options.get("decrement")))
        return candidates(self, supports, W, b, **options)

    monkeypatch.setattr(LogisticLoss, "refit_candidates", recording)
    rng = np.random.RandomState(1)  # (a data set whose second search starts from a support not yet visited)
    labels = np.repeat(np.arange(30), 4)
    X = rng.standard_normal((150, labels.size))
    beta = np.zeros(labels.size)
    beta[labels < 3] = rng.standard_normal(12)
    y = (X @ beta + rng.standard_normal(150) > 0).astype(int)
    IHTClassifier(k=3, groups=labels).fit(X, y)
    assert (1, UNIT_CANDIDATE_DECREMENT) in calls  # (the lone start ran, at the group level)
    assert {decrement for _, decrement in calls} == {UNIT_CANDIDATE_DECREMENT}

    loss = LogisticLoss(X, y)
    W, b = np.zeros((X.shape[1], 1)), loss.initial_intercept()
    support = np.sort(np.flatnonzero(labels <= 1))
    exact = loss.value(*loss.refit(support, W, b))
    f = loss.refit_candidates([support], W, b, decrement=1e-3)[0][2]
    assert abs(f - exact) <= 1e-5 * (1 + abs(exact))


@pytest.mark.parametrize("cls, plain, grouped", [(IHTRegressor, 1, 2), (IHTClassifier, 1, 1)])
def test_group_fits_jump_to_the_support_refit_after_two_unchanged_supports(cls, plain, grouped, monkeypatch):
    """The regressors' support jump waits 2 unchanged supports with groups, 1 without (classifiers: 1 both).

    (A cold group fit with the group search runs no solver, see
    ``_policy.GROUP_SEARCH_FROM_ZERO``: the solver runs here without the search.)
    """
    import functools

    from sparse_estimators.solvers import iht

    seen = []

    @functools.wraps(iht)
    def recording(*args, **kwargs):
        seen.append(kwargs.get("support_refit"))
        return iht(*args, **kwargs)

    monkeypatch.setattr(cls, "_solver", staticmethod(recording))
    X, y, labels = _decoy(0)
    if cls is IHTClassifier:
        y = (y > np.median(y)).astype(int)
    cls(k=2, groups=labels, splicing=False).fit(X, y)
    cls(k=2, splicing=False).fit(X, y)
    assert seen == [grouped, plain]


# -- a cold group fit runs the group search alone (_policy.GROUP_SEARCH_FROM_ZERO) --------------------------

@pytest.mark.parametrize("cls", [IHTRegressor, AcceleratedIHTRegressor, IHTClassifier])
def test_cold_group_fit_runs_the_search_alone(cls, monkeypatch):
    """No solver from zero with the group search; the solver runs from a warm start, without the search or off."""
    from sparse_estimators import _policy

    calls = recording_solver(cls, monkeypatch)
    X, signal, labels = _decoy(0)
    y = (signal > np.median(signal)).astype(int) if cls is IHTClassifier else signal
    splicing = {"splicing": True} if cls is IHTClassifier else {}
    cold = cls(k=2, groups=labels, **splicing).fit(X, y)
    assert calls == [] and cold.n_iter_ == 0 and cold.loss_curve_.size == 0
    assert cold.groups_support_.size == 2 and np.all(cold.coef_.ravel()[np.isin(labels, cold.groups_support_)] != 0)
    cls(k=2, groups=labels, splicing=False).fit(X, y)
    assert len(calls) == 1
    cls(k=2, groups=labels, **splicing).fit(X, y, coef_init=cold.coef_)  # (a warm start: the solver, then the search)
    assert len(calls) == 2 and calls[1].any()
    # (no groups: the solver as before, below _policy.SEARCH_FROM_ZERO_MIN_SAMPLES observations per selection)
    cls(k=2, **splicing).fit(X[:60], y[:60])
    assert len(calls) == 3
    monkeypatch.setattr(_policy, "GROUP_SEARCH_FROM_ZERO", False)
    cls(k=2, groups=labels, **splicing).fit(X, y)
    assert len(calls) == 4 and not calls[3].any()
    monkeypatch.setattr(_policy, "GROUP_SEARCH_FROM_ZERO", True)
    # (several outputs or classes, where it was not measured: the solver, then the search)
    target = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3])) if cls is IHTClassifier else np.c_[y, -y]
    assert cls(k=2, groups=labels, **splicing).fit(X, target).n_iter_ > 0 and len(calls) == 5
    if cls is not IHTClassifier:  # (the Poisson loss, where it was not measured either: the solver, then the search)
        counts = np.random.RandomState(0).poisson(np.exp(0.3 * signal / signal.std()))
        assert cls(k=2, groups=labels, loss="poisson").fit(X, counts).n_iter_ > 0 and len(calls) == 6




def test_cold_group_fit_does_not_take_a_group_that_fits_any_rows():
    """The search from zero prices the 50-feature group (20 rows) out; the solver's start took it (test R^2 -1).

    From zero the 50-feature group explains all of ``y`` (its gain is the
    loss itself), but its price, the best of 11 noise groups of 50
    coefficients, is larger; feature 50 alone explains 94 % of it.
    """
    X, y, X_test, y_test, groups = one_large_group()
    model = IHTRegressor(k=1, groups=groups).fit(X, y)
    np.testing.assert_array_equal(model.support_, [50])
    assert model.score(X_test, y_test) > 0.8
    stuck = IHTRegressor(k=1, groups=groups, splicing=False).fit(X, y)  # (the design: the solver takes group 0)
    assert stuck.groups_support_.tolist() == [0] and stuck.score(X_test, y_test) < 0


def test_cold_group_fit_keeps_forced_groups():
    X, y, labels = _decoy(1)
    for k in (3, 4):
        model = IHTRegressor(k=k, groups=labels, always_select=[7, 5]).fit(X, y)
        assert model.n_iter_ == 0 and model.groups_support_.size == k
        assert {5, 7} <= set(model.groups_support_.tolist())
        assert np.all(model.coef_[np.isin(labels, [5, 7])] != 0)
    np.testing.assert_array_equal(model.groups_support_, [0, 1, 5, 7])  # (k=4: both true groups and the forced)


# -- the logistic group search stops candidate refits that cannot pass (rejects_candidates) ----------------

def test_group_logistic_search_rejects_candidates_without_changing_results(monkeypatch):
    """Candidate refits stop once they cannot pass the gate; each fit is the one without the stops."""
    from sparse_estimators.losses import _pointwise_newton
    from sparse_estimators.losses._logistic import LogisticLoss

    newton = _pointwise_newton._PointwiseNewtonRefit._newton
    stops = []

    def counting(self, *args, **kwargs):
        out = newton(self, *args, **kwargs)
        stops.append(out[0] is None)
        return out

    monkeypatch.setattr(_pointwise_newton._PointwiseNewtonRefit, "_newton", counting)
    fits = {}
    for rejects in (True, False):
        monkeypatch.setattr(LogisticLoss, "rejects_candidates", rejects)
        stops.clear()
        fits[rejects] = []
        for seed in range(4):
            X, y, labels = _decoy(seed, decoy_noise=1.0)
            y = (y + 0.5 * np.random.RandomState(seed).standard_normal(y.size) > 0).astype(int)
            model = IHTClassifier(k=2, groups=labels, splicing=True).fit(X, y)
            fits[rejects].append((model.coef_.copy(), model.intercept_.copy(), model.n_exchanges_))
        if rejects:
            assert sum(stops) >= 3  # (the design: some candidates are stopped)
        else:
            assert not any(stops)
    for (c1, b1, n1), (c2, b2, n2) in zip(fits[True], fits[False], strict=True):
        np.testing.assert_array_equal(c1, c2)
        np.testing.assert_array_equal(b1, b2)
        assert n1 == n2


def test_splice_from_zero_with_groups_searches_the_second_start():
    """``splice`` with groups and ``W = 0``: the search from the groups of largest gain, not the empty support."""
    X, y, labels = _decoy(0)
    loss = SquaredLoss(X, y[:, None])
    W0, _ = loss.zeros()
    result = splice(loss, 2, W0, loss.initial_intercept(), structure=Groups(Hard(), labels), max_exchange=2)
    np.testing.assert_array_equal(result.support, np.flatnonzero(labels <= 1))  # (the two true groups)
    refit = loss.refit(result.support, W0, loss.initial_intercept())[0]
    np.testing.assert_allclose(result.coef, refit, rtol=1e-10, atol=1e-12)
