"""prune_layer and prune_mlp on scipy.sparse calibration inputs: the dense X's masks and weights, X never densified."""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier, MLPRegressor

from sparse_estimators.pruning import layer_error, prune_layer, prune_mlp
from sparse_estimators.pruning._layer import _column_squares, _gram

METHODS = ["magnitude", "wanda", "obs", "iobs"]
LEVELS = [(0.5, None), (None, "2:4")]  # (sparsity, pattern): unstructured and N:M


def _sparse(n, p, density, seed):
    """A random sparse matrix with Gaussian entries (well conditioned for n >> p, no ties)."""
    rng = np.random.default_rng(seed)
    return sp.random(n, p, density=density, format="csr", random_state=seed, data_rvs=rng.standard_normal)


def _assert_same_pruning(A, B, scale=1.0):
    """The same mask, and the same weights to rounding (relative to ``scale``)."""
    np.testing.assert_array_equal(A != 0, B != 0)
    np.testing.assert_allclose(A, B, rtol=1e-9, atol=1e-12 * scale)


def _canonical(X):
    X = X.tocsr().astype(float)
    X.sum_duplicates()
    return X


# -- the layer statistics -----------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_gram_and_column_squares_of_sparse_X_equal_numpy(fmt):
    X = _sparse(150, 12, 0.3, 0).asformat(fmt)
    D = X.toarray()
    H = _gram(X)
    assert isinstance(H, np.ndarray) and H.shape == (12, 12)
    np.testing.assert_allclose(H, np.einsum("ij,ik->jk", D, D) / 150, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(_column_squares(X), (D**2).sum(axis=0), rtol=1e-13)


# -- prune_layer ------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparsity, pattern", LEVELS)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_prune_layer_sparse_X_equals_dense(method, sparsity, pattern, fmt):
    X = _sparse(300, 16, 0.3, 1)
    W = np.random.default_rng(1).normal(size=(6, 16))
    dense = prune_layer(W, X.toarray(), sparsity, method=method, pattern=pattern)
    _assert_same_pruning(prune_layer(W, X.asformat(fmt), sparsity, method=method, pattern=pattern), dense)


def test_prune_layer_wanda_on_sparse_X_keeps_largest_scores():
    """Independent: each row keeps its largest ``|W_ij| ||x_j||`` (the norms from the dense columns)."""
    X = _sparse(200, 10, 0.4, 2)
    W = np.random.default_rng(2).normal(size=(4, 10))
    out = prune_layer(W, X, 0.6, method="wanda")
    scores = np.abs(W) * np.linalg.norm(X.toarray(), axis=0)
    for i in range(4):
        top = np.sort(np.argsort(-scores[i])[:4])
        np.testing.assert_array_equal(np.flatnonzero(out[i]), top)
        np.testing.assert_array_equal(out[i, top], W[i, top])


def test_prune_layer_iobs_on_sparse_X_is_least_squares_on_its_masks():
    """Independent: every 'iobs' row is the least-squares fit of the dense outputs on its mask's columns."""
    X = _sparse(300, 12, 0.35, 3)
    W = np.random.default_rng(3).normal(size=(5, 12))
    out = prune_layer(W, X, 0.5, method="iobs")
    D = X.toarray()
    for i in range(5):
        q = np.flatnonzero(out[i])
        assert q.size == 6
        np.testing.assert_allclose(out[i, q], np.linalg.lstsq(D[:, q], D @ W[i], rcond=None)[0], rtol=1e-8)


def test_prune_layer_sparse_float32_as_its_float64_values():
    X = _sparse(200, 8, 0.4, 4).astype(np.float32)
    W = np.random.default_rng(4).normal(size=(3, 8))
    for method in METHODS:
        reference = prune_layer(W, X.astype(np.float64), 0.5, method=method)
        for Xs in (X, X.tocsc(), X.tocoo()):
            np.testing.assert_array_equal(prune_layer(W, Xs, 0.5, method=method), reference)
        _assert_same_pruning(reference, prune_layer(W, X.toarray(), 0.5, method=method))
    assert X.dtype == np.float32


def test_prune_layer_sparse_duplicates_summed_and_input_unchanged():
    """Duplicate and unsorted entries of a CSR or COO X count as their sums; the caller's X is not changed."""
    rng = np.random.default_rng(4)
    n, p, nnz = 200, 8, 700
    rows, cols, values = rng.integers(0, n, nnz), rng.integers(0, p, nnz), rng.normal(size=nnz)
    order = np.argsort(rows, kind="stable")  # (rows in order, as indptr needs; columns unsorted, duplicates kept)
    raw = sp.csr_matrix((values[order], cols[order], np.searchsorted(rows[order], np.arange(n + 1))), shape=(n, p))
    coo = sp.coo_matrix((values, (rows, cols)), shape=(n, p))
    assert not raw.has_canonical_format and raw.nnz == nnz
    D = np.zeros((n, p))
    np.add.at(D, (rows, cols), values)  # (independent: the sums of the duplicates)
    W = rng.normal(size=(3, p))
    saved = [a.copy() for a in (raw.data, raw.indices, raw.indptr)]
    for method in METHODS:
        reference = prune_layer(W, D, 0.5, method=method)
        for Xs in (raw, coo):
            _assert_same_pruning(prune_layer(W, Xs, 0.5, method=method), reference)
    for a, b in zip((raw.data, raw.indices, raw.indptr), saved, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not raw.has_canonical_format and coo.nnz == nnz


def test_prune_layer_sparse_W_and_layer_error_sparse_X():
    X = _sparse(200, 8, 0.4, 5)
    W = np.random.default_rng(5).normal(size=(3, 8))
    W[:, ::3] = 0.0
    out = prune_layer(sp.csr_matrix(W), X, 0.5, method="iobs")
    _assert_same_pruning(out, prune_layer(W, X.toarray(), 0.5, method="iobs"))
    D = X.toarray() @ (W - out).T
    np.testing.assert_allclose(layer_error(W, out, X), (D**2).mean(axis=0), rtol=1e-12)


def test_prune_layer_too_wide_for_H_says_which_method():
    """obs/iobs need a dense p x p H: at p = 2^23 (512 TiB) the error names the method and the ones needing none."""
    p = 2**23
    X = sp.csr_matrix((np.ones(4), ([0, 1, 2, 3], [0, 5, 9, 20])), shape=(4, p))
    W = sp.csr_matrix((np.ones(3), ([0, 0, 0], [0, 5, 9])), shape=(1, p))
    with pytest.raises(MemoryError, match=r"method='iobs' needs the layer's Hessian.*'wanda' and 'magnitude'"):
        prune_layer(W, X, 0.5)
    out = prune_layer(W, X, 0.5, method="wanda")  # (column norms only)
    assert np.count_nonzero(out) == 3


# -- prune_mlp ----------------------------------------------------------------------------
def _nets():
    X = _sparse(400, 16, 0.3, 6)
    rng = np.random.default_rng(6)
    score = X @ rng.normal(size=(16, 2))
    multi = np.digitize(score[:, 0], np.quantile(score[:, 0], [1 / 3, 2 / 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return {  # (fitted on the sparse X, as scikit-learn accepts it)
            "binary": (MLPClassifier((8,), activation="tanh", max_iter=100, random_state=0)
                       .fit(X, score[:, 0] > 0), X, score[:, 0] > 0),
            "multiclass": (MLPClassifier((12, 8), max_iter=100, random_state=0).fit(X, multi), X, multi),
            "regression": (MLPRegressor(hidden_layer_sizes=(8,), activation="logistic", max_iter=100,
                                        random_state=0).fit(X, score[:, 1]), X, score[:, 1]),
            "multi-output": (MLPRegressor(hidden_layer_sizes=(8,), activation="tanh", max_iter=100,
                                          random_state=0).fit(X, score), X, score),
        }


NETS = _nets()


@pytest.mark.parametrize("name", list(NETS))
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparsity, pattern", LEVELS)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_prune_mlp_sparse_X_equals_dense(name, method, sparsity, pattern, fmt):
    """The same network as on X.toarray(), gradient rounds (batches, validation split) included."""
    mlp, X, y = NETS[name]
    if mlp.activation == "relu":  # (no unit dead on the calibration set: its inputs would tie in 'wanda')
        assert np.all(np.any(np.maximum(X @ mlp.coefs_[0] + mlp.intercepts_[0], 0) > 0, axis=0))
    Xs = X.asformat(fmt)
    saved = Xs.copy()
    options = dict(y=y, method=method, pattern=pattern, n_rounds=2, batch_size=300, validation_fraction=0.2,
                   random_state=0)
    pruned = prune_mlp(mlp, Xs, sparsity, **options)
    dense = prune_mlp(mlp, X.toarray(), sparsity, **options)
    for A, B in zip(pruned.coefs_ + pruned.intercepts_, dense.coefs_ + dense.intercepts_, strict=True):
        _assert_same_pruning(A, B)
    assert any(np.any(A != B) for A, B in zip(pruned.coefs_, mlp.coefs_, strict=True))
    if method == "iobs":  # (the intercepts move only in the gradient rounds: some round was kept)
        assert any(np.any(b != b0) for b, b0 in zip(pruned.intercepts_, mlp.intercepts_, strict=True))
    np.testing.assert_allclose(pruned.predict_proba(Xs) if name in ("binary", "multiclass") else pruned.predict(Xs),
                               dense.predict_proba(X.toarray()) if name in ("binary", "multiclass")
                               else dense.predict(X.toarray()), rtol=1e-8, atol=1e-12)
    assert Xs.format == fmt and (Xs != saved).nnz == 0 and Xs.dtype == np.float64


def test_prune_mlp_sparse_float32_X_and_sparse_y():
    """float32 X as its float64 values (bit-identical); a sparse y (multi-output, multilabel) as its dense values."""
    mlp, X, y = NETS["multi-output"]
    X32 = X.astype(np.float32)
    a = prune_mlp(mlp, X32, 0.5, y=sp.csr_matrix(y), random_state=0)
    b = prune_mlp(mlp, X32.astype(np.float64), 0.5, y=y, random_state=0)
    for A, B in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_, strict=True):
        np.testing.assert_array_equal(A, B)
    assert X32.dtype == np.float32
    labels = np.column_stack([y[:, 0] > 0, y[:, 1] > 0, y.sum(axis=1) > 0]).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        net = MLPClassifier((8,), activation="tanh", max_iter=50, random_state=0).fit(X, labels)
    a = prune_mlp(net, X, 0.5, y=sp.csr_matrix(labels), random_state=0)
    b = prune_mlp(net, X.toarray(), 0.5, y=labels, random_state=0)
    for A, B in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_, strict=True):
        _assert_same_pruning(A, B)


def test_prune_mlp_sparse_X_is_not_densified():
    """A CSR X of 80 MB dense: prune_mlp's allocations (rounds included) stay a fraction of it (densified: 2)."""
    n, p = 25000, 400
    X = _sparse(n, p, 0.0025, 7)
    y = np.asarray(X @ np.random.default_rng(7).normal(size=p)).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPRegressor(hidden_layer_sizes=(8,), activation="tanh", max_iter=20, random_state=0).fit(X[:500],
                                                                                                     y[:500])
    tracemalloc.start()
    try:
        prune_mlp(mlp, X, 0.5, y=y, n_rounds=1, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * n * p * 8


@pytest.mark.parametrize("convert", [sp.csr_array, sp.csc_array, sp.lil_matrix, sp.dok_array])
def test_prune_mlp_sparse_arrays_and_other_formats(convert):
    mlp, X, y = NETS["multiclass"]
    pruned = prune_mlp(mlp, convert(X), 0.5, y=y, random_state=0)
    dense = prune_mlp(mlp, X.toarray(), 0.5, y=y, random_state=0)
    for A, B in zip(pruned.coefs_ + pruned.intercepts_, dense.coefs_ + dense.intercepts_, strict=True):
        _assert_same_pruning(A, B)


def test_prune_layer_integer_counts_csr():
    """Counts (int64 CSR, a bag of words) as their float64 values."""
    rng = np.random.default_rng(8)
    X = sp.random(300, 12, density=0.3, format="csr", random_state=8, data_rvs=lambda k: rng.integers(1, 9, k))
    X = X.astype(np.int64)
    W = rng.normal(size=(4, 12))
    for method in METHODS:
        _assert_same_pruning(prune_layer(W, X, 0.5, method=method), prune_layer(W, X.toarray(), 0.5, method=method))


def test_prune_mlp_names_the_layer_whose_H_does_not_fit(monkeypatch):
    """prune_layer's MemoryError (its H) reraised with the layer and the way to leave it unpruned."""
    import sparse_estimators.pruning._mlp as module

    mlp, X, y = NETS["regression"]

    def failing(W, A, sparsity, **options):
        raise MemoryError("method='obs' needs the layer's Hessian")

    monkeypatch.setattr(module, "prune_layer", failing)
    with pytest.raises(MemoryError, match=r"Layer 0 \(coefs_\[0\], 16 inputs\): method='obs'.*sparsity of 0"):
        prune_mlp(mlp, X, 0.5, method="obs")
