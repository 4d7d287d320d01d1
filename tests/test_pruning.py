"""Layer-wise pruning (paper 004, Sec. 3.4 and 4.2): prune_layer and prune_mlp."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits, make_regression
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.neural_network import MLPClassifier, MLPRegressor

from sparse_estimators.losses import GramSquaredLoss
from sparse_estimators.pruning import layer_error, prune_layer, prune_mlp
from sparse_estimators.structures import NMPattern, PerOutput
from sparse_estimators.thresholding import Hard, Soft

METHODS = ["magnitude", "wanda", "obs", "iobs"]


def _layer(seed=0, n=200, n_in=16, n_out=6, correlated=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_in))
    if correlated:
        X = X @ rng.normal(size=(n_in, n_in))
    return rng.normal(size=(n_out, n_in)), X


# -- structures ------------------------------------------------------------------
def test_per_output_structure_keeps_top_k_of_each_column():
    W = np.array([[3.0, -1.0], [-2.0, 5.0], [1.0, 4.0], [0.5, -6.0]])
    out, support = PerOutput(Hard())(W, 2, return_support=True)
    np.testing.assert_array_equal(support, [[0, 1], [1, 3]])
    np.testing.assert_array_equal(out, [[3.0, 0.0], [-2.0, 5.0], [0.0, 0.0], [0.0, -6.0]])


def test_nm_structure_keeps_n_of_each_block_of_m():
    W = np.array([[1.0, 4.0, -3.0, 2.0, 0.1, -0.2, 0.3, 0.4]]).T
    out, support = NMPattern(Hard(), 2, 4)(W, 0, return_support=True)
    np.testing.assert_array_equal(support, [[1, 2, 6, 7]])
    np.testing.assert_array_equal(out[:, 0], [0, 4.0, -3.0, 0, 0, 0, 0.3, 0.4])
    with pytest.raises(ValueError, match="divisible by 4"):
        NMPattern(Hard(), 2, 4)(np.ones((6, 1)), 0)


def test_per_output_structure_soft_and_refit():
    """Soft thresholding at each column's own tau; the refit is least squares of each output on its support."""
    W = np.array([[3.0, -1.0], [-2.0, 5.0], [1.0, 4.0], [0.5, -6.0]])
    out = PerOutput(Soft())(W, 2)
    np.testing.assert_allclose(out, [[2.0, 0.0], [-1.0, 1.0], [0.0, 0.0], [0.0, -2.0]])  # tau = 1 and 4
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    loss = GramSquaredLoss(X, X @ W, fit_intercept=False)
    support = np.array([[0, 2], [1, 3]])
    coef, _ = PerOutput(Hard()).refit(loss, support, np.zeros_like(W), np.zeros(2))
    for j, S in enumerate(support):
        expected = np.linalg.lstsq(X[:, S], X @ W[:, j], rcond=None)[0]
        np.testing.assert_allclose(coef[S, j], expected, rtol=1e-8)
        assert np.all(np.delete(coef[:, j], S) == 0)


# -- prune_layer ---------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sparsity", [0.5, 0.7])
def test_exact_row_sparsity(method, sparsity):
    W, X = _layer()
    W_hat = prune_layer(W, X, sparsity, method=method)
    kept = 16 - round(sparsity * 16)
    np.testing.assert_array_equal((W_hat != 0).sum(axis=1), kept)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("pattern", ["2:4", (1, 4), "4:8"])
def test_nm_pattern(method, pattern):
    W, X = _layer(1)
    W_hat = prune_layer(W, X, None, method=method, pattern=pattern)
    n, m = (int(v) for v in pattern.split(":")) if isinstance(pattern, str) else pattern
    per_block = (W_hat.reshape(W.shape[0], -1, m) != 0).sum(axis=2)
    np.testing.assert_array_equal(per_block, n)  # (random weights: exactly N kept per block)


@pytest.mark.parametrize("method", METHODS)
def test_sparsity_zero_returns_w(method):
    W, X = _layer(2)
    np.testing.assert_array_equal(prune_layer(W, X, 0.0, method=method), W)


def test_magnitude_is_per_row_l1_unstructured():
    """``torch.nn.utils.prune.l1_unstructured`` on each row: zero the round(s n) smallest |w| (numpy argsort)."""
    W, X = _layer(3, n_in=20)
    for sparsity in (0.3, 0.5, 0.77):
        n_prune = round(sparsity * 20)
        expected = W.copy()
        for row in expected:
            row[np.argsort(np.abs(row))[:n_prune]] = 0.0
        np.testing.assert_array_equal(prune_layer(W, X, sparsity, method="magnitude"), expected)


def test_wanda_scores_weights_by_input_norms():
    W, X = _layer(4, n_in=12)
    X[:, 3] *= 100.0  # a large input: its weights survive Wanda, not magnitude pruning
    norms = np.linalg.norm(X, axis=0)
    expected = W.copy()
    for row in expected:
        row[np.argsort(np.abs(row) * norms)[:6]] = 0.0
    W_hat = prune_layer(W, X, 0.5, method="wanda")
    np.testing.assert_array_equal(W_hat, expected)
    assert np.all(W_hat[:, 3] != 0)


def _sparsegpt_reference(W, X, sparsity, damping, blocksize, nm=None):
    """SparseGPT from the OBS equations with explicit inverses (Frantar & Alistarh 2022, eq. 3 and 4).

    At column ``i`` the free weights are ``F = {i, ..., n_in - 1}``; pruning
    (or fixing) weight ``i`` updates the others by
    ``-(w_i - q_i) / [H_F^{-1}]_ii * H_F^{-1}[i, :]`` and the saliency of
    weight ``j`` is ``w_j^2 / [H_{F_j}^{-1}]_jj``, ``H_F^{-1}`` inverted
    directly (no Cholesky factor). Masks: per row, per block of columns
    (``round(n_prune i2 / n) - round(n_prune i1 / n)`` entries), or N:M
    groups when the sweep reaches them.
    """
    W = W.copy()
    n_out, n = W.shape
    H = X.T @ X / X.shape[0]
    H = H + damping * np.mean(np.diag(H)) * np.eye(n)
    inv_tail = [np.linalg.inv(H[i:, i:]) for i in range(n)]
    diag = np.array([inv_tail[i][0, 0] for i in range(n)])
    n_prune = n - (n - round(sparsity * n) if nm is None else n // nm[1] * nm[0])
    pruned = np.zeros(W.shape, dtype=bool)
    for i in range(n):
        if nm is None and i % blocksize == 0:
            i2 = min(i + blocksize, n)
            c = round(n_prune * i2 / n) - round(n_prune * i / n)
            score = W[:, i:i2] ** 2 / diag[i:i2]
            for r in range(n_out):
                pruned[r, i + np.argsort(score[r], kind="stable")[:c]] = True
        if nm is not None and i % nm[1] == 0:
            score = W[:, i:i + nm[1]] ** 2 / diag[i:i + nm[1]]
            for r in range(n_out):
                pruned[r, i + np.argsort(score[r], kind="stable")[:nm[1] - nm[0]]] = True
        Hinv = inv_tail[i]
        for r in range(n_out):
            if pruned[r, i]:
                W[r, i:] -= W[r, i] / Hinv[0, 0] * Hinv[0, :]
                W[r, i] = 0.0
    return W


@pytest.mark.parametrize("sparsity, blocksize, nm", [(0.5, 128, None), (0.6, 4, None), (None, 128, (2, 4))])
def test_obs_matches_the_equations(sparsity, blocksize, nm):
    W, X = _layer(5, n_in=12)
    expected = _sparsegpt_reference(W, X, sparsity if nm is None else 0.5, 0.01, blocksize, nm)
    got = prune_layer(W, X, sparsity, method="obs", blocksize=blocksize, pattern=None if nm is None else "2:4")
    np.testing.assert_array_equal(got != 0, expected != 0)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10 * np.abs(W).max())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pattern, sparsity", [(None, 0.5), (None, 0.75), ("2:4", None)])
def test_iobs_never_worse_than_obs(seed, pattern, sparsity):
    W, X = _layer(seed, n_in=16, n_out=10)
    e_obs = layer_error(W, prune_layer(W, X, sparsity, method="obs", pattern=pattern), X)
    e_iobs = layer_error(W, prune_layer(W, X, sparsity, method="iobs", pattern=pattern), X)
    assert np.all(e_iobs <= e_obs * (1 + 1e-12))
    assert e_iobs.sum() < e_obs.sum()  # (the one-shot weights are not least squares on their own mask)


def _lstsq_on_mask(W, X, W_masked):
    """Per row, numpy least squares of the dense outputs on the columns of X that the row keeps."""
    X, Y = np.asarray(X, dtype=float), np.asarray(X, dtype=float) @ np.asarray(W, dtype=float).T
    out = np.zeros(W.shape)
    for i in range(W.shape[0]):
        S = np.flatnonzero(W_masked[i])
        out[i, S] = np.linalg.lstsq(X[:, S], Y[:, i], rcond=None)[0]
    return out


def _heavy_tailed_layer(seed, n, n_in, n_out, rho, t):
    """float32 weights (Student t(2) with ``t``), inputs with AR(1) correlation ``rho``."""
    rng = np.random.default_rng(seed)
    C = rho ** np.abs(np.subtract.outer(np.arange(n_in), np.arange(n_in)))
    X = rng.normal(size=(n, n_in)) @ np.linalg.cholesky(C).T
    W = rng.standard_t(2, size=(n_out, n_in)) if t else rng.normal(size=(n_out, n_in))
    return W.astype(np.float32), X


# Layers on which 'iobs', started from the sweep alone, ended above magnitude pruning on some rows (before the
# magnitude start; ratios to magnitude's row error 1.96, 1.30, 1.22 at 50 %; 1.03, 1.04, 1.17 at 2:4; 1.99,
# 1.17 at 50 % with blocksize=1)
WORSE_THAN_MAGNITUDE = [
    ((3, 40, 16, 20, 0.9, False), 0.5, None, 128), ((3, 30, 16, 20, 0.8, True), 0.5, None, 128),
    ((5, 40, 16, 20, 0.6, True), 0.5, None, 128), ((34, 40, 16, 20, 0.6, True), None, "2:4", 128),
    ((48, 40, 16, 20, 0.6, True), None, "2:4", 128), ((152, 40, 16, 20, 0.6, True), None, "2:4", 128),
    ((3, 40, 16, 20, 0.6, True), 0.5, None, 1), ((3, 40, 16, 20, 0.9, False), 0.5, None, 1),
]


@pytest.mark.parametrize("layer, sparsity, pattern, blocksize", WORSE_THAN_MAGNITUDE)
def test_iobs_never_worse_than_magnitude_per_row(layer, sparsity, pattern, blocksize):
    W, X = _heavy_tailed_layer(*layer)
    W_mag = prune_layer(W, X, sparsity, method="magnitude", pattern=pattern)
    W_iobs = prune_layer(W, X, sparsity, method="iobs", pattern=pattern, blocksize=blocksize)
    e_mag = layer_error(W, W_mag, X)
    e_mag_ls = layer_error(W, _lstsq_on_mask(W, X, W_mag), X)  # (magnitude's mask, refitted)
    e_iobs = layer_error(W, W_iobs, X)
    assert np.all(e_mag_ls <= e_mag * (1 + 1e-9))
    assert np.all(e_iobs <= e_mag_ls * (1 + 1e-7) + 1e-12 * e_mag.max())
    assert e_iobs.sum() < e_mag.sum()
    # the pattern is kept, and each row is least squares on its own mask
    np.testing.assert_array_equal((W_iobs != 0).sum(axis=1), (W_mag != 0).sum(axis=1))
    e_own_ls = layer_error(W, _lstsq_on_mask(W, X, W_iobs), X)
    np.testing.assert_allclose(e_iobs, e_own_ls, rtol=1e-6, atol=1e-12 * e_mag.max())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pattern, sparsity, blocksize", [(None, 0.5, 128), (None, 0.7, 4), ("2:4", None, 128)])
def test_iobs_never_worse_than_magnitude_random_layers(seed, pattern, sparsity, blocksize):
    W, X = _heavy_tailed_layer(seed, 30 + 10 * seed, 16, 12, [0.3, 0.8, 0.95][seed % 3], seed % 2 == 0)
    W_mag = prune_layer(W, X, sparsity, method="magnitude", pattern=pattern)
    e_mag_ls = layer_error(W, _lstsq_on_mask(W, X, W_mag), X)
    e_iobs = layer_error(W, prune_layer(W, X, sparsity, method="iobs", pattern=pattern, blocksize=blocksize), X)
    assert np.all(e_iobs <= e_mag_ls * (1 + 1e-7) + 1e-12 * e_mag_ls.max())


@pytest.mark.parametrize("pattern, sparsity", [(None, 0.5), ("2:4", None)])
def test_iobs_rows_with_fewer_non_zeros_than_kept(pattern, sparsity):
    """Rows of W already sparser than the level (magnitude keeps zeros) and an input never active."""
    W, X = _layer(1, n=50, n_in=12, n_out=6)
    X[:, 3] = 0
    W[0, :9], W[1], W[2, 5] = 0, 0, 0
    W_mag = prune_layer(W, X, sparsity, method="magnitude", pattern=pattern)
    e_mag_ls = layer_error(W, _lstsq_on_mask(W, X, W_mag), X)
    for damping in (0.01, 0.0):
        W_iobs = prune_layer(W, X, sparsity, method="iobs", pattern=pattern, damping=damping)
        assert np.all(layer_error(W, W_iobs, X) <= e_mag_ls * (1 + 1e-7) + 1e-12 * e_mag_ls.max())
        assert not np.any(W_iobs[1]) and np.all((W_iobs != 0).sum(axis=1) <= 6)


def _brute_force(W, H, k):
    """Per row: the smallest ``(w - v)^T H (w - v)`` over all ``v`` with ``k`` non-zeros."""
    best = np.full(W.shape[0], np.inf)
    for S in itertools.combinations(range(W.shape[1]), k):
        S = list(S)
        V = np.zeros_like(W)
        V[:, S] = np.linalg.solve(H[np.ix_(S, S)], (W @ H)[:, S].T).T
        D = W - V
        best = np.minimum(best, np.einsum("ij,ij->i", D @ H, D))
    return best


def test_against_brute_force_on_six_inputs():
    """All supports of 6-input rows: how close 'obs' and 'iobs' get to the optimum.

    Measured on these 10 layers x 5 rows x 2 levels (correlated inputs):
    'iobs' reaches the optimum (to 1e-6) in 55 of 100 rows (51 before its rows were
    refitted and compared with magnitude pruning's), 'obs' (damped, not a
    least-squares refit on its mask) in none; mean log ratio to the optimum
    0.35 for 'iobs' (0.44 before), 1.02 for 'obs'. I-OBS is a local method
    (top-k of the Newton point), not an exhaustive search.
    """
    hits, total, log_iobs, log_obs = 0, 0, [], []
    for seed in range(10):
        W, X = _layer(seed, n=40, n_in=6, n_out=5)
        H = X.T @ X / X.shape[0]
        for k, sparsity in ((3, 0.5), (2, 4 / 6)):
            opt = _brute_force(W, H, k)
            e_obs = layer_error(W, prune_layer(W, X, sparsity, method="obs"), X)
            e_iobs = layer_error(W, prune_layer(W, X, sparsity, method="iobs"), X)
            assert np.all(e_obs >= opt * (1 - 1e-9)) and np.all(e_iobs >= opt * (1 - 1e-9))
            hits += int(np.sum(e_iobs <= opt * (1 + 1e-6)))
            total += opt.size
            log_iobs.append(np.log(e_iobs / opt))
            log_obs.append(np.log(e_obs / opt))
    assert hits >= 0.35 * total
    assert np.mean(log_iobs) < 0.5 * np.mean(log_obs)


def test_iobs_rows_are_least_squares_on_their_support():
    """At convergence the correction's fixed point is the undamped least-squares fit on each row's support."""
    W, X = _layer(6, n_in=12, n_out=4, correlated=False)
    W_hat = prune_layer(W, X, 0.5, method="iobs", max_iter=500, tol=0)
    H = X.T @ X / X.shape[0]
    for w, v in zip(W, W_hat, strict=True):
        S = np.flatnonzero(v)
        np.testing.assert_allclose(v[S], np.linalg.solve(H[np.ix_(S, S)], (H @ w)[S]), rtol=1e-6)


def test_prune_layer_errors():
    W, X = _layer(7, n_in=6)
    for bad in (-0.1, 1.0, 1.5, "half", True):
        with pytest.raises(ValueError, match="'sparsity'"):
            prune_layer(W, X, bad)
    with pytest.raises(ValueError, match="divisible by 4"):
        prune_layer(W, X, None, pattern="2:4")
    with pytest.raises(ValueError, match="'pattern'"):
        prune_layer(W, X, None, pattern="2-4")
    with pytest.raises(ValueError, match="sparsity is 0.5"):
        prune_layer(W[:, :4], X[:, :4], 0.7, pattern="2:4")
    with pytest.raises(ValueError, match="n_in=6"):
        prune_layer(W, X[:, :5], 0.5)
    with pytest.raises(ValueError, match="'method'"):
        prune_layer(W, X, 0.5, method="sparsegpt")
    with pytest.raises(ValueError, match="'damping'"):
        prune_layer(W, X, 0.5, damping=-1.0)


# -- prune_mlp -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def digits_mlp():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPClassifier(hidden_layer_sizes=(24,), max_iter=300, random_state=0).fit(X[:600], y[:600])
    return mlp, X, y


@pytest.fixture(scope="module")
def regression_mlp():
    X, y = make_regression(n_samples=300, n_features=8, noise=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPRegressor(hidden_layer_sizes=(16, 8), max_iter=500, random_state=0).fit(X, y / 100)
    return mlp, X, y / 100


def test_prune_mlp_sparsity_zero_equals_original(digits_mlp, regression_mlp):
    for mlp, X, y in (digits_mlp, regression_mlp):
        pruned = prune_mlp(mlp, X[:200], 0.0, y=y[:200])
        assert pruned is not mlp
        for a, b in zip(pruned.coefs_ + pruned.intercepts_, mlp.coefs_ + mlp.intercepts_, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(pruned.predict(X), mlp.predict(X))


@pytest.mark.parametrize("method", METHODS)
def test_prune_mlp_masks_and_usability(digits_mlp, method):
    mlp, X, y = digits_mlp
    before = [W.copy() for W in mlp.coefs_]
    pruned = prune_mlp(mlp, X[:300], [0.5, 0.7], y=y[:300], method=method, n_rounds=2, random_state=0)
    np.testing.assert_array_equal((pruned.coefs_[0] != 0).sum(axis=0), 64 - 32)  # (per output unit: columns)
    np.testing.assert_array_equal((pruned.coefs_[1] != 0).sum(axis=0), 24 - round(0.7 * 24))
    for W, W0 in zip(mlp.coefs_, before, strict=True):
        np.testing.assert_array_equal(W, W0)  # the original is untouched
    assert pruned.score(X[600:], y[600:]) > 0.3  # (10 classes: chance is 0.1)
    restored = pickle.loads(pickle.dumps(pruned))
    np.testing.assert_array_equal(restored.predict(X), pruned.predict(X))
    assert clone(pruned).get_params() == mlp.get_params()


def test_prune_mlp_layers_see_pruned_inputs(regression_mlp):
    """The second layer is calibrated on the first layer's pruned outputs: pruning it alone differs."""
    mlp, X, y = regression_mlp
    both = prune_mlp(mlp, X, [0.5, 0.5, 0.0], method="obs")
    second_only = prune_mlp(mlp, X, [0.0, 0.5, 0.0], method="obs")
    A_pruned = np.maximum(X @ both.coefs_[0] + both.intercepts_[0], 0)
    expected = prune_layer(mlp.coefs_[1].T, A_pruned, 0.5, method="obs").T
    np.testing.assert_allclose(both.coefs_[1], expected, rtol=1e-10, atol=1e-12)
    assert not np.allclose(second_only.coefs_[1], expected)
    np.testing.assert_array_equal(both.coefs_[2], mlp.coefs_[2])


def test_prune_mlp_rounds_improve_calibration_loss(digits_mlp):
    """Algorithm 2 with y: the rounds' gradient steps lower the calibration log loss at 70 %; masks stay exact."""
    mlp, X, y = digits_mlp
    Xc, yc = X[:400], y[:400]

    def log_loss(net):
        P = np.clip(net.predict_proba(Xc), 1e-15, 1)
        return -np.mean(np.log(P[np.arange(yc.size), yc]))

    one_shot = prune_mlp(mlp, Xc, 0.7, method="iobs")
    rounds = prune_mlp(mlp, Xc, 0.7, y=yc, method="iobs", n_rounds=3, random_state=0)
    assert log_loss(rounds) < log_loss(one_shot)
    for W in rounds.coefs_:
        np.testing.assert_array_equal((W != 0).sum(axis=0), W.shape[0] - round(0.7 * W.shape[0]))


def test_prune_mlp_pattern(regression_mlp):
    mlp, X, y = regression_mlp
    pruned = prune_mlp(mlp, X, [None, None, 0.0], pattern="2:4", y=y, n_rounds=1)
    for W in pruned.coefs_[:2]:
        assert np.all((W.T.reshape(W.shape[1], -1, 4) != 0).sum(axis=2) <= 2)


def test_prune_mlp_errors(digits_mlp):
    mlp, X, y = digits_mlp
    with pytest.raises(NotFittedError):
        prune_mlp(MLPClassifier(), X, 0.5)
    with pytest.raises(ValueError, match="'sparsity'"):
        prune_mlp(mlp, X, 1.0)
    with pytest.raises(ValueError, match="one per layer"):
        prune_mlp(mlp, X, [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="64"):
        prune_mlp(mlp, X[:, :10], 0.5)
    with pytest.raises(ValueError, match="divisible by 3"):
        prune_mlp(mlp, X, None, pattern="1:3")
    with pytest.raises(TypeError, match="MLPRegressor or MLPClassifier"):
        prune_mlp(object(), X, 0.5)


def test_prune_mlp_rounds_never_raise_the_calibration_loss(digits_mlp):
    """Regression: a step too large made Algorithm 2's rounds diverge; the safeguard undoes such rounds."""
    from sparse_estimators.pruning._mlp import _loss, _targets

    mlp, X, y = digits_mlp
    Xc, yc = X[:400], y[:400]
    Y = _targets(mlp, yc)
    start = _loss(prune_mlp(mlp, Xc, 0.7, y=yc, n_rounds=0), Xc, Y)
    after = _loss(prune_mlp(mlp, Xc, 0.7, y=yc, n_rounds=4, learning_rate=50.0), Xc, Y)
    assert after <= start


def test_mlp_gradient_matches_finite_differences(digits_mlp, regression_mlp):
    """The numpy backward pass against central differences of the network's loss (log loss; squared error)."""
    from sparse_estimators.pruning._mlp import _gradient, _loss, _targets

    for mlp, X, y in (digits_mlp, regression_mlp):
        net = prune_mlp(mlp, X[:100], 0.5)  # (a pruned copy: zeros included)
        Xc, Y = X[:100], _targets(mlp, y[:100])
        g_coef, g_int = _gradient(net, Xc, Y)
        rng = np.random.default_rng(0)
        for layer in range(len(net.coefs_)):
            for _ in range(3):
                i, j = (rng.integers(s) for s in net.coefs_[layer].shape)
                h = 1e-6
                net.coefs_[layer][i, j] += h
                up = _loss(net, Xc, Y)
                net.coefs_[layer][i, j] -= 2 * h
                down = _loss(net, Xc, Y)
                net.coefs_[layer][i, j] += h
                assert (up - down) / (2 * h) == pytest.approx(g_coef[layer][i, j], rel=1e-4, abs=1e-8)
            net.intercepts_[layer][0] += h
            up = _loss(net, Xc, Y)
            net.intercepts_[layer][0] -= 2 * h
            down = _loss(net, Xc, Y)
            net.intercepts_[layer][0] += h
            assert (up - down) / (2 * h) == pytest.approx(g_int[layer][0], rel=1e-4, abs=1e-8)


def test_prune_mlp_validation_fraction_judges_rounds_on_held_out_rows(regression_mlp):
    """With ``validation_fraction`` the rounds may not raise the loss on the held-out rows (drawn by random_state)."""
    from sparse_estimators.pruning._mlp import _loss, _targets

    mlp, X, y = regression_mlp
    Xc, yc = X[:60], y[:60]
    Y = _targets(mlp, yc)
    held_out = np.random.RandomState(3).permutation(60)[:15]  # (the documented draw: 0.25 of 60)
    fit = np.setdiff1d(np.arange(60), held_out)
    layerwise = prune_mlp(mlp, Xc, 0.5, y=yc, n_rounds=0)
    judged = prune_mlp(mlp, Xc, 0.5, y=yc, n_rounds=6, learning_rate=1.0, validation_fraction=0.25,
                       random_state=3)
    free = prune_mlp(mlp, Xc, 0.5, y=yc, n_rounds=6, learning_rate=1.0, random_state=3)
    assert _loss(judged, Xc[held_out], Y[held_out], penalty=False) <= _loss(layerwise, Xc[held_out], Y[held_out],
                                                                           penalty=False)
    assert not np.array_equal(judged.predict(Xc), layerwise.predict(Xc))  # (some round was kept)
    assert not np.array_equal(judged.predict(Xc), free.predict(Xc))  # (other steps: on the 45 other rows only)
    # the rounds were taken on the other rows: their training loss went down from the layer-wise projection
    assert _loss(judged, Xc[fit], Y[fit]) < _loss(layerwise, Xc[fit], Y[fit])
    for W in judged.coefs_:
        np.testing.assert_array_equal((W != 0).sum(axis=0), W.shape[0] - round(0.5 * W.shape[0]))


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.1, True, "0.2"])
def test_prune_mlp_validation_fraction_errors(regression_mlp, value):
    mlp, X, y = regression_mlp
    with pytest.raises(ValueError, match="'validation_fraction'"):
        prune_mlp(mlp, X, 0.5, y=y, validation_fraction=value)


def test_prune_mlp_validation_fraction_needs_rows_on_both_sides(regression_mlp):
    mlp, X, y = regression_mlp
    with pytest.raises(ValueError, match="validation_fraction=0.1 of 4 calibration samples"):
        prune_mlp(mlp, X[:4], 0.5, y=y[:4], validation_fraction=0.1)


def test_damping_zero_with_inputs_never_active():
    """damping=0 with more inputs always 0 (dead ReLU units) than a row drops: the restricted solves are singular.

    'iobs' used to raise LinAlgError('Singular matrix') from its batched per-row correction; it now uses the
    pseudo-inverse there (as the row and group corrections do), so the dead inputs get weight 0.
    """
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 8))
    X[:, 3:] = 0.0  # 5 of 8 inputs never active; a row keeps 4: at least one dead input is in every support
    W = rng.standard_normal((5, 8))
    obs = prune_layer(W, X, 0.5, method="obs", damping=0.0)
    out = prune_layer(W, X, 0.5, method="iobs", damping=0.0)
    assert np.all(out[:, 3:] == 0) and np.all((out != 0).sum(axis=1) <= 4)
    # three live inputs and four kept weights: every row reproduces the dense outputs exactly
    np.testing.assert_allclose(X @ out.T, X @ W.T, rtol=1e-10, atol=1e-10)
    assert np.all(layer_error(W, out, X) <= layer_error(W, obs, X) + 1e-12)


def test_damping_zero_with_dependent_inputs_is_a_clear_error():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((80, 6))
    X[:, 5] = X[:, 4]  # H singular with a non-zero diagonal: SparseGPT's sweep needs H^{-1}
    W = rng.standard_normal((3, 6))
    for method in ("obs", "iobs"):
        with pytest.raises(ValueError, match="use a damping > 0"):
            prune_layer(W, X, 0.5, method=method, damping=0.0)
    assert np.all((prune_layer(W, X, 0.5, method="iobs") != 0).sum(axis=1) == 3)  # (the default damping works)
