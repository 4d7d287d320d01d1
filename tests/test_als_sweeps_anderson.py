"""The exact sweeps with Anderson's mixing (a given rank's final fit) reach the fixed point of the plain sweeps."""

import numpy as np
import pytest

from sparse_estimators.impute import _als
from sparse_estimators.impute._factored import _column_sums, _Observed


def _plain_ridge_als(X, mask, U, V, alpha, sweeps):
    """Alternating ridge regressions written out (each column's loadings and offset, then each row's scores)."""
    m, n = X.shape
    W = mask.astype(float)
    A = np.where(mask, X, 0.0)
    r = U.shape[1]
    penalty = np.diag(np.r_[np.full(r, alpha), 0.0])  # (no ridge on the offsets)
    for _ in range(sweeps):
        B = np.hstack([U, np.ones((m, 1))])
        grams = np.einsum("ij,ia,ib->jab", W, B, B) + penalty
        Z = np.linalg.solve(grams, (A.T @ B)[:, :, None])[:, :, 0]
        V, mu = Z[:, :r], Z[:, r]
        grams = np.einsum("ij,ja,jb->iab", W, V, V) + alpha * np.eye(r)
        U = np.linalg.solve(grams, (((A - mu) * W) @ V)[:, :, None])[:, :, 0]
    return U @ V.T + mu


@pytest.fixture(scope="module")
def slow_problem():
    """A rank-2 table plus noise, fit at rank 6 of 8 columns with a small ridge (the plain sweeps contract slowly);
    a start, and the plain sweeps' limit from it (5000 sweeps: within 1e-8 of 20000's)."""
    rng = np.random.default_rng(0)
    m, n, r, alpha = 40, 8, 6, 0.05
    X = rng.standard_normal((m, 2)) @ rng.standard_normal((2, n)) + rng.uniform(-3, 3, n)
    X += 0.3 * rng.standard_normal(X.shape)
    mask = rng.uniform(size=X.shape) < 0.75
    U0, V0 = rng.standard_normal((m, r)), rng.standard_normal((n, r))
    return X, mask, U0, V0, alpha, _plain_ridge_als(X, mask, U0, V0, alpha, 5000)


@pytest.mark.parametrize("dense", [True, False])
def test_accelerated_sweeps_reach_the_plain_sweeps_fixed_point(slow_problem, dense):
    X, mask, U0, V0, alpha, reference = slow_problem
    n = X.shape[1]
    rows, cols = np.nonzero(mask)
    obs = _Observed(rows, cols, X[rows, cols], X.shape)
    counts = _column_sums(cols, n)
    sweep = (_als._DenseSweep if dense else _als._SparseSweep)(obs, _column_sums(cols, n, X[rows, cols]),
                                                               1.0 / counts, True)
    res = sweep.residual(U0, V0, np.zeros(n), sweep.buffers[0])
    U, V, mu, objectives, converged = _als._exact_sweeps(obs, sweep, U0, V0, np.zeros(n), res, alpha, True, 1e-10,
                                                         3000, accelerate=True)
    assert converged
    assert np.all(np.diff(objectives) <= 1e-12 * abs(objectives[0]))  # (a mixed point is kept only if lower)
    assert np.abs((U @ V.T + mu - reference) / X.std(axis=0)).max() < 1e-6
    # the plain sweeps (accelerate=False) from the same start are far from it after as many sweeps
    res = sweep.residual(U0, V0, np.zeros(n), sweep.buffers[0])
    plain = _als._exact_sweeps(obs, sweep, U0, V0, np.zeros(n), res, alpha, True, 0.0, len(objectives))
    assert np.abs((plain[0] @ plain[1].T + plain[2] - reference) / X.std(axis=0)).max() > 1e-4
