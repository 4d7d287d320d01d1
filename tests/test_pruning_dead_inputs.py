"""Layer pruning with dead inputs (always 0 on the calibration data, as ReLU units that never fire).

SparseGPT's sweep zeroes their weights and puts 1 on their diagonal of ``H``; that 1 also entered the
damping ``damping * mean(diag H)`` and the sweep's singularity test, so 'obs' and 'iobs' changed with
the unit of the calibration inputs. The references here are the OBS equations with explicit inverses
(``H = X^T X / n``, ``lambda`` from its own diagonal) and the invariance of the layer problem to the
inputs' scale.
"""

import numpy as np
import pytest

from sparse_estimators.pruning import prune_layer


def _relu_layer(seed=0, n=200, n_in=8, n_out=6, dead=(3, 6)):
    """Correlated ReLU inputs with the columns ``dead`` always 0, and dense weights."""
    rng = np.random.default_rng(seed)
    X = np.maximum(rng.normal(size=(n, n_in)) @ rng.normal(size=(n_in, n_in)), 0.0)
    X[:, list(dead)] = 0.0
    return rng.normal(size=(n_out, n_in)), X


def _obs_equations(W, X, sparsity, damping):
    """One-shot OBS column by column (Frantar & Alistarh 2022, eq. 3 and 4), one block, dead weights zeroed first.

    At column ``i`` the free weights are ``F = {i, ..., n_in - 1}``; the saliency of weight ``j`` is
    ``w_j^2 / [H_F^{-1}]_jj`` (``H = X^T X / n + lambda I``, ``lambda = damping * mean(diag(X^T X / n))``),
    each row prunes its ``round(sparsity * n_in)`` smallest, and pruning weight ``i`` updates the free
    ones by ``-w_i / [H_F^{-1}]_ii * H_F^{-1}[i, :]``.
    """
    H = X.T @ X / X.shape[0]
    n_in = H.shape[0]
    H = H + damping * np.mean(np.diag(H)) * np.eye(n_in)
    W = np.where(np.diag(X.T @ X) == 0, 0.0, W)
    tails = [np.linalg.inv(H[i:, i:]) for i in range(n_in)]
    saliency = W**2 / np.array([t[0, 0] for t in tails])
    pruned = np.zeros(W.shape, dtype=bool)
    for r, row in enumerate(saliency):
        pruned[r, np.argsort(row, kind="stable")[:round(sparsity * n_in)]] = True
    for i in range(n_in):
        for r in np.flatnonzero(pruned[:, i]):
            W[r, i:] -= W[r, i] / tails[i][0, 0] * tails[i][0, :]
            W[r, i] = 0.0
    return W


@pytest.mark.parametrize("scale", [1.0, 2.0**-7, 2.0**-10])
def test_obs_with_dead_inputs_follows_the_obs_equations_at_every_scale(scale):
    """Before: lambda counted the dead inputs' diagonal as 1, not 0 (at 2^-7 one row of 6 took another mask)."""
    W, X = _relu_layer()
    expected = _obs_equations(W, scale * X, 0.5, 0.01)
    got = prune_layer(W, scale * X, 0.5, method="obs", blocksize=W.shape[1])
    np.testing.assert_array_equal(got != 0, expected != 0)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10 * np.abs(W).max())


@pytest.mark.parametrize("pattern, sparsity", [(None, 0.5), (None, 0.75), ("2:4", None)])
@pytest.mark.parametrize("method", ["obs", "iobs"])
def test_dead_inputs_leave_the_result_independent_of_the_calibration_scale(method, pattern, sparsity):
    """Scaling ``X`` by a power of two scales ``H`` exactly: the pruned weights must not move."""
    W, X = _relu_layer(1)
    ref = prune_layer(W, X, sparsity, method=method, pattern=pattern)
    for scale in (2.0**-4, 2.0**-7, 2.0**-10, 2.0**6):
        got = prune_layer(W, scale * X, sparsity, method=method, pattern=pattern)
        np.testing.assert_array_equal(got != 0, ref != 0)
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12 * np.abs(W).max())


@pytest.mark.parametrize("method", ["obs", "iobs"])
def test_damping_zero_with_a_dead_input_and_small_inputs_is_not_refused_as_singular(method):
    """Before: at inputs of 2^-20 (not rescaled) the dead input's 1 made ``H`` look singular: a ValueError.

    The live inputs are independent (full-rank ``H`` on them), so the sweep needs no damping; the
    result must be the one at the inputs' unit scale.
    """
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 8))
    X[:, 5] = 0.0
    W = rng.normal(size=(4, 8))
    ref = prune_layer(W, X, 0.5, method=method, damping=0.0)
    got = prune_layer(W, 2.0**-20 * X, 0.5, method=method, damping=0.0)
    np.testing.assert_array_equal(got != 0, ref != 0)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12 * np.abs(W).max())
