"""prune_layer against PyTorch's own pruning, and the PyTorch example (skipped without torch)."""

import runpy
from pathlib import Path

import numpy as np
import pytest

from sparse_estimators.pruning import prune_layer

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("sparsity", [0.25, 0.5, 0.7])
def test_magnitude_equals_torch_l1_unstructured_per_row(sparsity):
    """'magnitude' prunes each row as ``torch.nn.utils.prune.l1_unstructured`` prunes that row."""
    from torch.nn.utils import prune

    rng = np.random.RandomState(0)
    W = rng.standard_normal((12, 40))
    X = rng.standard_normal((100, 40))
    expected = np.empty_like(W)
    for i, row in enumerate(W):
        layer = torch.nn.Linear(40, 1, bias=False, dtype=torch.float64)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(row[None, :]))
        prune.l1_unstructured(layer, name="weight", amount=sparsity)
        expected[i] = layer.weight.detach().numpy()[0]
    np.testing.assert_array_equal(prune_layer(W, X, sparsity, method="magnitude"), expected)


def test_torch_example_runs(capsys):
    runpy.run_path(str(Path(__file__).resolve().parent.parent / "examples" / "torch_prune_layer.py"))
    out = capsys.readouterr().out
    assert "non-zeros per row: [32]" in out and "non-zeros per row: [64]" in out
