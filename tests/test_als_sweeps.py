"""solver='als': the dense route of the sweeps, the ridge solves, and the stop of hopeless validation fits."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from sparse_estimators import _policy
from sparse_estimators.impute import LowRankImputer, _als
from sparse_estimators.impute._factored import _column_sums, _Observed


def _observed(m, n, share, seed, rank=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) + rng.uniform(-3, 3, n)
    X += 0.1 * rng.standard_normal(X.shape)
    mask = rng.uniform(size=X.shape) < share
    rows, cols = np.nonzero(mask)
    return X, mask, _Observed(rows, cols, X[rows, cols], X.shape)


@pytest.mark.parametrize("offsets", [True, False])
def test_dense_sweep_kernels_equal_the_sparse_ones(offsets):
    X, mask, obs = _observed(40, 30, 0.6, 0)
    m, n = X.shape
    counts = _column_sums(obs.cols, n)
    inv = np.divide(1.0, counts, out=np.zeros(n), where=counts > 0)
    sums = _column_sums(obs.cols, n, obs.values) if offsets else None
    sparse = _als._SparseSweep(obs, sums, inv, offsets)
    dense = _als._DenseSweep(obs, sums, inv, offsets)
    rng = np.random.default_rng(1)
    U, V, mu = rng.standard_normal((m, 4)), rng.standard_normal((n, 4)), rng.standard_normal(n)
    # the residual on the pattern (CSR order = row-major order of np.nonzero), and zeros off it
    mu_s, res_s = sparse.evaluate(U, V, sparse.buffers[0])
    mu_d, res_d = dense.evaluate(U, V, dense.buffers[0])
    np.testing.assert_allclose(mu_d, mu_s, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res_d[mask], res_s, rtol=1e-12, atol=1e-12)
    assert not res_d[~mask].any()
    if offsets:  # (the offsets are the exact minimisers: the residual sums to zero in every observed column)
        np.testing.assert_allclose(res_d.sum(axis=0), 0.0, atol=1e-10)
    trial_s = sparse.residual(U, V, mu, sparse.buffers[1])
    trial_d = dense.residual(U, V, mu, dense.buffers[1])
    np.testing.assert_allclose(trial_d[mask], trial_s, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(trial_d[mask], (U @ V.T + mu - X)[mask], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dense.times(trial_d, V), sparse.times(trial_s, V), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dense.transpose_times(trial_d, U), sparse.transpose_times(trial_s, U), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("offsets", [True, False])
def test_dense_and_sparse_routes_reach_the_same_completion(offsets):
    # a ridge makes the minimiser unique here (rank 3 data, rank 3 fit): both routes converge to it
    X, mask, obs = _observed(50, 35, 0.7, 2)
    results = []
    for dense in (True, False):
        result, _ = _als._solve_als(obs, 3, 0.5, 2000, 1e-12, np.random.RandomState(0), 0, 1.0, offsets, warn=False,
                                    dense=dense)
        assert result.converged
        results.append(result.to_dense())
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=1e-8 * np.abs(results[1]).max())


def test_the_route_depends_on_the_share_observed_and_the_size():
    assert _als._use_dense_sweep(_observed(60, 40, 0.7, 3)[2])
    assert not _als._use_dense_sweep(_observed(60, 40, 0.1, 3)[2])
    rows = np.repeat(np.arange(2), 3)
    cols = np.tile(np.arange(3), 2)
    big = _Observed(rows, cols, np.ones(6), (2, _policy.DENSE_SWEEP_MAX_ENTRIES))  # (few entries of a wide matrix)
    assert not _als._use_dense_sweep(big)


def test_ridge_solve_equals_the_linear_solve_and_keeps_the_singular_case():
    rng = np.random.default_rng(4)
    U = rng.standard_normal((100, 7))
    rhs = rng.standard_normal((50, 7))
    for alpha in (0.0, 0.3, 1e3):
        expected = np.linalg.solve(U.T @ U + alpha * np.eye(7), rhs.T).T
        np.testing.assert_allclose(_als._ridge_solve(U.T @ U, rhs, alpha), expected, rtol=1e-10, atol=1e-12)
    # zero factors, no ridge: the jittered solve as before (zeros for a zero right-hand side, not 0 * inf)
    np.testing.assert_array_equal(_als._ridge_solve(np.zeros((3, 3)), np.zeros((2, 3)), 0.0), np.zeros((2, 3)))


def test_rank_and_ridge_choice_are_the_same_on_both_routes(monkeypatch):
    # (seed 8: with the held-out entries of holdout_split, seed 5's best errors were 0.1 % apart, a tie)
    X, mask, _ = _observed(80, 40, 0.6, 8)
    X_missing = np.where(mask, X, np.nan)
    dense = LowRankImputer(rank="auto", solver="als").fit(X_missing)
    monkeypatch.setattr(_policy, "DENSE_SWEEP_SHARE", 2.0)  # (never dense)
    sparse = LowRankImputer(rank="auto", solver="als").fit(X_missing)
    # (the choice is clear: the table's rank 3, within one standard error of the best cap, 4; rank 2 validates
    # four times worse; the rank-3 ridge path ends at its first halving that gains less than 0.1 %)
    validation = sparse.rank_validation_
    assert sparse.rank_ == 3
    assert validation.mean_errors[validation.ranks == 2].min() > 4 * validation.mean_errors.min()
    assert (dense.rank_, dense.alpha_) == (sparse.rank_, sparse.alpha_)
    np.testing.assert_array_equal(dense.rank_validation_.ranks, sparse.rank_validation_.ranks)
    # (the validation fits stop at a relative change of 1e-3, the watched ones once their error rose: their errors
    # agree to about that; the rank-15 path's last fit, watched, by 0.18 %)
    np.testing.assert_allclose(dense.rank_validation_.mean_errors, sparse.rank_validation_.mean_errors, rtol=5e-3)


def test_hopeless_validation_fits_stop_early_without_changing_the_choice(monkeypatch):
    # digits (no sharp rank), 30 % hidden: the ridge path's last fit, the smaller rank cap's fits and the two
    # refinements move away from the held-out optimum from their first sweep
    X = load_digits().data[:900].astype(float)
    hidden = np.random.default_rng(3).uniform(size=X.shape) < 0.3
    X_missing = np.where(hidden, np.nan, X)
    sweeps = []
    solve = _als._solve_als

    def counting(*args, **kwargs):
        result = solve(*args, **kwargs)
        sweeps.append(result[0].n_iter)
        return result

    monkeypatch.setattr(_als, "_solve_als", counting)
    stopped = LowRankImputer(rank="auto", solver="als", tol=1e-5).fit(X_missing)
    with_stops = sum(sweeps)
    sweeps.clear()
    monkeypatch.setattr(_policy, "ALS_HOPELESS_SWEEPS", 10 ** 9)  # (never stops: every fit converges)
    converged = LowRankImputer(rank="auto", solver="als", tol=1e-5).fit(X_missing)
    assert (stopped.rank_, stopped.alpha_) == (converged.rank_, converged.alpha_)
    assert stopped.rank_ > 1
    assert with_stops < 0.9 * sum(sweeps)
    np.testing.assert_array_equal(stopped.rank_validation_.ranks, converged.rank_validation_.ranks)


@pytest.mark.parametrize("by_columns", [True, False])
def test_sparse_gram_matrices_of_the_exact_sweeps(monkeypatch, by_columns):
    # 10 % observed: the Gram matrices of the exact sweeps from a sparse product (in blocks, with small blocks)
    rng = np.random.default_rng(0)
    m, n, k, alpha = 300, 120, 4, 0.3
    mask = rng.uniform(size=(m, n)) < 0.1
    rows, cols = np.nonzero(mask)
    obs = _Observed(rows, cols, np.ones(rows.size), (m, n))
    F = rng.standard_normal((n if not by_columns else m, k))
    rhs = rng.standard_normal((m if not by_columns else n, k))
    used = []
    grams = _als._sparse_grams
    monkeypatch.setattr(_als, "_sparse_grams", lambda *a: used.append(a[0].shape) or grams(*a))
    monkeypatch.setattr(_policy, "EXACT_SWEEP_BLOCK", 64)  # (several blocks of outputs and of the triangle)
    out = _als._exact_solves(obs.set_data(1.0), F, rhs, (k - 1, alpha), by_columns=by_columns)
    assert len(used) > 1
    W = mask.T if by_columns else mask  # (the solved index along the rows)
    penalty = np.diag(np.r_[np.full(k - 1, alpha), 0.0])
    for i in range(W.shape[0]):
        G = F[W[i]].T @ F[W[i]] + penalty
        np.testing.assert_allclose(out[i], np.linalg.solve(G, rhs[i]), rtol=1e-9, atol=1e-12)


def test_gathered_entries_in_chunks(monkeypatch):
    # entries at arbitrary positions (repeated, unordered) from gathers in several chunks, the last one partial
    from sparse_estimators.impute._factored import CompletionResult, _entries_squared_norm

    rng = np.random.default_rng(0)
    m, n, r = 30, 20, 7
    U, s, Vt = rng.standard_normal((m, r)), rng.uniform(1, 2, r), rng.standard_normal((r, n))
    rows, cols = rng.integers(0, m, 1000), rng.integers(0, n, 1000)
    expected = np.array([U[i] @ (s * Vt[:, j]) for i, j in zip(rows, cols, strict=True)])
    monkeypatch.setattr(_policy, "ENTRY_GATHER", 10 * r)  # (chunks of 10 entries: 100 of them)
    fit = CompletionResult(U, s, Vt, 0, None, True)
    np.testing.assert_allclose(fit.predict(rows, cols), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_entries_squared_norm(U, s, Vt, rows[:995], cols[:995]), expected[:995] @ expected[:995],
                               rtol=1e-12)
