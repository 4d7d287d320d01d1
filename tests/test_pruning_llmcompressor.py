"""The one-shot solver ('obs') against llmcompressor's SparseGPT on ``nn.Linear`` layers (skipped without it).

llmcompressor (``pip install llmcompressor``, CPU is enough) is the
maintained SparseGPT implementation (``SparseGPTModifier``); its per-layer
routine ``sparsify_weight`` takes the layer and its accumulated Hessian.
Two of its choices differ from ours by design: it computes in float32
(``SGPT_PRECISION``; set to float64 here, so the two runs do the same
arithmetic up to rounding) and, unstructured, it chooses the mask of a
block over all rows at once (``int(numel * sparsity) + 1`` entries below a
threshold), where 'obs' keeps the same number in every row, as OBC. The
N:M pattern is chosen per row by both, so whole layers are compared; the
unstructured mask is compared row by row (each row a one-output layer, one
block), where both rules prune the same number of entries (on a whole
8 x 64 layer at 50 %, llmcompressor's rows kept 26 to 38 of 64).
"""

import numpy as np
import pytest

from sparse_estimators.pruning import prune_layer

torch = pytest.importorskip("torch")
sgpt = pytest.importorskip("llmcompressor.modifiers.pruning.sparsegpt.sgpt_sparsify")


@pytest.fixture
def float64_sparsegpt(monkeypatch):
    monkeypatch.setattr(sgpt, "SGPT_PRECISION", torch.float64)


def _layer(seed, n=300, n_in=64, n_out=8):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n, n_in)) @ (np.eye(n_in) + 0.3 * rng.standard_normal((n_in, n_in)))
    return rng.standard_normal((n_out, n_in)), X


def _llmcompressor(W, X, sparsity, prune_n, prune_m, blocksize, damping):
    """``sparsify_weight`` on an ``nn.Linear`` holding ``W``, its Hessian accumulated from ``X`` in two batches."""
    layer = torch.nn.Linear(W.shape[1], W.shape[0], bias=False, dtype=torch.float64)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(W))
    H, n = sgpt.make_empty_hessian(layer), 0
    for batch in np.array_split(X, 2):
        H, n = sgpt.accumulate_hessian(torch.from_numpy(batch), layer, H, n)
    _, W_hat = sgpt.sparsify_weight(layer, {layer: H}, sparsity, prune_n, prune_m, blocksize, damping, False)
    return W_hat.detach().numpy()


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("blocksize", [16, 128])
def test_obs_equals_llmcompressor_sparsegpt_2_4(float64_sparsegpt, seed, blocksize):
    W, X = _layer(seed)
    ours = prune_layer(W, X, None, method="obs", pattern="2:4", damping=0.01, blocksize=blocksize)
    ref = _llmcompressor(W, X, 0.5, 2, 4, blocksize, 0.01)
    np.testing.assert_array_equal(ours != 0, ref != 0)
    np.testing.assert_allclose(ours, ref, rtol=1e-7, atol=1e-9 * np.abs(W).max())


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_pruned", [32, 45])
def test_obs_equals_llmcompressor_sparsegpt_unstructured_per_row(float64_sparsegpt, seed, n_pruned):
    W, X = _layer(seed)
    n_in = W.shape[1]
    ours = prune_layer(W, X, n_pruned / n_in, method="obs", damping=0.01, blocksize=n_in)
    # llmcompressor prunes int(n_in * sparsity) + 1 entries of a one-row block: ask for n_pruned - 1
    ref = np.vstack([_llmcompressor(row[None, :], X, (n_pruned - 1) / n_in, 0, 0, n_in, 0.01) for row in W])
    assert np.all((ref == 0).sum(axis=1) == n_pruned)
    np.testing.assert_array_equal(ours != 0, ref != 0)
    np.testing.assert_allclose(ours, ref, rtol=1e-7, atol=1e-9 * np.abs(W).max())


def test_float32_sparsegpt_agrees_to_single_precision():
    """With its own float32 arithmetic the 2:4 masks still agree (a near-tie may flip), the weights to float32."""
    W, X = _layer(2)
    ours = prune_layer(W, X, None, method="obs", pattern="2:4", damping=0.01, blocksize=128)
    ref = _llmcompressor(W, X, 0.5, 2, 4, 128, 0.01)
    same = (ours != 0) == (ref != 0)
    assert np.mean(same) >= 0.99
    assert np.max(np.abs(ours - ref)[same]) <= 1e-4 * np.abs(W).max()  # (measured: 1.3e-6)
