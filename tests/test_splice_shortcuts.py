"""The splicing searches' cheaper computations give what the direct ones give, bit for bit.

The call overhead of the searches and their candidate refits was cut
(doc/changelog.rst, "Splicing searches, call overhead", and the per-row
squares of one column without einsum). Each test here
recomputes such a quantity the direct way (every Cholesky pivot tested, the
supports sorted by ``np.sort``, the candidates read by index) and compares.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.linalg import lapack

from sparse_estimators._utils import concatenate, row_squares, vdot, where
from sparse_estimators.losses import SquaredLoss
from sparse_estimators.losses._pointwise_newton import _fortran, _Lazy
from sparse_estimators.losses._squared import _batched_normal_equations, _cholesky_solve
from sparse_estimators.solvers._splice import _sorted_union, _swaps


def _explicit_solve(G, rhs, rtol, scale):
    """Cholesky with every squared pivot above ``rtol * scale`` (the test before the least pivot stood for all)."""
    L, x, info = lapack.dposv(G, rhs, lower=1)
    return x if info == 0 and bool((L.diagonal() ** 2 > rtol * scale).all()) else None


def _near_collinear(gap, k=4, seed=0):
    # the last column is the first plus sqrt(gap) times a new direction: its pivot squared is about gap times
    # the first's diagonal entry
    rng = np.random.RandomState(seed)
    A = rng.standard_normal((50, k))
    A[:, -1] = A[:, 0] + np.sqrt(gap) * rng.standard_normal(50)
    return A.T @ A, rng.standard_normal((k, 1))


def test_least_pivot_test_decides_as_every_pivot_test():
    outcomes = set()
    for gap in (1e-6, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 1e-10, 0.0):
        G, rhs = _near_collinear(gap)
        scale = np.maximum.reduce(G.diagonal())
        for rtol in (1e-8, 1e-10, 3e-9):
            expected = _explicit_solve(G, rhs, rtol, scale)
            got = _cholesky_solve(G, rhs, rtol, scale)
            assert (got is None) == (expected is None)
            if expected is not None:
                assert_array_equal(got, expected)
            outcomes.add(got is None)
    assert outcomes == {True, False}  # (both sides of the boundary were tested)


def test_batched_solves_decide_as_each_system_tested_alone():
    systems = [_near_collinear(gap, seed=seed) for seed, gap in enumerate([1e-3, 1e-2, 1e-1])]
    G = np.array([s[0] for s in systems])
    rhs = np.array([s[1] for s in systems])
    out = _batched_normal_equations(G, rhs)
    for c in range(len(systems)):
        assert_array_equal(out[c], _explicit_solve(G[c], rhs[c], 1e-8, G[c].diagonal().max()))
    # one nearly collinear system (below 1e-8 of its largest diagonal entry) refuses the batch
    bad, bad_rhs = _near_collinear(1e-12, seed=5)
    assert _explicit_solve(bad, bad_rhs, 1e-8, bad.diagonal().max()) is None
    assert _batched_normal_equations(np.array([G[0], bad, G[1]]), np.array([rhs[0], bad_rhs, rhs[1]])) is None


def test_swapped_supports_are_the_sorted_concatenations():
    kept = np.array([40, 3, 17, 8, 25, 11])  # (least useful first: not sorted)
    adds = np.array([30, 1, 19, 50])
    supports = _swaps(kept, adds, range(1, 5))
    for c, support in zip(range(1, 5), supports, strict=True):
        expected = np.sort(np.concatenate([kept[c:], adds[:c]]))
        assert_array_equal(support, expected)
        assert support.dtype == expected.dtype
    assert_array_equal(_sorted_union(kept[1:], adds[1:2]), [1, 3, 8, 11, 17, 25])


def test_lazy_candidates_iterate_as_indexed_each_computed_once():
    calls = []

    def f(x):
        calls.append(x)
        return 10 * x

    lazy = _Lazy(f, [3, 1, 2])
    assert lazy[1] == 10
    assert list(lazy) == [30, 10, 20] == [lazy[i] for i in range(len(lazy))]
    assert calls == [1, 3, 2]  # (the item read first is not computed again by the iteration)
    partial = _Lazy(f, [4, 5, 6])
    for value in partial:  # a search that stops at the first accepted candidate computes no more
        if value == 40:
            break
    assert calls[-1] == 4 and len(calls) == 4


@pytest.mark.parametrize("m", [1, 3])
def test_row_squares_equal_the_einsum_form(m):
    # one column: its squares (einsum's sum of one product), signed zeros, infinities and tiny values included
    rng = np.random.RandomState(2)
    A = rng.standard_normal((200, m)) * 10.0 ** rng.randint(-160, 160, (200, m))
    A[[3, 8]] = -0.0
    A[5] = np.inf
    A[6] = -1e-310
    with np.errstate(over="ignore"):  # (the huge entries' squares are infinite in both forms)
        assert row_squares(A).tobytes() == np.einsum("ij,ij->i", A, A).tobytes()
        rows = A[::3]  # (a strided view, as the rows of a support)
        assert row_squares(rows).tobytes() == np.einsum("ij,ij->i", rows, rows).tobytes()


@pytest.mark.parametrize("m", [1, 2])
def test_candidate_values_equal_the_einsum_form(m):
    # refit_candidates' per-candidate squares with one output (the squares themselves) give einsum's values
    rng = np.random.RandomState(3)
    X = rng.standard_normal((60, 12)) + 0.3
    Y = X[:, [1, 4]] @ rng.standard_normal((2, m)) + 0.1 * rng.standard_normal((60, m))
    loss = SquaredLoss(X, Y if m > 1 else Y[:, 0])
    W, b = loss.zeros()
    supports = [np.array([1, 4, 7]), np.array([1, 2, 4]), np.array([0, 4, 9])]
    got = loss.refit_candidates(supports, W, b)
    for (W_c, _, f_c, Z_c), support in zip(got, supports, strict=True):
        R = loss.Y - Z_c
        assert f_c == 0.5 * float(np.add.reduce(np.einsum("nm,nm->n", R, R)) / R.shape[0])
        assert_array_equal(np.flatnonzero(W_c.any(axis=1)), support)



def test_undispatched_functions_equal_numpys():
    # _utils' vdot, concatenate and where skip NumPy's __array_function__ dispatch: the same results
    rng = np.random.RandomState(4)
    W, V = rng.standard_normal((50, 1)), rng.standard_normal((50, 1))
    V[::7] = -0.0
    assert vdot(W, V) == np.vdot(W, V) and vdot(W, W) == np.vdot(W, W)
    a, b = np.array([7, 2, 9]), np.array([4, 1])
    assert_array_equal(concatenate((a, b)), [7, 2, 9, 4, 1])
    assert concatenate((a, b)).dtype == np.concatenate((a, b)).dtype
    mask = W[:, 0] > 0
    assert where(mask, V[:, 0], -np.inf).tobytes() == np.where(mask, V[:, 0], -np.inf).tobytes()
    with pytest.raises(ValueError):  # (mismatched shapes are still refused)
        vdot(W, V[:10])


def test_fortran_copy_of_the_refit_block():
    # the Hessian's operand: the same values in Fortran order, a C-ordered block copied, a Fortran one as it is
    rng = np.random.RandomState(5)
    A = rng.standard_normal((30, 4))
    F = _fortran(A)
    assert F.flags.f_contiguous and F is not A
    assert_array_equal(F, A)
    assert _fortran(F) is F
    w = rng.random(30)
    assert_array_equal(F.T * w, A.T * w)  # (the weighted rows: elementwise, the same products)
