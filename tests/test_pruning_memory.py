"""Layer pruning without redundant copies of its inputs or Hessian.

Peaks are measured with ``tracemalloc`` (NumPy's buffers are traced), from
the call's start to its end: each bound is one the copying versions exceeded
(a copy of ``|X|`` in the scale check; ``H[...] + lambda I`` next to the
gathered blocks of I-OBS's correction). The Hessian ``H = X^T X / n`` of
'iobs' is formed once: the loss takes the array the sweep and the refits use.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from sparse_estimators import _policy
from sparse_estimators._utils import power_of_two_scale
from sparse_estimators.losses import LinearDesign
from sparse_estimators.pruning import prune_layer
from sparse_estimators.solvers._iobs_curvature import _LeastSquaresCurvature


def _peak(function, *args, **kwargs):
    """The largest memory traced during ``function(*args, **kwargs)`` above what was traced at its start."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        function(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("values", [
    [1.0, -3.0, 2.0], [-1e-200, 5e-201], [3e200, -1e250], [-0.0, 0.0], [5e-324, -1e-310], [1.0, np.nan, -1e300],
    [np.inf, 1.0], [1e30, -np.inf], [-2.0 ** 30, 2.0 ** 29],
])
def test_power_of_two_scale_is_that_of_the_largest_magnitude(values):
    """The scale of ``max |x|`` by its definition (the power of two bringing it into [0.5, 1), 1 in range)."""
    x = np.array(values)
    top = np.abs(x).max()
    expected = (1.0 if top == 0 or not np.isfinite(top) or 2.0 ** -20 <= top <= 2.0 ** 20
                else float(np.ldexp(1.0, min(-int(np.frexp(top)[1]), 1023))))
    assert power_of_two_scale(x) == expected
    assert power_of_two_scale(np.array([1.0]), x) == power_of_two_scale(x, np.array([1.0]))


def test_power_of_two_scale_of_float32_and_integers():
    x = np.array([3e-30, -1e-29], dtype=np.float32)
    assert power_of_two_scale(x) == float(np.ldexp(1.0, -int(np.frexp(float(np.float32(1e-29)))[1])))
    assert power_of_two_scale(np.array([-(2 ** 40), 3])) == 2.0 ** -41
    assert power_of_two_scale(np.array([True, False])) == 1.0


def test_power_of_two_scale_makes_no_copy():
    """8 MB of data: the two reductions allocate nothing of its size (``np.abs(X)`` did, 8 MB)."""
    X = np.random.default_rng(0).normal(size=(1024, 1024)) * 1e-30
    assert power_of_two_scale(X) == 2.0 ** 97  # (1e-30 * 5.x < 2^-96: the largest magnitude in [2^-97, 2^-96))
    assert _peak(power_of_two_scale, X) < X.nbytes / 8


@pytest.mark.parametrize("method", ["wanda", "magnitude"])
def test_wanda_and_magnitude_hold_no_copy_of_x(method):
    """A tall ``X`` (8 MB) and a small ``W``: the peak stays far below ``X``'s size."""
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(4096, 256)), rng.normal(size=(8, 256))
    W_hat = prune_layer(W, X, 0.5, method=method)
    scores = np.abs(W) * (np.linalg.norm(X, axis=0) if method == "wanda" else 1.0)
    kept = np.argsort(-scores, axis=1, kind="stable")[:, :128]
    assert np.array_equal(np.sort(np.flatnonzero(W_hat[0])), np.sort(kept[0]))
    assert _peak(prune_layer, W, X, 0.5, method=method) < X.nbytes / 8


@pytest.mark.parametrize("sparse", [False, True])
def test_iobs_forms_the_layer_hessian_once(sparse, monkeypatch):
    """The loss of 'iobs' takes the ``H`` of the sweep: the design's Gram matrix (a second ``X^T X``) is never formed.

    The result is that of the same problem solved with the Gram matrix formed again (the previous code).
    """
    rng = np.random.default_rng(1)
    X = np.maximum(rng.normal(size=(300, 24)) @ rng.normal(size=(24, 24)), 0.0)
    X = sp.csr_matrix(X) if sparse else X
    W = rng.normal(size=(10, 24))
    expected = prune_layer(W, X, 0.5, method="iobs")

    def refuse(*args, **kwargs):
        raise AssertionError("the layer's Hessian was formed a second time")

    monkeypatch.setattr(LinearDesign, "weighted_gram", refuse)
    W_hat = prune_layer(W, X, 0.5, method="iobs")
    assert np.array_equal(W_hat != 0, expected != 0)
    np.testing.assert_allclose(W_hat, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("chunk_rows", [None, 16])
def test_iobs_correction_holds_one_block_array(chunk_rows, monkeypatch):
    """I-OBS's per-output correction: ``(H_QQ + lambda I)^{-1} r`` per output, with one array of a chunk's blocks.

    The values against a direct solve per output; the peak below 1.5 times one chunk of gathered blocks
    (adding ``lambda I`` in a new array made it twice, and so did holding the previous chunk's blocks
    while gathering the next). ``chunk_rows``: outputs per chunk (None: all 64 in one).
    """
    rng = np.random.default_rng(2)
    p, m, k = 256, 64, 128
    A = rng.normal(size=(2 * p, p))
    H = A.T @ A / (2 * p)
    Q = np.sort(np.array([rng.choice(p, k, replace=False) for _ in range(m)]), axis=1)
    R = rng.normal(size=(p, m))
    if chunk_rows is not None:
        monkeypatch.setattr(_policy, "PER_OUTPUT_BLOCK_ENTRIES", chunk_rows * k * k)
    curvature = object.__new__(_LeastSquaresCurvature)
    curvature.H, curvature.lam = H, 0.01 * float(np.mean(np.diag(H)))
    out = curvature._correct_per_output(Q, R)
    for j in (0, 17, m - 1):
        q = Q[j]
        direct = np.linalg.solve(H[np.ix_(q, q)] + curvature.lam * np.eye(k), R[q, j])
        np.testing.assert_allclose(out[j], direct, rtol=1e-10, atol=1e-12)
    blocks = (chunk_rows or m) * k * k * 8
    assert _peak(curvature._correct_per_output, Q, R) < 1.5 * blocks


def test_iobs_correction_solves_only_the_outputs_whose_support_changed(monkeypatch):
    """The halvings of an iteration share ``R``: a second call with 5 of 40 supports changed solves 5 blocks.

    Every output's values against a direct solve; a new ``R`` (equal values, another iteration's array)
    solves them all again.
    """
    rng = np.random.default_rng(3)
    p, m, k = 60, 40, 20
    A = rng.normal(size=(2 * p, p))
    H = A.T @ A / (2 * p)
    Q1 = np.sort(np.array([rng.choice(p, k, replace=False) for _ in range(m)]), axis=1)
    Q2 = Q1.copy()
    for j in range(0, m, 8):  # (outputs 0, 8, ..., 32: another support)
        Q2[j] = np.sort(rng.choice(p, k, replace=False))
    R = rng.normal(size=(p, m))
    curvature = object.__new__(_LeastSquaresCurvature)
    curvature.H, curvature.lam = H, 0.05
    solved = []
    solve = np.linalg.solve

    def counting(a, b):
        solved.append(a.shape[0])
        return solve(a, b)

    monkeypatch.setattr(np.linalg, "solve", counting)
    for Q, rhs, expected_solves in ((Q1, R, m), (Q2, R, 5), (Q2, R.copy(), m)):
        solved.clear()
        out = curvature._correct_per_output(Q, rhs)
        assert sum(solved) == expected_solves
        for j in range(m):
            direct = solve(H[np.ix_(Q[j], Q[j])] + 0.05 * np.eye(k), rhs[Q[j], j])
            np.testing.assert_allclose(out[j], direct, rtol=1e-10, atol=1e-12)
