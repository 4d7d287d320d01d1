"""abess's search of the splicing on lazily formed Gram columns (least squares at small n)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sparse_estimators._policy import MAX_ROWS
from sparse_estimators.losses import SquaredLoss
from sparse_estimators.losses._base import BaseLoss
from sparse_estimators.losses._squared import _cholesky_solve
from sparse_estimators.losses._squared_search import LazyGramSquaredLoss
from sparse_estimators.solvers._splice import _forward_gain, _top
from sparse_estimators.solvers._splice_abess import _abess_search_stays, _abess_threshold, _important_search


def _design(n, p, s, rho, seed, outputs=1):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    for j in range(1, p):  # AR(1) columns
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * X[:, j]
    B = np.zeros((p, outputs))
    B[np.linspace(0, p - 1, s).astype(int)] = rng.uniform(0.5, 1.5, (s, outputs))
    Y = X @ B + rng.standard_normal((n, outputs))
    return X + 3.0, Y[:, 0] if outputs == 1 else Y  # (means away from 0: the implicit centring matters)


def _search(loss, k):
    W0, b0 = loss.zeros()
    h = loss.coordinate_curvatures()
    start = np.sort(_top(_forward_gain(loss, loss.linear_predictor(W0, b0), W0, h, h > 0), k))
    return _important_search(loss, k, start, W0, b0, h, h > 0, 5, 20)


@pytest.mark.parametrize("case", ["plain", "weights", "float32", "no_intercept", "two_outputs"])
def test_gram_search_ends_where_the_column_search_does(case, monkeypatch):
    # the rounds on Gram columns take the same decisions as those on the columns (the reference: the
    # restriction to a copy of U's columns): the same supports, exchanges and values to rounding
    moved = 0
    for seed, (n, p, k, rho) in enumerate([(100, 1000, 10, 0.35), (80, 400, 8, 0.7), (200, 600, 5, 0.0),
                                            (150, 500, 12, 0.5), (60, 300, 5, 0.35), (120, 800, 10, 0.0)]):
        X, y = _design(n, p, k, rho, seed, outputs=2 if case == "two_outputs" else 1)
        weights = np.random.RandomState(seed).uniform(0.5, 2.0, n) if case == "weights" else None
        X = X.astype(np.float32) if case == "float32" else X
        loss = SquaredLoss(X, y, sample_weight=weights, fit_intercept=case != "no_intercept")
        assert isinstance(loss.search_restriction(np.arange(k + 128)), LazyGramSquaredLoss)
        ours = _search(loss, k)
        monkeypatch.setattr(SquaredLoss, "search_restriction", BaseLoss.search_restriction)
        reference = _search(loss, k)
        monkeypatch.undo()
        np.testing.assert_array_equal(ours.support, reference.support)
        assert ours.n_iter == reference.n_iter
        np.testing.assert_allclose(ours.objective, reference.objective, rtol=1e-9)
        np.testing.assert_allclose(ours.coef, reference.coef, rtol=1e-7, atol=1e-9)
        moved += ours.n_iter > 0
    assert moved >= 3  # (the searches exchanged: the rounds were exercised, not only the start's refit)


def test_gram_columns_give_the_gradient_and_refits_of_the_columns():
    X, y = _design(90, 300, 6, 0.5, 0)
    weights = np.random.RandomState(1).uniform(0.5, 2.0, 90)
    loss = SquaredLoss(X, y, sample_weight=weights)
    U = np.sort(np.random.RandomState(2).choice(300, 40, replace=False))
    lazy, columns = loss.search_restriction(U), loss.restrict(U)
    support = np.array([1, 4, 9, 17, 30])
    coef, value = lazy.refit_support(support)
    assert lazy._n_known == support.size  # only the support's Gram block was formed
    W, b = columns.refit(support, *columns.zeros())
    np.testing.assert_allclose(coef, W[support], rtol=1e-10)
    np.testing.assert_allclose(value, columns.value(W, b), rtol=1e-10)
    gradient = columns.gradient_from_z(columns.linear_predictor(W, b), W)[0]
    np.testing.assert_allclose(lazy.gradient_on(support, coef), gradient, rtol=1e-8, atol=1e-12)
    # the methods of GramSquaredLoss read the whole Gram matrix, formed when first asked for
    np.testing.assert_allclose(lazy.hessian(), columns.hessian(), rtol=1e-10, atol=1e-12)
    W_g, _ = lazy.refit(support, *lazy.zeros())
    np.testing.assert_allclose(W_g, W, rtol=1e-9, atol=1e-12)


def test_nearly_collinear_support_is_refitted_on_its_columns():
    X, y = _design(70, 200, 5, 0.0, 3)
    X[:, 11] = X[:, 10]  # an exact duplicate: the Cholesky test refuses the Gram block
    loss = SquaredLoss(X, y)
    lazy = loss.search_restriction(np.arange(140))
    support = np.array([2, 10, 11, 50])
    coef, value = lazy.refit_support(support)
    W, b = loss.refit(support, *loss.zeros())  # least squares on the columns (minimum norm)
    np.testing.assert_allclose(coef, W[support], rtol=1e-8, atol=1e-10)
    assert coef[1, 0] == pytest.approx(coef[2, 0])  # the two copies share the effect (minimum norm)
    np.testing.assert_allclose(value, loss.value(W, b), rtol=1e-10)


def test_gram_search_only_where_it_pays():
    X, y = _design(MAX_ROWS + 1, 300, 5, 0.0, 4)
    U = np.arange(140)
    assert isinstance(SquaredLoss(X[:MAX_ROWS], y[:MAX_ROWS]).search_restriction(U), LazyGramSquaredLoss)
    assert not isinstance(SquaredLoss(X, y).search_restriction(U), LazyGramSquaredLoss)  # more rows
    small = SquaredLoss(sp.csr_matrix(X[:100]), y[:100])
    assert not isinstance(small.search_restriction(U), LazyGramSquaredLoss)  # sparse X
    positive = SquaredLoss(X[:100], y[:100])
    positive.positive = True
    assert not isinstance(positive.search_restriction(U), LazyGramSquaredLoss)  # NNLS refits


def test_a_restriction_reuses_the_arrays_of_the_previous_one():
    X, y = _design(80, 300, 5, 0.35, 5)
    loss = SquaredLoss(X, y)
    rng = np.random.RandomState(6)
    U1, U2 = (np.sort(rng.choice(300, 50, replace=False)) for _ in range(2))
    first = loss.search_restriction(U1)
    first.refit_support(np.array([0, 3, 7]))
    fresh = loss.search_restriction(U2)
    second = loss.search_restriction(U2, previous=first)
    assert second._A is first._A and second._block is first._block  # (no new arrays)
    assert first._block.shape == (32, 32)  # (the block grows with the columns touched, not |U|)
    assert second._n_known == 0  # the previous set's products are not taken for this one's
    assert second._slot is first._slot and (second._slot == -1).all()  # (its slots reset, none known)
    for name in ("sample_weight", "sw_sum", "n_observations", "n_positive", "uniform_weights"):  # (the loss's)
        assert np.array_equal(getattr(second, name), getattr(fresh, name)) and getattr(fresh, name) is not None
    support = np.array([0, 3, 7, 20])
    second.refit_support(np.arange(40))  # (more columns than the block held: it grows)
    fresh.refit_support(np.arange(40))
    assert second._block.shape == (50, 50)
    coef, value = second.refit_support(support)
    coef_fresh, value_fresh = fresh.refit_support(support)
    np.testing.assert_array_equal(coef, coef_fresh)
    assert value == value_fresh
    np.testing.assert_array_equal(second.gradient_on(support, coef), fresh.gradient_on(support, coef_fresh))


class _GatheringReference(LazyGramSquaredLoss):
    """The Gram block and refits as first written: every touch gathers the known columns again, fancy-indexed."""

    def _touch(self, columns):
        m0, m1 = self._n_known, self._n_known + columns.size
        if m1 > self._block.shape[0]:
            block = np.empty((min(self.n_features, max(2 * self._block.shape[0], m1)),) * 2)
            block[:m0, :m0] = self._block[:m0, :m0]
            self._block = block
        self._known[m0:m1] = columns
        self._slot[columns] = np.arange(m0, m1)
        cross = self._product(self._A[:, self._known[:m1]], self._A[:, columns])
        self._block[:m1, m0:m1] = cross
        self._block[m0:m1, :m0] = cross[:m0].T
        self._n_known = m1

    def refit_support(self, support):
        slots = self._slot[support]
        if (slots < 0).any():
            self._touch(support[slots < 0])
            slots = self._slot[support]
        G = self._block[slots[:, None], slots]
        C = self.C[support]
        coef = _cholesky_solve(G, C, 1e-8, np.maximum.reduce(G.diagonal()))
        assert coef is not None  # (the designs below are well conditioned: the fallback is not compared here)
        return coef, max(0.5 * (self.yy - float(np.vdot(C, coef))), 0.0)


@pytest.mark.parametrize("case", ["plain", "weights", "float32", "two_outputs"])
def test_gram_block_and_refits_equal_the_gathering_formula_bit_for_bit(case):
    # the known columns kept in slot order (no new gather at each touch) and np.take's gathers of the block give
    # the very numbers of the fancy-indexed gathers: products of arrays with the same values and strides
    for seed, (n, p, q) in enumerate([(100, 1000, 138), (400, 400, 148), (60, 300, 70)]):
        X, y = _design(n, p, 5, 0.35, seed, outputs=2 if case == "two_outputs" else 1)
        weights = np.random.RandomState(seed).uniform(0.5, 2.0, n) if case == "weights" else None
        X = X.astype(np.float32) if case == "float32" else X
        loss = SquaredLoss(X, y, sample_weight=weights)
        rng = np.random.RandomState(seed + 10)
        ours = reference = None
        for _ in range(3):  # successive sets U, each restriction reusing the previous one's arrays
            U = np.sort(rng.choice(p, q, replace=False))
            ours = loss.search_restriction(U, previous=ours)
            reference = _GatheringReference(loss, U, previous=reference)
            for size in (5, 8, 3, 12, 20, 9):  # (past the block's first 32 columns: it grows)
                support = np.sort(rng.choice(q, size, replace=False))
                coef, value = ours.refit_support(support)
                coef_ref, value_ref = reference.refit_support(support)
                assert np.array_equal(coef, coef_ref) and value == value_ref
            m = ours._n_known
            assert m > 32 and m == reference._n_known
            np.testing.assert_array_equal(ours._known[:m], reference._known[:m])
            assert np.array_equal(ours._block[:m, :m], reference._block[:m, :m])


def test_important_search_equals_the_gathering_formula_bit_for_bit(monkeypatch):
    # whole searches (several sets U, exchanges, unusable constant columns) on the new and the first Gram block
    moved = 0
    for seed, (n, p, k, rho) in enumerate([(100, 1000, 10, 0.35), (80, 400, 8, 0.7), (200, 600, 5, 0.0),
                                            (400, 400, 20, 0.35), (60, 300, 5, 0.35)]):
        X, y = _design(n, p, k, rho, seed)
        X[:, 7] = 1.5  # (a constant column: unusable)
        loss = SquaredLoss(X, y)
        ours = _search(loss, k)
        monkeypatch.setattr(SquaredLoss, "search_restriction",
                            lambda self, support, previous=None: _GatheringReference(self, np.asarray(support),
                                                                                     previous))
        reference = _search(loss, k)
        monkeypatch.undo()
        np.testing.assert_array_equal(ours.support, reference.support)
        assert np.array_equal(ours.coef, reference.coef) and ours.objective == reference.objective
        moved += ours.n_iter > 0
    assert moved >= 2


def test_search_stays_from_the_set_equals_from_its_gains():
    # the important search asks whether the first search settles it at the current support with the set U
    # itself (U=); it gave U as gains (+inf on U, -inf elsewhere) before: the same answer on random rounds
    X, y = _design(50, 60, 4, 0.0, 7)
    loss = SquaredLoss(X, y)
    rng = np.random.RandomState(8)
    answers = set()
    for trial in range(400):
        k, important = rng.randint(2, 8), (3, 10, 100)[trial % 3]  # (100: U holds every feature)
        U = np.sort(rng.choice(60, min(60, k + important), replace=False))
        support = np.sort(rng.choice(U, k, replace=False))
        usable = rng.uniform(size=60) > 0.1
        tau = _abess_threshold(loss, k)
        outside = np.setdiff1d(np.arange(60), support)
        adds = rng.choice(outside, 5, replace=False)
        adds[: rng.randint(0, 6)] = rng.choice(np.setdiff1d(U, support), 5)[:1]  # (mostly in U)
        decreases = {c: tau * rng.uniform(0.0, 1.2) for c in range(1, 6) if rng.uniform() < 0.8}
        screened = {c: tau * rng.uniform(0.8, 1.5) for c in range(1, 6) if c not in decreases}
        last = (rng.permutation(support), adds, decreases, screened)
        gains = np.full(60, -np.inf)
        gains[U] = np.inf
        by_gains = _abess_search_stays(loss, k, support, support, last, gains, usable, 5, important, every_size=True)
        by_set = _abess_search_stays(loss, k, support, support, last, None, usable, 5, important, every_size=True,
                                     U=U)
        assert by_set == by_gains
        answers.add(by_set)
    assert answers == {True, False}
