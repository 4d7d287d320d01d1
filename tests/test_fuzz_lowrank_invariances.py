"""Fuzz round 8 on the low-rank half and pruning: the invariances a statistician takes for granted.

Problems with a clear answer (well-separated singular values, exact low rank plus small noise, full-rank
calibration inputs). References are the same fit on transformed data (repeated rows, permuted rows or columns,
rescaled values, added empty rows), scikit-learn's weighting helpers and the error of the other pruning methods;
tolerances are relative to the reference's size, never rounding-level equality on non-unique quantities.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.class_weight import compute_sample_weight

from sparse_estimators import ReducedRankClassifier
from sparse_estimators.impute import LowRankImputer, choose_rank, complete_matrix
from sparse_estimators.pruning import prune_layer, prune_mlp


def _close(a, b, ref, rel):
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * max(np.abs(ref).max(), 1e-300))


# -- ReducedRankClassifier ------------------------------------------------------------------------------------------
def _classes(seed=0, n=300, p=6, n_classes=5):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, p))
    centers = rng.standard_normal((n_classes, 1)) @ rng.standard_normal((1, p))  # classes along one direction
    return X, np.argmax(X @ centers.T * 2 + rng.gumbel(size=(n, n_classes)), axis=1)


@pytest.mark.parametrize("solver", ["iht", "accelerated"])
def test_rrc_integer_weights_are_repeated_rows_and_class_weight_is_per_sample_weight(solver):
    X, y = _classes()
    options = dict(rank=1, solver=solver)  # (the same problem: the iterations agree to rounding)
    w = np.random.RandomState(1).randint(0, 4, X.shape[0])
    assert (w == 0).any() and set(y[w > 0]) == set(y)  # (rows dropped; every class keeps one)
    weighted = ReducedRankClassifier(**options).fit(X, y, sample_weight=w)
    repeated = ReducedRankClassifier(**options).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    _close(weighted.coef_, repeated.coef_, repeated.coef_, 1e-3)
    _close(weighted.intercept_, repeated.intercept_, repeated.coef_, 1e-3)
    assert weighted.rank_ == repeated.rank_ == 1
    for class_weight in ({0: 1.0, 1: 2.0, 2: 0.5, 3: 3.0, 4: 1.5}, "balanced"):
        by_class = ReducedRankClassifier(class_weight=class_weight, **options).fit(X, y)
        by_sample = ReducedRankClassifier(**options).fit(X, y, sample_weight=compute_sample_weight(class_weight, y))
        _close(by_class.coef_, by_sample.coef_, by_sample.coef_, 1e-3)


@pytest.mark.parametrize("debias", [True, False])
def test_rrc_swapping_two_labels_negates_the_binary_fit(debias):
    rng = np.random.RandomState(3)
    X = rng.standard_normal((200, 5))
    y = np.where(X[:, 0] + X[:, 1] + rng.logistic(size=200) > 0.3, "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (two classes: the rank constraint is void)
        a = ReducedRankClassifier(rank=1, debias=debias, tol=1e-8).fit(X, y)
        b = ReducedRankClassifier(rank=1, debias=debias, tol=1e-8).fit(X, np.where(y == "yes", "no", "yes"))
    _close(b.coef_, -a.coef_, a.coef_, 1e-5)
    _close(b.intercept_, -a.intercept_, a.coef_, 1e-5)
    _close(a.transform(X) @ a.y_loadings_.T + a.intercept_, a.decision_function(X)[:, None], a.coef_, 1e-10)


# -- complete_matrix and choose_rank --------------------------------------------------------------------------------
def _noisy_low_rank(seed, m=50, n=35, noise=0.01, share=0.5):
    rng = np.random.RandomState(seed)
    M = (rng.standard_normal((m, 2)) * [5.0, 1.0]) @ rng.standard_normal((2, n))  # singular values well apart
    M += noise * rng.standard_normal((m, n))
    return M, rng.uniform(size=M.shape) < share


@pytest.mark.parametrize("solver", ["accelerated", "iht", "als"])
@pytest.mark.parametrize("center", [False, True])
def test_completion_permutes_and_scales_with_the_matrix_and_ignores_empty_rows(solver, center):
    M, mask = _noisy_low_rank(0)
    rows, cols = np.nonzero(mask)
    options = dict(solver=solver, center=center, tol=1e-8, max_iter=2000)
    ref = complete_matrix((rows, cols, M[mask]), 2, shape=M.shape, **options).to_dense()
    assert np.linalg.norm(ref - M) < 0.05 * np.linalg.norm(M)
    rng = np.random.RandomState(1)
    pr, pc = rng.permutation(M.shape[0]), rng.permutation(M.shape[1])
    r2, c2 = np.nonzero(mask[pr][:, pc])
    permuted = complete_matrix((r2, c2, M[pr][:, pc][r2, c2]), 2, shape=M.shape, **options).to_dense()
    _close(permuted, ref[pr][:, pc], ref, 1e-5)
    for c in (1e-3, 3.0, 1e5):
        scaled = complete_matrix((rows, cols, c * M[mask]), 2, shape=M.shape, **options).to_dense()
        _close(scaled, c * ref, c * ref, 1e-5)
    # three rows and two columns with no entry: the completion of the others unchanged, zeros there (to
    # rounding: without the restriction to observed rows, the range finder's random start leaves ~1e-14)
    wider = complete_matrix((rows + 3, cols + 2 * (cols >= 10), M[mask]), 2, shape=(M.shape[0] + 3, M.shape[1] + 2),
                            **options).to_dense()
    _close(wider[3:][:, np.r_[0:10, 12:M.shape[1] + 2]], ref, ref, 1e-5)
    _close(wider[:, 10:12], 0.0, ref, 1e-10)


@pytest.mark.parametrize("center", [False, True])
def test_observed_zeros_are_the_same_observations_in_every_input_form(center):
    rng = np.random.RandomState(2)
    M = np.round(rng.standard_normal((40, 2)) @ rng.standard_normal((2, 30)) + 1.0)  # many exact zeros
    mask = rng.uniform(size=M.shape) < 0.6
    rows, cols = np.nonzero(mask)
    assert np.sum(M[mask] == 0) > 50
    ref = complete_matrix((rows, cols, M[mask]), 2, shape=M.shape, center=center).to_dense()
    S = sp.coo_matrix((M[mask], (rows, cols)), shape=M.shape)
    for observed in (S, S.tocsr(), S.tocsc(), sp.csr_array(S), np.ma.masked_array(M, ~mask)):
        _close(complete_matrix(observed, 2, center=center).to_dense(), ref, ref, 1e-10)
    errors = choose_rank((rows, cols, M[mask]), [1, 2, 3], shape=M.shape, center=center).mean_errors
    for observed in (S.tocsc(), np.ma.masked_array(M, ~mask)):
        _close(choose_rank(observed, [1, 2, 3], center=center).mean_errors, errors, errors, 1e-10)


def test_choose_rank_is_scale_invariant():
    M, mask = _noisy_low_rank(3)
    rows, cols = np.nonzero(mask)
    ref = choose_rank((rows, cols, M[mask]), [1, 2, 3, 5], shape=M.shape)
    assert ref.best_rank == 2
    for c in (1e-3, 1e4):
        scaled = choose_rank((rows, cols, c * M[mask]), [1, 2, 3, 5], shape=M.shape)
        assert scaled.best_rank == 2
        _close(scaled.mean_errors, c * ref.mean_errors, c * ref.mean_errors, 1e-3)


# -- LowRankImputer -------------------------------------------------------------------------------------------------
def _table(seed=0, m=80, n=12):
    rng = np.random.RandomState(seed)
    M = (rng.standard_normal((m, 2)) * [4.0, 1.0]) @ rng.standard_normal((2, n))
    M += 0.05 * rng.standard_normal((m, n)) + 3 * rng.standard_normal(n)
    missing = rng.uniform(size=M.shape) < 0.3
    missing[:, :3] = False  # three columns entirely observed
    return M, np.where(missing, np.nan, M), missing


@pytest.mark.parametrize("solver", ["accelerated", "als"])
def test_imputer_ignores_empty_rows_keeps_full_columns_and_follows_column_units(solver):
    M, X, missing = _table()
    imputer = LowRankImputer(rank=2, solver=solver, tol=1e-8, max_iter=3000)
    out = imputer.fit(X).transform(X)
    np.testing.assert_array_equal(out[:, :3], X[:, :3])
    assert np.linalg.norm(out[missing] - M[missing]) < 0.1 * np.linalg.norm(M[missing])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (the rows with no observed entry)
        padded = LowRankImputer(rank=2, solver=solver, tol=1e-8, max_iter=3000).fit(
            np.r_[np.full((2, X.shape[1]), np.nan), X])
    _close(padded.transform(X), out, out, 1e-6)
    # columns in other units (scales within a factor 2: above standardize's floor), the imputation in those units
    c = np.random.RandomState(4).uniform(0.5, 2.0, X.shape[1])
    rescaled = LowRankImputer(rank=2, solver=solver, tol=1e-8, max_iter=3000).fit(X * c)
    _close(rescaled.scale_, imputer.scale_ * c, imputer.scale_ * c, 1e-12)
    _close(rescaled.transform(X * c) / c, out, out, 1e-6)


def test_imputer_rank_is_searchable_in_a_pipeline():
    rng = np.random.RandomState(0)
    Z = rng.standard_normal((200, 2))
    M = Z @ rng.standard_normal((2, 10)) + 0.05 * rng.standard_normal((200, 10))
    X = np.where(rng.uniform(size=M.shape) < 0.3, np.nan, M)
    y = Z[:, 0] + 0.1 * rng.standard_normal(200)
    search = GridSearchCV(make_pipeline(LowRankImputer(), Ridge(alpha=1e-3)), {"lowrankimputer__rank": [1, 2, 3]},
                          cv=3).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert scores[1] > scores[0] + 0.05  # (rank 2 holds Z's second direction, which rank 1 misses)
    assert search.best_params_["lowrankimputer__rank"] in (2, 3)


# -- pruning --------------------------------------------------------------------------------------------------------
def _layer(seed, kind="plain", n=100, n_in=16, n_out=5):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, n_in))
    if kind == "collinear":
        X[:, 5] = 2 * X[:, 3] - X[:, 1]
    elif kind == "relu":
        X = np.maximum(X @ (np.eye(n_in) + 0.3 * rng.standard_normal((n_in, n_in))), 0)
    return rng.standard_normal((n_out, n_in)), X


def _row_errors(W, W_hat, X):
    D = W - W_hat
    return np.einsum("ij,jk,ik->i", D, X.T @ X / X.shape[0], D)


@pytest.mark.parametrize("method", ["magnitude", "wanda", "obs", "iobs"])
@pytest.mark.parametrize("sparsity, pattern", [(0.5, None), (None, "2:4"), (None, "3:8")])
def test_pruned_layer_ignores_calibration_order_and_scale_and_keeps_the_pattern(method, sparsity, pattern):
    W, X = _layer(0, "relu")
    out = prune_layer(W, X, sparsity, method=method, pattern=pattern)
    if pattern is None:
        assert (np.count_nonzero(out, axis=1) == W.shape[1] // 2).all()
    else:
        n, m = map(int, pattern.split(":"))
        np.testing.assert_array_equal(np.count_nonzero(out.reshape(W.shape[0], -1, m), axis=2), n)
    perm = np.random.RandomState(1).permutation(X.shape[0])
    for X2 in (X[perm], 3.7 * X, 1e-3 * X):  # (H changes by rounding, or by a factor the damping follows)
        other = prune_layer(W, X2, sparsity, method=method, pattern=pattern)
        np.testing.assert_array_equal(other != 0, out != 0)
        _close(other, out, W, 1e-7)


@pytest.mark.parametrize("method", ["magnitude", "wanda"])
def test_permuting_the_inputs_permutes_the_mask_of_the_saliency_methods(method):
    # ('obs' and 'iobs' depend on the inputs' order: SparseGPT's sweep, see prune_layer's Notes)
    W, X = _layer(2, "relu")
    perm = np.random.RandomState(2).permutation(X.shape[1])
    out = prune_layer(W, X, 0.5, method=method)
    np.testing.assert_array_equal(prune_layer(W[:, perm], X[:, perm], 0.5, method=method), out[:, perm])


@pytest.mark.parametrize("kind", ["plain", "collinear", "relu"])
@pytest.mark.parametrize("sparsity, pattern", [(0.5, None), (0.75, None), (None, "1:4")])
def test_iobs_rows_are_never_worse_than_magnitude_or_obs(kind, sparsity, pattern):
    W, X = _layer(5, kind)
    errors = {method: _row_errors(W, prune_layer(W, X, sparsity, method=method, pattern=pattern), X)
              for method in ("iobs", "obs", "magnitude")}
    scale = _row_errors(W, np.zeros_like(W), X)
    assert (errors["iobs"] <= errors["magnitude"] + 1e-9 * scale).all()
    assert (errors["iobs"] <= errors["obs"] + 1e-9 * scale).all()


def test_pruned_network_with_gradient_rounds_ignores_the_calibration_order():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 8))
    y = np.array(["a", "b", "c"])[np.digitize(X[:, 0] - 2 * X[:, 1] + 0.3 * rng.standard_normal(300), [-1, 1])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPClassifier(hidden_layer_sizes=(16,), max_iter=500, random_state=0).fit(X, y)
    a = prune_mlp(mlp, X, 0.5, y=y, random_state=0)
    perm = rng.permutation(X.shape[0])
    b = prune_mlp(mlp, X[perm], 0.5, y=y[perm], random_state=0)
    for A, B in zip(a.coefs_, b.coefs_, strict=True):
        np.testing.assert_array_equal(A != 0, B != 0)
    _close(b.predict_proba(X), a.predict_proba(X), 1.0, 1e-6)
