"""Pruning trained networks layer by layer (Wu et al., *The Iterative Optimal Brain Surgeon*, Sec. 4.2).

:func:`prune_layer` prunes one weight matrix to minimise the change of the
layer's outputs on calibration inputs; :func:`prune_mlp` prunes a fitted
scikit-learn multi-layer perceptron layer by layer, optionally with the
paper's rounds of projection and gradient steps (Algorithm 2).
"""

from ._layer import layer_error, prune_layer
from ._mlp import prune_mlp

__all__ = ["layer_error", "prune_layer", "prune_mlp"]
