"""Fuzz round 6 on the low-rank half: matrix completion's input forms, SoftImpute, layer and network pruning.

References are independent of the package: the low-rank matrix itself, the (rows, cols, values) form of the same
observations, SoftImpute written here with numpy's SVD, numpy's minimum-norm least squares on the calibration
inputs, and the dense network's score. Tolerances are relative to the reference's size.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier, MLPRegressor

from sparse_estimators.impute import choose_rank, complete_matrix
from sparse_estimators.pruning import layer_error, prune_layer, prune_mlp

TIGHT = dict(tol=1e-10, max_iter=3000)


def _low_rank(seed=0, m=30, n=20, r=2, share=0.6):
    rng = np.random.RandomState(seed)
    M = rng.standard_normal((m, r)) @ rng.standard_normal((r, n))
    return M, rng.uniform(size=M.shape) < share


# -- complete_matrix: the ways of passing the observed entries -------------------------------------------------------
@pytest.mark.parametrize("solver", ["accelerated", "als"])
def test_a_masked_array_is_completed_from_its_unmasked_entries_only(solver):
    """np.asarray dropped the mask: the placeholders under it (999 here) were fitted as observations (the hidden
    entries came back 1332 away from the matrix). Now the unmasked entries are the observations, zeros included."""
    M, mask = _low_rank()
    hidden = np.ma.masked_array(np.where(mask, M, 999.0), mask=~mask)
    result = complete_matrix(hidden, 2, solver=solver, **TIGHT)
    scale = np.abs(M).max()
    np.testing.assert_allclose(result.to_dense()[~mask], M[~mask], atol=1e-6 * scale)
    # an unmasked zero is an observation (the dense-array form would drop it): the same fit as the tuple form
    data = np.where(mask, M, 999.0)
    data[np.nonzero(mask)[0][:5], np.nonzero(mask)[1][:5]] = 0.0
    rows, cols = np.nonzero(mask)
    a = complete_matrix(np.ma.masked_array(data, mask=~mask), 2, solver=solver, **TIGHT)
    b = complete_matrix((rows, cols, data[mask]), 2, shape=M.shape, solver=solver, **TIGHT)
    np.testing.assert_allclose(a.to_dense(), b.to_dense(), rtol=0, atol=1e-12 * scale)
    # choose_rank reads the same observations
    assert choose_rank(hidden, [1, 2, 3], tol=1e-6, max_iter=500).best_rank == 2


def test_a_dense_array_with_nan_is_refused_with_the_ways_to_pass_missing_entries():
    M, mask = _low_rank(1)
    with pytest.raises(ValueError, match=r"non-zero entries are the observations.*masked_invalid.*LowRankImputer"):
        complete_matrix(np.where(mask, M, np.nan), 2)
    # (and the advice works)
    result = complete_matrix(np.ma.masked_invalid(np.where(mask, M, np.nan)), 2, **TIGHT)
    np.testing.assert_allclose(result.to_dense(), M, atol=1e-6 * np.abs(M).max())


@pytest.mark.parametrize("alpha", [0.5, 5.0])
def test_als_with_a_ridge_is_softimpute(alpha):
    """solver='als' with ``alpha`` and a rank cap above the solution's rank minimises SoftImpute's objective
    ``1/2 ||P_O(Z - A)||^2 + alpha ||Z||_*``: Mazumder, Hastie & Tibshirani's iteration, written here."""
    rng = np.random.RandomState(0)
    M = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 25)) + 0.3 * rng.standard_normal((40, 25))
    mask = rng.uniform(size=M.shape) < 0.6
    Z = np.zeros_like(M)
    for _ in range(5000):
        U, s, Vt = np.linalg.svd(np.where(mask, M, Z), full_matrices=False)
        Z_new = (U * np.maximum(s - alpha, 0.0)) @ Vt
        done = np.linalg.norm(Z_new - Z) <= 1e-13 * np.linalg.norm(Z_new)
        Z = Z_new
        if done:
            break
    rank = int(np.sum(np.linalg.svd(Z, compute_uv=False) > 1e-8 * np.abs(Z).max()))
    result = complete_matrix((*np.nonzero(mask), M[mask]), rank + 2, shape=M.shape, solver="als", alpha=alpha,
                             tol=1e-12, max_iter=20000)
    np.testing.assert_allclose(result.to_dense(), Z, atol=1e-7 * np.abs(Z).max())


# -- prune_layer -----------------------------------------------------------------------------------------------------
def _proportional_inputs(seed, n_in=8):
    rng = np.random.RandomState(seed)
    W = rng.standard_normal((4, n_in))
    X = rng.standard_normal((50, n_in)) * rng.uniform(0.1, 10, n_in)
    X[:, 1] = X[:, 0] * rng.uniform(0.1, 10)
    X[:, 3] = X[:, 2] * rng.uniform(0.1, 10)
    return W, X


@pytest.mark.parametrize("seed", [6, 19, 29, 48])
@pytest.mark.parametrize("sparsity", [0.25, 0.5])
def test_iobs_rows_on_proportional_inputs_are_minimum_norm_least_squares(seed, sparsity):
    """Two proportional inputs kept in a row make H_QQ singular; the LU solve of the refit did not refuse it and
    returned weights up to 1e19, whose row error, computed through H, came out negative: they were kept, and the
    layer error on the calibration inputs was up to 3e8 against SparseGPT's 36 (1e32 on inputs moved by 1e-3)."""
    W, X = _proportional_inputs(seed)
    out = prune_layer(W, X, sparsity)
    assert np.all(np.count_nonzero(out, axis=1) == W.shape[1] - round(sparsity * W.shape[1]))
    for i in range(W.shape[0]):
        q = np.flatnonzero(out[i])
        reference = np.linalg.lstsq(X[:, q], X @ W[i], rcond=None)[0]  # (the minimum-norm refit on the mask)
        np.testing.assert_allclose(out[i, q], reference, atol=1e-8 * np.abs(reference).max())
    error = layer_error(W, out, X)
    for method in ("obs", "magnitude"):  # (documented: never worse than either, row by row)
        assert np.all(error <= layer_error(W, prune_layer(W, X, sparsity, method=method), X) * (1 + 1e-9) + 1e-12)


def test_prune_mlp_on_one_hot_inputs_keeps_the_networks_score():
    """One-hot encoded categories (each group sums to 1: X^T X singular) before a dense layer: the pruned network
    of the second seed had first-layer weights of 2e17 and a calibration R^2 of -97.8 (dense: 0.986)."""
    rng = np.random.RandomState(0)
    codes = rng.randint(0, 3, (300, 3))
    one_hot = (codes[:, :, None] == np.arange(3)).reshape(300, 9).astype(float)
    X = np.c_[one_hot, rng.standard_normal((300, 3))]
    y = one_hot @ rng.standard_normal(9) + X[:, 9] + 0.1 * rng.standard_normal(300)
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            mlp = MLPRegressor(hidden_layer_sizes=(16,), max_iter=500, random_state=seed).fit(X, y)
        pruned = prune_mlp(mlp, X, 0.25)
        assert np.abs(pruned.coefs_[0]).max() <= 5 * np.abs(mlp.coefs_[0]).max()
        assert pruned.score(X, y) >= mlp.score(X, y) - 0.05


@pytest.mark.parametrize("method", ["magnitude", "wanda", "obs", "iobs"])
def test_prune_layer_refuses_calibration_inputs_without_a_row(method):
    """X of shape (0, n_in): 'wanda' pruned by scores of 0 (kept the first inputs), 'obs' and 'iobs' failed with
    "array must not contain infs or NaNs"."""
    rng = np.random.RandomState(0)
    with pytest.raises(ValueError, match="0 samples"):
        prune_layer(rng.standard_normal((3, 8)), np.zeros((0, 8)), 0.5, method=method)


# -- prune_mlp's targets and patterns ---------------------------------------------------------------------------------
def _network(Estimator, y_kind, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((200, 8))
    y = {"classes": np.argmax(X[:, :3], axis=1), "binary": X[:, 0] > 0, "outputs": X[:, :2] * [1, 3]}[y_kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return Estimator(hidden_layer_sizes=(8,), max_iter=300, random_state=0).fit(X, y), X, y


def test_prune_mlp_refuses_labels_the_classifier_was_not_fitted_on():
    """An unknown label was binarized to a row of zeros: the rounds fitted it silently (labels shifted by 5: the
    pruned network's accuracy 0.715 against 0.855 with the right labels); on a binary network a third class
    failed in a matrix product."""
    mlp, X, y = _network(MLPClassifier, "classes")
    for wrong in (y + 5, np.where(y == 2, 7, y)):
        with pytest.raises(ValueError, match="labels the network was not fitted on"):
            prune_mlp(mlp, X, 0.5, y=wrong)
    binary, X, yb = _network(MLPClassifier, "binary")
    with pytest.raises(ValueError, match=r"not fitted on: \[2\]"):
        prune_mlp(binary, X, 0.5, y=np.argmax(X[:, :3], axis=1))
    # the right labels, also as strings, still run the rounds
    names = np.array(["a", "b", "c"])
    mlp_names = MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp_names.fit(X, names[y])
    pruned = prune_mlp(mlp_names, X, 0.5, y=names[y])
    assert [float((W == 0).mean()) for W in pruned.coefs_] == [0.5, 0.5]


def test_prune_mlp_refuses_targets_with_another_number_of_outputs_or_nan():
    """A 1-D y for a two-output regressor was broadcast against both outputs: the rounds fitted the first target
    to both (calibration R^2 0.404 against 0.908)."""
    mlp, X, Y = _network(MLPRegressor, "outputs")
    for wrong in (Y[:, 0], Y[:, :1]):
        with pytest.raises(ValueError, match="1 output.*the network has 2"):
            prune_mlp(mlp, X, 0.5, y=wrong)
    wrong = Y.copy()
    wrong[3, 1] = np.nan  # (the gradient step made the weights NaN: "W and X must be finite", about the user's X)
    with pytest.raises(ValueError, match="y contains NaN"):
        prune_mlp(mlp, X, 0.5, y=wrong)
    # (y is not used without rounds: not checked)
    prune_mlp(mlp, X, 0.5, y=Y[:, 0], method="obs")


def test_prune_mlp_names_the_layer_a_pattern_does_not_fit():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPClassifier((6,), max_iter=200, random_state=0).fit(X, X[:, 0] > 0)
    with pytest.raises(ValueError, match=r"layer 1 \(coefs_\[1\]\) has 6"):
        prune_mlp(mlp, X, None, pattern="2:4")
    pruned = prune_mlp(mlp, X, [None, 0], pattern="2:4")
    groups = pruned.coefs_[0].T.reshape(6, 2, 4)  # (rows of W = coefs_^T, in blocks of 4 inputs)
    assert np.all(np.count_nonzero(groups, axis=2) <= 2)
    np.testing.assert_array_equal(pruned.coefs_[1], mlp.coefs_[1])


@pytest.mark.parametrize("method", ["magnitude", "wanda", "obs", "iobs"])
def test_prune_layer_is_invariant_to_extreme_scales_of_inputs_and_weights(method):
    """X at 1e+-160 and beyond: H = X^T X / n overflowed or underflowed ('obs' and 'iobs' failed with "array must
    not contain infs or NaNs", or at 1e-200 pruned every weight; 'wanda' chose by infinite scores); W at 1e+-200:
    the sweep's saliencies W^2 overflowed (a different mask). The layer problem is invariant to both scales."""
    rng = np.random.RandomState(0)
    W, X = rng.standard_normal((4, 8)), rng.standard_normal((50, 8))
    base = prune_layer(W, X, 0.5, method=method)
    for c in (1e-160, 1e160, 1e-200, 1e200):
        np.testing.assert_allclose(prune_layer(W, c * X, 0.5, method=method), base, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(prune_layer(c * W, X, 0.5, method=method) / c, base, rtol=1e-12, atol=1e-14)


def test_imputer_rank_clip_warning_counts_the_features_it_fits():
    """Two of four columns empty: "rank=3 is larger than min(n_samples, n_features) - 1 = 1" for a 10 x 4 X."""
    from sparse_estimators.impute import LowRankImputer

    X = np.random.RandomState(0).standard_normal((10, 4))
    X[:, [1, 3]] = np.nan
    X[0, 0] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imputer = LowRankImputer(rank=3).fit(X)
    messages = [str(w.message) for w in caught]
    assert any("have no observed entry" in m for m in messages)  # (the empty columns' own warning)
    assert any("min(n_samples, the features with an observed entry) - 1 = 1" in m for m in messages)
    assert imputer.rank_ == 1
