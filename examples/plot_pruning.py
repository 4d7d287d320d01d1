"""
=============================================
Pruning a trained network layer by layer
=============================================

A small multi-layer perceptron trained on scikit-learn's digits is pruned
with :func:`~sparse_estimators.pruning.prune_mlp`: every layer loses the same
fraction of the weights of each output unit, chosen on a calibration set by

* magnitude (the largest weights stay),
* Wanda (weights scaled by the norm of their input),
* one-shot OBS (SparseGPT: the remaining weights of each row compensate),
* I-OBS (the one-shot solution improved by iterating on the layer problem,
  then a few rounds of gradient step and re-projection, the I-OBS paper's
  Algorithm 2).

See :ref:`pruning` for the layer problem.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from sparse_estimators.pruning import layer_error, prune_layer, prune_mlp

X, y = load_digits(return_X_y=True)
X = X / 16.0
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    mlp = MLPClassifier(hidden_layer_sizes=(64,), max_iter=300, random_state=0).fit(X_train, y_train)
X_cal, y_cal = X_train[:400], y_train[:400]
print(f"dense test accuracy: {mlp.score(X_test, y_test):.3f}")

# %%
# One layer: the reconstruction error
# -----------------------------------
# The first layer's weight matrix is ``coefs_[0].T`` (64 hidden units x 64
# pixels). Each method's relative error ``||X W^T - X W_hat^T||^2 / ||X W^T||^2``
# on the calibration inputs:
W = mlp.coefs_[0].T
scale = np.sum((X_cal @ W.T) ** 2) / X_cal.shape[0]
for method in ["magnitude", "wanda", "obs", "iobs"]:
    errors = [layer_error(W, prune_layer(W, X_cal, s, method=method), X_cal).sum() / scale for s in (0.5, 0.7)]
    print(f"{method:>9}: 50 % {errors[0]:.4f}   70 % {errors[1]:.4f}")

# %%
# The whole network
# -----------------
# Every layer pruned in order, each on the outputs of the already pruned
# layers before it; 'iobs' with ``y`` adds three rounds of Algorithm 2.
levels = [0.5, 0.6, 0.7, 0.8]
methods = {"magnitude": {}, "wanda": {}, "obs": {}, "iobs": {"y": y_cal, "n_rounds": 3}}
scores = {m: [prune_mlp(mlp, X_cal, s, method=m, random_state=0, **kw).score(X_test, y_test) for s in levels]
          for m, kw in methods.items()}

fig, ax = plt.subplots(figsize=(6, 4))
for m, values in scores.items():
    ax.plot([100 * s for s in levels], values, marker="o", label=m)
ax.axhline(mlp.score(X_test, y_test), color="gray", ls="--", label="dense")
ax.set_xlabel("weights removed in every layer (%)")
ax.set_ylabel("test accuracy")
ax.legend()
ax.set_title("Pruning an MLP on digits")
plt.show()

# %%
# The 2:4 pattern (two non-zeros in every four consecutive inputs):
pruned = prune_mlp(mlp, X_cal, None, pattern="2:4", y=y_cal, random_state=0)
blocks = pruned.coefs_[0].T.reshape(64, -1, 4)
print("non-zeros per block of 4:", np.unique((blocks != 0).sum(axis=2)))
print(f"2:4 I-OBS test accuracy: {pruned.score(X_test, y_test):.3f}")
