"""
Pruning the layers of a PyTorch model
=====================================

:func:`~sparse_estimators.pruning.prune_layer` takes NumPy arrays: the
weights of a ``torch.nn.Linear`` (``layer.weight``, shape ``(n_out, n_in)``)
and the inputs that layer sees on calibration data. Here a small
``torch.nn.Sequential`` is pruned to 50 % in every output row, layer by layer,
each layer calibrated on the outputs of the already-pruned layers before it
(as OBC and SparseGPT do), and the pruned weights are written back.

PyTorch is not a dependency of the package: this example needs it installed
(``pip install torch``) and is not run in the documentation build.
"""

# %%
import numpy as np
import torch

from sparse_estimators.pruning import layer_error, prune_layer

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
# correlated inputs, as real features are (with independent inputs magnitude pruning is near-optimal)
calibration = torch.randn(1024, 16) @ torch.randn(16, 64) + 0.3 * torch.randn(1024, 64)
with torch.no_grad():
    dense_output = model(calibration).numpy()

# %%
# Layer by layer: the inputs of each ``Linear`` are those produced by the
# pruned layers before it.
inputs = calibration
with torch.no_grad():
    for module in model:
        if isinstance(module, torch.nn.Linear):
            W = module.weight.numpy().astype(np.float64)
            X = inputs.numpy().astype(np.float64)
            W_magnitude = prune_layer(W, X, 0.5, method="magnitude")
            W_iobs = prune_layer(W, X, 0.5, method="iobs")
            print(f"Linear({W.shape[1]}, {W.shape[0]}): layer error magnitude "
                  f"{layer_error(W, W_magnitude, X).sum():.4f}, I-OBS {layer_error(W, W_iobs, X).sum():.4f}")
            module.weight.copy_(torch.from_numpy(W_iobs).to(module.weight.dtype))
        inputs = module(inputs)
    pruned_output = model(calibration).numpy()

# %%
# Every row of every layer keeps half of its weights, and the network's
# outputs stay close to the dense network's.
for module in model:
    if isinstance(module, torch.nn.Linear):
        print("non-zeros per row:", np.unique((module.weight != 0).sum(dim=1).numpy()))
relative = np.linalg.norm(pruned_output - dense_output) / np.linalg.norm(dense_output)
print(f"relative change of the outputs on the calibration data: {relative:.3f}")
