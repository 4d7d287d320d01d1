"""The exact sweeps with Anderson's mixing (a given rank's final fit) reach the fixed point of the plain sweeps."""

import numpy as np
import pytest

from sparse_estimators.impute import LowRankImputer, _als
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


def _rank5_table(m, n, share, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 5)) @ rng.standard_normal((5, n)) + rng.uniform(-5, 5, n)
    X += 0.1 * rng.standard_normal(X.shape)
    return X, rng.uniform(size=X.shape) < share


def test_mixed_validation_sweeps_reach_the_plain_sweeps_fixed_point():
    # a rank-3 fit without a ridge of a noisy rank-5 table, 15 % observed: the rank rule's validation fits (the
    # sweeps stopped at _policy.ALS_FINISH_SWEEPS) contract slowly there
    X, mask = _rank5_table(300, 150, 0.15, 0)
    rows, cols = np.nonzero(mask)
    obs = _Observed(rows, cols, X[rows, cols], X.shape)

    def fit(**kwargs):
        return _als._solve_als(obs, 3, 0.0, kwargs.pop("max_iter", 500), kwargs.pop("tol", 1e-3),
                               np.random.RandomState(0), 0, 1.0, True, finish=True, **kwargs)[0]

    # the plain sweeps' limit: the same sweeps to a relative change of 1e-9 (thousands of them)
    limit = fit(tol=1e-9, max_iter=20000, warn=True)
    assert limit.converged
    plain, mixed = fit(warn=False), fit(warn=False, mix=True)
    spread = X.std()
    assert not plain.converged  # (stopped at the cap, far from the limit)
    assert np.abs(plain.to_dense() - limit.to_dense()).max() > 0.1 * spread
    assert mixed.converged
    assert np.abs(mixed.to_dense() - limit.to_dense()).max() < 1e-4 * spread
    assert mixed.loss_curve[-1] <= plain.loss_curve[-1]
    assert np.all(np.diff(mixed.loss_curve) <= 1e-12 * mixed.loss_curve[0])  # (a mixed point only if lower)


def test_rank_rule_mixes_its_sweeps_and_keeps_its_choice(monkeypatch):
    # noisy rank 5, 20 % observed: no ridge is best, and the one-standard-error rule fits ranks 1 to 3 without one
    X, mask = _rank5_table(200, 100, 0.2, 0)
    X_missing = np.where(mask, X, np.nan)
    calls = []
    sweeps = _als._exact_sweeps

    def recording(*args, force_plain=False, **kwargs):
        if force_plain:
            kwargs["accelerate"] = False
        out = sweeps(*args, **kwargs)
        calls.append((args[2].shape[1], kwargs.get("accelerate", False), len(out[3])))
        return out

    monkeypatch.setattr(_als, "_exact_sweeps", recording)
    mixed = LowRankImputer().fit(X_missing)
    assert mixed.rank_ == 5 and mixed.alpha_ == 0
    below = [c for c in calls if c[0] < 5]
    assert below and all(accelerate for _, accelerate, _ in below)
    assert all(not accelerate for r, accelerate, _ in calls if r == 5)  # (the rule's own fits only)
    mixed_sweeps = sum(n for _, _, n in below)
    calls.clear()
    monkeypatch.setattr(_als, "_exact_sweeps", lambda *a, **k: recording(*a, force_plain=True, **k))
    plain = LowRankImputer().fit(X_missing)
    assert sum(n for r, _, n in calls if r < 5) > 1.5 * mixed_sweeps
    assert (plain.rank_, plain.alpha_) == (mixed.rank_, mixed.alpha_)
    np.testing.assert_array_equal(plain.rank_validation_.ranks, mixed.rank_validation_.ranks)
    # (the plain sweeps stop farther from the same limit: the held-out errors of the smaller ranks differ a little)
    np.testing.assert_allclose(plain.rank_validation_.mean_errors, mixed.rank_validation_.mean_errors, rtol=1e-2)
