"""Tests of the rank projection, the matrix-completion core and LowRankImputer.

References are independent of the code under test: the vector operators of
``sparse_estimators.thresholding`` and the checked table of algorithms.md
Sec. 2 (lifted operators), dense ``numpy.linalg.svd`` (partial SVD), the
hidden true entries of noiseless low-rank matrices (recovery), per-row
``scipy.linalg.lstsq`` (transform), ``SimpleImputer`` (a baseline to beat).
"""

import pickle
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from sparse_estimators.impute import LowRankImputer, choose_rank, complete_matrix
from sparse_estimators.impute._completion import _randomized_svd
from sparse_estimators.thresholding import Hard, Lq, Reciprocal, Soft, project_rank, threshold_singular_values

OPERATORS = [Hard(), Soft(), Reciprocal(c=0.0), Reciprocal(c=0.5), Lq(q=2 / 3), Lq(q=0.5)]
OPERATOR_IDS = [repr(op) for op in OPERATORS]


def low_rank(m, n, r, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))


def relative_error(estimate, truth):
    return np.linalg.norm(estimate - truth) / np.linalg.norm(truth)


# -- the lifted operators ----------------------------------------------------------------------------------
# algorithms.md Sec. 2: z = [3, -2, 1, 1, -0.5, 0], s = 3 (the table's magnitudes, independent of the code)
Z_REF = np.array([3.0, -2.0, 1.0, 1.0, -0.5, 0.0])
TABLE = [(Hard(), [3.0, 2.0, 1.0]), (Reciprocal(c=0.0), [2.9142, 1.8660, 0.5]),
         (Reciprocal(c=0.5), [2.9361, 1.9014, 0.75]), (Lq(q=2 / 3), [2.7155, 1.6652, 0.5]),
         (Lq(q=0.5), [2.8385, 1.7970, 0.6667]), (Soft(), [2.0, 1.0, 0.0])]


@pytest.mark.parametrize(("operator", "expected"), TABLE, ids=[repr(op) for op, _ in TABLE])
def test_lifted_operator_gives_the_reference_table_as_singular_values(operator, expected):
    out = project_rank(np.diag(Z_REF), 3, operator)
    singular_values = np.linalg.svd(out, compute_uv=False)
    np.testing.assert_allclose(singular_values[:3], expected, atol=1e-4)
    np.testing.assert_allclose(singular_values[3:], 0.0, atol=1e-12)


@pytest.mark.parametrize("operator", OPERATORS, ids=OPERATOR_IDS)
@pytest.mark.parametrize("r", [1, 3, 5])
def test_lifted_operator_equals_the_vector_operator_on_a_rotated_diagonal(operator, r):
    rng = np.random.default_rng(1)
    z = np.array([4.0, -3.1, 2.5, -1.7, 1.2, 0.6, -0.3])  # distinct magnitudes: one SVD ordering
    Q1 = np.linalg.qr(rng.standard_normal((9, 7)))[0]
    Q2 = np.linalg.qr(rng.standard_normal((8, 7)))[0]
    # the signs of z go into the left factor: its singular values are |z|
    expected = Q1 @ np.diag(operator(z, r)) @ Q2.T
    np.testing.assert_allclose(project_rank(Q1 @ np.diag(z) @ Q2.T, r, operator), expected, atol=1e-12)
    # on a plain diagonal the lifted operator is the vector operator on the diagonal
    np.testing.assert_allclose(project_rank(np.diag(z), r, operator), np.diag(operator(z, r)), atol=1e-12)


def test_threshold_singular_values_from_a_partial_svd_and_unsorted_input():
    U, s, Vt = np.eye(4), np.array([1.0, 4.0, 2.0, 3.0]), np.eye(4)
    Ur, sr, Vtr = threshold_singular_values("soft", 2, U, s, Vt)
    np.testing.assert_allclose(sr, [2.0, 1.0])  # 4 - 2, 3 - 2 with tau = the third largest, 2
    np.testing.assert_array_equal(Ur, U[:, [1, 3]])
    np.testing.assert_array_equal(Vtr, Vt[[1, 3]])
    # fewer triplets than r + 1: tau = 0, nothing shrunk
    np.testing.assert_allclose(threshold_singular_values("soft", 4, U, s, Vt)[1], [4.0, 3.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        threshold_singular_values("hard", 1, U, -s, Vt)
    with pytest.raises(ValueError, match="rank 'r'"):
        threshold_singular_values("hard", -1, U, s, Vt)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        threshold_singular_values("hard", 1, U[:, :3], s, Vt)


# -- the core -----------------------------------------------------------------------------------------------
def test_randomized_svd_of_low_rank_plus_sparse_matches_dense_svd():
    rng = np.random.default_rng(2)
    m, n, q = 70, 50, 4
    U = np.linalg.qr(rng.standard_normal((m, q)))[0]
    Vt = np.linalg.qr(rng.standard_normal((n, q)))[0].T
    s = np.array([9.0, 7.0, 5.0, 3.0])
    S = sp.random(m, n, density=0.1, random_state=3, format="csr")
    dense = (U * s) @ Vt - 0.7 * S.toarray()
    reference = np.linalg.svd(dense, compute_uv=False)
    k = 8
    _, sig, _ = _randomized_svd(U, s, Vt, S, -0.7, k, None, 4, np.random.RandomState(0))
    np.testing.assert_allclose(sig[:4], reference[:4], rtol=1e-6)
    # the (r+1)-th value (tau of the lifted operators) sits in the sparse part's flat spectrum: approximate
    np.testing.assert_allclose(sig[4], reference[4], rtol=1e-3)
    # k >= min(m, n): exact, whatever the power iterations
    Uk, sig, Vtk = _randomized_svd(U, s, Vt, S, -0.7, n, None, 0, np.random.RandomState(0))
    np.testing.assert_allclose(sig, reference, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose((Uk * sig) @ Vtk, dense, atol=1e-10)


@pytest.mark.parametrize("solver", ["iht", "accelerated"])
@pytest.mark.parametrize("step_size", ["auto", 1.0])
def test_exact_recovery_of_a_noiseless_low_rank_matrix(solver, step_size):
    m, n, r = 200, 150, 5
    M = low_rank(m, n, r)
    mask = np.random.default_rng(4).uniform(size=M.shape) < 0.4
    rows, cols = np.nonzero(mask)
    result = complete_matrix((rows, cols, M[mask]), r, shape=M.shape, solver=solver, step_size=step_size,
                             max_iter=2000, tol=1e-7)
    assert result.converged
    assert result.U.shape == (m, r) and result.s.shape == (r,) and result.Vt.shape == (r, n)
    completed = result.to_dense()
    assert relative_error(completed[~mask], M[~mask]) < 1e-4
    np.testing.assert_allclose(result.predict(*np.nonzero(~mask)), completed[~mask], rtol=1e-12, atol=1e-12)
    # orthonormal factors, decreasing singular values
    np.testing.assert_allclose(result.U.T @ result.U, np.eye(r), atol=1e-10)
    np.testing.assert_allclose(result.Vt @ result.Vt.T, np.eye(r), atol=1e-10)
    assert np.all(np.diff(result.s) <= 0)
    # the loss curve is the objective: checked at the end against the returned factors
    assert result.loss_curve[-1] == pytest.approx(0.5 * np.sum((completed[mask] - M[mask]) ** 2), rel=1e-6, abs=1e-12)


def test_arpack_partial_svd_recovers_the_same_matrix():
    M = low_rank(120, 90, 4, seed=24)
    mask = np.random.default_rng(24).uniform(size=M.shape) < 0.4
    observed = (*np.nonzero(mask), M[mask])
    arpack = complete_matrix(observed, 4, shape=M.shape, svd_solver="arpack", tol=1e-8, max_iter=1000)
    randomized = complete_matrix(observed, 4, shape=M.shape, tol=1e-8, max_iter=1000)
    assert arpack.converged and randomized.converged
    assert relative_error(arpack.to_dense()[~mask], M[~mask]) < 1e-5
    np.testing.assert_allclose(arpack.to_dense(), randomized.to_dense(), atol=1e-5 * np.abs(M).max())


def test_line_search_needs_fewer_iterations_than_the_safe_step():
    M = low_rank(200, 150, 5, seed=5)
    mask = np.random.default_rng(5).uniform(size=M.shape) < 0.3
    observed = (*np.nonzero(mask), M[mask])
    auto = complete_matrix(observed, 5, shape=M.shape, solver="iht", tol=1e-6, max_iter=3000)
    fixed = complete_matrix(observed, 5, shape=M.shape, solver="iht", step_size=1.0, tol=1e-6, max_iter=3000)
    assert auto.converged and fixed.converged
    assert auto.n_iter < fixed.n_iter / 2
    # with the safe step and hard thresholding the objective never rises
    assert np.all(np.diff(fixed.loss_curve) <= 1e-9 * fixed.loss_curve[0])


def test_momentum_needs_fewer_iterations_than_iht_at_the_safe_step():
    M = low_rank(200, 150, 5, seed=6)
    mask = np.random.default_rng(6).uniform(size=M.shape) < 0.3
    observed = (*np.nonzero(mask), M[mask])
    plain = complete_matrix(observed, 5, shape=M.shape, solver="iht", step_size=1.0, tol=1e-6, max_iter=3000)
    fast = complete_matrix(observed, 5, shape=M.shape, solver="accelerated", step_size=1.0, momentum=0.5,
                           tol=1e-6, max_iter=3000)
    assert plain.converged and fast.converged
    assert fast.n_iter < 0.8 * plain.n_iter


@pytest.mark.parametrize("operator", [Reciprocal(c=0.5), Lq(q=0.5)], ids=repr)
def test_non_hard_operators_return_their_best_iterate_and_beat_zero(operator):
    M = low_rank(80, 60, 3, seed=7)
    mask = np.random.default_rng(7).uniform(size=M.shape) < 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = complete_matrix((*np.nonzero(mask), M[mask]), 3, shape=M.shape, thresholding=operator,
                                 max_iter=200)
    fitted = 0.5 * np.sum((result.to_dense()[mask] - M[mask]) ** 2)
    assert fitted == pytest.approx(result.loss_curve.min(), rel=1e-9)
    assert fitted < 0.05 * 0.5 * np.sum(M[mask] ** 2)


def test_sparse_matrix_and_tuple_inputs_agree_and_fits_are_deterministic():
    M = low_rank(60, 40, 3, seed=8)
    mask = np.random.default_rng(8).uniform(size=M.shape) < 0.5
    rows, cols = np.nonzero(mask)
    perm = np.random.default_rng(0).permutation(rows.size)  # the order of the observations does not matter
    a = complete_matrix((rows[perm], cols[perm], M[mask][perm]), 3, shape=M.shape)
    b = complete_matrix(sp.csr_matrix((M[mask], (rows, cols)), shape=M.shape), 3)
    c = complete_matrix(sp.coo_matrix((M[mask], (rows, cols)), shape=M.shape), 3)
    for other in (b, c):
        assert other.to_dense().tobytes() == a.to_dense().tobytes()
        assert other.loss_curve.tobytes() == a.loss_curve.tobytes()


def test_the_core_never_forms_the_dense_matrix(monkeypatch):
    m, n, r = 20000, 10000, 5
    rng = np.random.default_rng(9)
    nnz = m * n // 100
    flat = rng.choice(m * n, nnz, replace=False)
    rows, cols = np.divmod(flat, n)
    A, B = rng.standard_normal((m, r)), rng.standard_normal((r, n))
    values = np.einsum("ij,ij->i", A[rows], B.T[cols])

    def refuse(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = complete_matrix((rows, cols, values), r, shape=(m, n), max_iter=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dense_bytes = m * n * 8
    observed_bytes = nnz * (8 + 8 + 8)  # rows, columns, values
    assert peak < dense_bytes / 5, (peak, dense_bytes)
    assert peak < 12 * observed_bytes, (peak, observed_bytes)
    # three iterations already fit most of the signal
    assert result.loss_curve[-1] < 0.1 * 0.5 * float(values @ values)


def test_core_rejects_bad_input():
    M = low_rank(20, 10, 2)
    obs = sp.csr_matrix(M)
    with pytest.raises(ValueError, match="'rank' parameter"):
        complete_matrix(obs, 0)
    with pytest.raises(ValueError, match="'solver' parameter"):
        complete_matrix(obs, 2, solver="newton")
    with pytest.raises(ValueError, match="thresholding=.hard. only"):
        complete_matrix(obs, 2, solver="regularized", thresholding="soft")
    with pytest.raises(ValueError, match="'step_size' parameter"):
        complete_matrix(obs, 2, step_size=-1.0)
    with pytest.raises(ValueError, match="'momentum' parameter"):
        complete_matrix(obs, 2, momentum=1.0)
    with pytest.raises(ValueError, match="'shape' parameter"):
        complete_matrix(obs, 2, shape=(5, 5))
    with pytest.raises(ValueError, match="'shape' parameter is required"):
        complete_matrix((np.array([0]), np.array([0]), np.array([1.0])), 1)
    with pytest.raises(ValueError, match="NaN or infinity"):
        complete_matrix((np.array([0, 1]), np.array([0, 1]), np.array([1.0, np.inf])), 1, shape=(3, 3))
    with pytest.raises(ValueError, match="no stored entry"):
        complete_matrix(sp.csr_matrix((5, 4)), 1)
    with pytest.raises(ValueError, match="at least two rows"):
        complete_matrix(sp.csr_matrix(np.ones((1, 4))), 1)
    with pytest.warns(UserWarning, match="using rank=9"):
        complete_matrix(obs, 15)


def test_divergent_fixed_step_warns_and_returns_the_best_iterate():
    M = low_rank(60, 40, 3, seed=10)
    mask = np.random.default_rng(10).uniform(size=M.shape) < 0.5
    with pytest.warns(ConvergenceWarning, match="diverged"):
        result = complete_matrix((*np.nonzero(mask), M[mask]), 3, shape=M.shape, solver="iht", step_size=8.0,
                                 max_iter=500)
    assert np.all(np.isfinite(result.to_dense()))


# -- the imputer --------------------------------------------------------------------------------------------
@parametrize_with_checks([LowRankImputer()])  # default parameters, as in test_common.py
def test_sklearn_compatible_imputer(estimator, check):
    check(estimator)


def _missing(X, share, seed):
    mask = np.random.default_rng(seed).uniform(size=X.shape) < share
    X_missing = X.copy()
    X_missing[mask] = np.nan
    return X_missing, mask


@pytest.mark.parametrize("solver", ["iht", "accelerated"])
def test_imputer_recovers_a_shifted_low_rank_matrix(solver):
    X = low_rank(200, 60, 4, seed=11) + np.linspace(-5, 5, 60)  # column offsets: centering matters
    X_missing, mask = _missing(X, 0.4, 11)
    imputer = LowRankImputer(rank=4, solver=solver, tol=1e-7, max_iter=2000)
    completed = imputer.fit_transform(X_missing)
    assert relative_error(completed[mask], X[mask]) < 1e-4
    np.testing.assert_array_equal(completed[~mask], X[~mask])  # observed entries unchanged, bit for bit
    assert imputer.components_.shape == (4, 60) and imputer.rank_ == 4
    np.testing.assert_allclose(imputer.components_ @ imputer.components_.T, np.eye(4), atol=1e-10)
    # the offsets are fitted jointly: the completion is offsets + low rank, and reproduces X on its support
    # (the model is fit to the standardized columns: components_ is in units of scale_)
    C, scale = imputer.components_, imputer.scale_
    rebuilt = imputer.mean_ + ((completed - imputer.mean_) / scale) @ C.T @ C * scale
    np.testing.assert_allclose(rebuilt, X, atol=1e-4 * np.abs(X).max())
    assert imputer.n_iter_ == imputer.loss_curve_.size > 0


def test_transform_of_new_rows_is_the_probabilistic_pca_posterior_mean():
    """Reference: Gaussian conditioning in data space, x_M | x_O with covariance D (C^T diag(prior) C + Psi) D.

    ``Psi``: the features' noise variances (``feature_noise_variance_``; factor analysis's diagonal noise).
    """
    rng = np.random.default_rng(12)
    X = low_rank(300, 30, 3, seed=12) + rng.uniform(-2, 2, 30) + 0.2 * rng.standard_normal((300, 30))
    train, test = X[:200], X[200:]
    imputer = LowRankImputer(rank=3).fit(_missing(train, 0.3, 12)[0])
    test_missing, mask = _missing(test, 0.3, 13)
    out = imputer.transform(test_missing)
    np.testing.assert_array_equal(out[~mask], test[~mask])
    C, mean, scale = imputer.components_, imputer.mean_, imputer.scale_
    assert imputer.noise_variance_ > 0 and np.all(imputer.explained_variance_ > 10 * imputer.noise_variance_)
    psi = imputer.feature_noise_variance_
    assert psi.shape == (30,) and np.all(psi > 0)
    cov = scale[:, None] * (C.T @ np.diag(imputer.explained_variance_) @ C + np.diag(psi)) * scale
    for i in range(test.shape[0]):
        o, miss = ~mask[i], mask[i]
        expected = mean[miss] + cov[np.ix_(miss, o)] @ np.linalg.solve(cov[np.ix_(o, o)], test[i, o] - mean[o])
        np.testing.assert_allclose(out[i, miss], expected, rtol=1e-8, atol=1e-8)
    # the fill is far closer to the (noisy) truth than the column means
    assert relative_error(out[mask], test[mask]) < 0.3 * relative_error(np.broadcast_to(mean, test.shape)[mask],
                                                                         test[mask])


def test_transform_of_new_rows_stays_in_the_data_range():
    """On load_diabetes with 20 % hidden, the least-squares transform filled test rows up to 20x out of range."""
    from sklearn.datasets import load_diabetes

    X = load_diabetes().data
    X_missing, mask = _missing(X, 0.2, 0)
    train, test = np.arange(353), np.arange(353, 442)
    imputer = LowRankImputer().fit(X_missing[train])
    out = imputer.transform(X_missing[test])
    span = X.max(axis=0) - X.min(axis=0)
    outside = np.maximum(out - X.max(axis=0), X.min(axis=0) - out) / span
    assert outside.max() < 0.5, outside.max()
    # and the test rows' hidden entries are closer to the truth than the training column means
    means = np.nanmean(X_missing[train], axis=0)
    hidden = mask[test]
    assert np.mean((out - X[test])[hidden] ** 2) < 0.9 * np.mean((means - X[test])[hidden] ** 2)


def test_pipeline_cross_val_score_beats_mean_imputation():
    rng = np.random.default_rng(15)
    Z = rng.standard_normal((400, 3))
    X = Z @ rng.standard_normal((3, 20)) + 0.05 * rng.standard_normal((400, 20))
    y = Z @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(400)
    X_missing = _missing(X, 0.4, 15)[0]
    cv = KFold(5, shuffle=True, random_state=0)
    low_rank_scores = cross_val_score(make_pipeline(LowRankImputer(rank=3), Ridge(alpha=1e-3)), X_missing, y, cv=cv)
    mean_scores = cross_val_score(make_pipeline(SimpleImputer(), Ridge(alpha=1e-3)), X_missing, y, cv=cv)
    assert np.all(np.isfinite(low_rank_scores))
    assert low_rank_scores.mean() > mean_scores.mean() + 0.05, (low_rank_scores, mean_scores)


def test_pandas_in_and_out():
    X = low_rank(50, 6, 2, seed=16)
    X_missing, mask = _missing(X, 0.2, 16)
    columns = [f"gene_{j}" for j in range(6)]
    df = pd.DataFrame(X_missing, columns=columns, index=np.arange(100, 150))
    imputer = LowRankImputer(rank=2, max_iter=2000).set_output(transform="pandas")
    out = imputer.fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == columns and list(out.index) == list(df.index)
    assert list(imputer.get_feature_names_out()) == columns
    np.testing.assert_array_equal(imputer.feature_names_in_, columns)
    assert not out.isna().any().any()
    again = imputer.transform(df)
    assert isinstance(again, pd.DataFrame)
    np.testing.assert_allclose(again.to_numpy()[~mask], X[~mask])


def test_imputer_clone_pickle_and_determinism():
    X_missing = _missing(low_rank(80, 12, 3, seed=17), 0.3, 17)[0]
    a = LowRankImputer(rank=3).fit(X_missing)
    b = clone(a).fit(X_missing)
    restored = pickle.loads(pickle.dumps(a))
    for other in (b, restored):
        assert other.transform(X_missing).tobytes() == a.transform(X_missing).tobytes()
    with pytest.raises(NotFittedError):
        clone(a).transform(X_missing)


@pytest.mark.parametrize("add_indicator", [False, True])
def test_imputer_keeps_float32_and_fits_as_float64(add_indicator):
    # float32 in, float32 out (as scikit-learn's imputers); the model is fitted on the float64 values of the
    # same entries, so each output is the float64 imputation rounded to float32
    X64 = _missing(low_rank(80, 12, 3, seed=21), 0.3, 21)[0].astype(np.float32).astype(np.float64)
    X32 = X64.astype(np.float32)
    a = LowRankImputer(rank=3, add_indicator=add_indicator).fit(X32)
    b = LowRankImputer(rank=3, add_indicator=add_indicator).fit(X64)
    assert a.components_.tobytes() == b.components_.tobytes()
    out32, out64 = a.transform(X32), b.transform(X64)
    assert out32.dtype == np.float32 and out64.dtype == np.float64
    assert np.array_equal(out32, out64.astype(np.float32))
    assert a.fit_transform(X32).dtype == np.float32
    # copy=False fills a float32 array in place, as it does a float64 one
    Y = X32.copy()
    filled = LowRankImputer(rank=3, copy=False).fit(X32).transform(Y)
    assert filled is Y and not np.isnan(Y).any()


def test_imputer_missing_values_placeholder():
    X = low_rank(60, 8, 2, seed=18) + 10.0  # positive: -1 cannot be a value
    X_missing, mask = _missing(X, 0.2, 18)
    with_nan = LowRankImputer(rank=2).fit_transform(X_missing)
    X_minus = np.where(mask, -1.0, X)
    with_minus = LowRankImputer(rank=2, missing_values=-1.0).fit_transform(X_minus)
    np.testing.assert_array_equal(with_minus, with_nan)
    with pytest.raises(ValueError, match="contains NaN but missing_values=-1"):
        LowRankImputer(missing_values=-1).fit(X_missing)
    with pytest.warns(UserWarning, match="missing_values=-7 does not occur"):
        out = LowRankImputer(rank=2, missing_values=-7).fit_transform(X)
    np.testing.assert_array_equal(out, X)


def test_imputer_bad_input_and_nothing_half_fitted():
    X = low_rank(30, 6, 2, seed=19)
    X_missing, mask = _missing(X, 0.2, 19)
    imputer = LowRankImputer(rank=2).fit(X_missing)
    fitted = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(imputer).items()}

    cases = [
        (np.full((5, 3), np.nan), "Every entry of X is missing"),
        (np.where(mask, np.inf, X), "infinity"),
        (pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": ["x", "y", "z"]}), "numeric"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            imputer.fit(bad)
        assert set(vars(imputer)) == set(fitted)
        for key, value in fitted.items():
            np.testing.assert_array_equal(getattr(imputer, key), value)
    for params, message in [({"rank": 0}, "'rank' parameter"), ({"rank": "best"}, "'rank' parameter"),
                            ({"rank": 2.0}, "'rank' parameter"), ({"solver": "sgd"}, "'solver' parameter"),
                            ({"step_size": "big"}, "'step_size' parameter"), ({"tol": -1.0}, "'tol' parameter"),
                            ({"missing_values": "NA"}, "'missing_values' parameter"),
                            ({"center": "yes"}, "'center' parameter"), ({"thresholding": "median"}, "thresholding")]:
        with pytest.raises(ValueError, match=message):
            LowRankImputer(**params).fit(X_missing)


def test_imputer_rank_clipping_and_empty_rows_and_columns():
    X = low_rank(30, 5, 2, seed=20)
    X_missing, mask = _missing(X, 0.2, 20)
    with pytest.warns(UserWarning, match="using rank=4"):
        assert LowRankImputer(rank=10).fit(X_missing).rank_ == 4
    X_missing[3] = np.nan  # a row with no observed entry: the column means
    X_missing[:, 2] = np.nan  # a column with no observed entry: dropped, or 0 with keep_empty_features
    with pytest.warns(UserWarning) as record:
        out = LowRankImputer(rank=2, keep_empty_features=True).fit_transform(X_missing)
    messages = " ".join(str(w.message) for w in record)
    assert "no observed entry" in messages and "column" in messages and "row" in messages
    np.testing.assert_array_equal(out[:, 2], 0.0)
    with pytest.warns(UserWarning, match="dropped"):
        imputer = LowRankImputer(rank=2).fit(X_missing)
    np.testing.assert_allclose(out[3], imputer.mean_, atol=1e-12)
    # transform: a new row with nothing observed is the means too
    imputer = LowRankImputer(rank=2).fit(_missing(X, 0.2, 21)[0])
    with pytest.warns(UserWarning, match="no observed entry"):
        np.testing.assert_allclose(imputer.transform(np.full((1, 5), np.nan))[0], imputer.mean_)
    # a complete matrix is returned unchanged, and its rank-2 row space is learnt
    full = LowRankImputer(rank=2, standardize=False).fit(X)
    np.testing.assert_array_equal(full.transform(X), X)
    reference = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)[2][:2]
    np.testing.assert_allclose(np.abs(full.components_ @ reference.T), np.eye(2), atol=1e-6)


@pytest.mark.parametrize("solver", ["accelerated", "als"])
def test_imputer_fit_transform_memory_is_a_few_copies_of_the_output(solver):
    """With 90 % missing, filling entry by entry from gathered factor rows took ~15 output sizes; now ~4."""
    import tracemalloc

    rng = np.random.default_rng(50)
    X = low_rank(1000, 400, 5, seed=50)
    X_missing = np.where(rng.uniform(size=X.shape) < 0.9, np.nan, X)
    tracemalloc.start()
    try:
        out = LowRankImputer(rank=5, solver=solver).fit_transform(X_missing)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * X.nbytes, peak / X.nbytes
    assert np.array_equal(out[~np.isnan(X_missing)], X_missing[~np.isnan(X_missing)])
    if solver == "accelerated":  # (ALS at the imputer's tol=1e-3 stops at a relative error of about 6e-3 here)
        assert relative_error(out, X) < 1e-3


# -- choosing the rank --------------------------------------------------------------------------------------
@pytest.mark.parametrize("r", [4, 6])
def test_imputer_auto_rank_finds_the_true_rank_and_stops_early(r):
    rng = np.random.default_rng(30 + r)
    X = low_rank(150, 100, r, seed=30 + r) + rng.uniform(-3, 3, 100) + 0.05 * rng.standard_normal((150, 100))
    X_missing, mask = _missing(X, 0.3, 30 + r)
    imputer = LowRankImputer(rank="auto", solver="accelerated")  # (the hard-rank search)
    out = imputer.fit_transform(X_missing)
    assert imputer.rank_ == r
    assert imputer.components_.shape == (r, 100)
    tried = imputer.rank_validation_.ranks.tolist()
    # rank 0 (the column means) and every rank up to the true one are tried, and the search stops two ranks
    # above it (the early stop)
    assert tried == list(range(0, r + 3))
    assert imputer.rank_validation_.best_rank == r
    errors = imputer.rank_validation_.mean_errors
    # one rank too few misses signal (far worse), one too many fits noise (worse)
    assert errors[r] < 0.5 * errors[r - 1] and errors[r] < errors[r + 1], errors
    # the imputation at the chosen rank is that of rank=r: same completion
    np.testing.assert_allclose(out, LowRankImputer(rank=r, solver="accelerated").fit_transform(X_missing))
    assert np.sqrt(np.mean((out[mask] - X[mask]) ** 2)) < 0.1


def test_imputer_auto_rank_grid_and_bounds():
    from sparse_estimators.impute._imputer_rank import rank_grid

    assert rank_grid(40) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 19, 24, 30, 38, 40]
    assert rank_grid(3) == [1, 2, 3]
    # a rank r needs r (m + n - r) free parameters, the 10 offsets counted, at most the entries fit on: 40 x 10
    # with 60 % observed (226, 203 fit on) allows ranks up to 4 (4 * 46 + 10 = 194 <= 203 < 5 * 45 + 10), with a
    # hard rank (before: half the entries, up to 2 = 2 * 48 = 96 <= 101 < 3 * 47) as with solver='als'
    rng = np.random.default_rng(40)
    X = rng.standard_normal((40, 2)) @ rng.standard_normal((2, 10)) + 0.01 * rng.standard_normal((40, 10))
    X_missing = _missing(X, 0.4, 40)[0]
    assert np.count_nonzero(~np.isnan(X_missing)) == 226
    imputer = LowRankImputer(rank="auto", solver="accelerated").fit(X_missing)
    assert imputer.rank_validation_.ranks.max() == 4 and imputer.rank_ == 2
    imputer = LowRankImputer(rank="auto").fit(X_missing)
    assert imputer.rank_validation_.ranks.max() == 4 and imputer.rank_ == 2
    # too few entries for any rank: the column means, the safe choice, without a warning (ordinary use on a
    # small table; it warned before): 10 observed, 9 fit on, below rank 1's 7 free parameters and 3 offsets
    tiny = _missing(low_rank(5, 3, 1, seed=41) + 5.0, 0.5, 41)[0]
    assert np.count_nonzero(~np.isnan(tiny)) == 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imputer = LowRankImputer(rank="auto").fit(tiny)
    assert imputer.rank_ == 0 and imputer.rank_validation_ is None
    np.testing.assert_array_equal(imputer.transform(tiny), SimpleImputer().fit(tiny).transform(tiny))
    # an integer rank leaves no validation behind
    assert LowRankImputer(rank=2).fit(_missing(X, 0.2, 42)[0]).rank_validation_ is None


def test_choose_rank_finds_the_true_rank_of_a_noisy_matrix():
    rng = np.random.default_rng(22)
    M = low_rank(150, 100, 4, seed=22)
    noisy = M + 0.3 * rng.standard_normal(M.shape)
    rows, cols = np.nonzero(rng.uniform(size=M.shape) < 0.4)
    result = choose_rank((rows, cols, noisy[rows, cols]), [1, 2, 3, 4, 5, 6, 8, 12], shape=M.shape, n_repeats=2)
    assert result.best_rank == 4
    assert result.errors.shape == (8, 2)
    errors = dict(zip(result.ranks.tolist(), result.mean_errors, strict=True))
    # underfitting costs signal, overfitting fits noise: both measurably worse than the true rank
    assert errors[4] < 0.8 * errors[3] and errors[4] < 0.9 * errors[12]
    # the held-out RMSE at the true rank is of the order of the noise (0.3)
    assert 0.25 < errors[4] < 0.45


def test_choose_rank_rejects_bad_input():
    M = low_rank(20, 10, 2)
    obs = sp.csr_matrix(M)
    with pytest.raises(ValueError, match="'ranks' parameter"):
        choose_rank(obs, [])
    with pytest.raises(ValueError, match="'ranks' parameter"):
        choose_rank(obs, [2, 10])
    with pytest.raises(ValueError, match="'holdout' parameter"):
        choose_rank(obs, [2], holdout=1.0)


# -- the reproduction script ------------------------------------------------------------------------------
def test_reproduce_completion_script_writes_its_report(tmp_path):
    from _benchmarks import load_benchmark

    script = load_benchmark("reproduce_completion")
    text = script.report(["flower.jpg"], ranks=(3,), downscale=8, out_dir=tmp_path, max_iter=400)
    assert (tmp_path / "paper001_image_completion.md").read_text() == text
    assert (tmp_path / "paper001_image_completion.png").stat().st_size > 1000
    runs = [line for line in text.split("## Runs", 1)[1].splitlines() if line.startswith("| flower")]
    assert len(runs) == 4  # two solvers, two step rules
    # a rank-3 image of 53 x 80 from 35 % of its pixels: the line search recovers it
    line_search = [[c.strip() for c in row.strip("|").split("|")] for row in runs if "line search" in row]
    assert all(float(cells[-1]) < 1e-3 for cells in line_search), line_search


@pytest.mark.parametrize("factor", [2.0**-600, 2.0**600], ids=["tiny", "huge"])
def test_extreme_scales_give_the_scaled_imputation(factor):
    # squares of these values underflow to 0 or overflow to inf: the data are solved rescaled
    X = low_rank(60, 10, 2, seed=23) + 3.0
    X_missing, mask = _missing(X, 0.3, 23)
    reference = LowRankImputer(rank=2, tol=1e-10, max_iter=3000).fit_transform(X_missing)
    scaled = LowRankImputer(rank=2, tol=1e-10, max_iter=3000).fit_transform(X_missing * factor)
    np.testing.assert_allclose(scaled / factor, reference, rtol=1e-7)
    result = complete_matrix((*np.nonzero(~mask), X[~mask] * factor), 2, shape=X.shape, center=True, tol=1e-10,
                             max_iter=3000)
    np.testing.assert_allclose(result.to_dense() / factor, reference, rtol=1e-7)
    assert np.all(np.isfinite(result.s)) and np.all(np.isfinite(result.column_offsets))


def test_lifted_operators_script_writes_its_report(tmp_path):
    from _benchmarks import load_benchmark

    script = load_benchmark("reproduce_lifted_operators")
    text = script.report(tmp_path, m=80, n=60, true_rank=3, ranks=(3, 6), conds=(1.0,), seeds=(0,), max_iter=300)
    assert (tmp_path / "paper002_low_rank_completion.md").read_text() == text
    assert (tmp_path / "paper002_low_rank_completion.png").stat().st_size > 1000
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.split("## Errors", 1)[1].splitlines()
            if line.startswith("| 1.000")]
    error = {(r[1], r[2]): float(r[3]) for r in rows}
    assert len(error) == 6
    assert max(error["3", name] for name in script.OPERATORS) < 1e-4  # the true rank: exact recovery
    assert error["6", "lq (q = 2/3)"] < error["6", "hard"]  # overshot rank: the shrinking operator does better
