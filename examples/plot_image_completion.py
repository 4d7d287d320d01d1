"""
================================
Image completion with a low rank
================================

Complete a grayscale photograph from 35 % of its pixels, as in Khanna &
Kyrillidis' image-completion experiment (App. E.2 of `arXiv:1712.09379
<https://arxiv.org/abs/1712.09379>`__; see :ref:`references`), with
:func:`~sparse_estimators.impute.complete_matrix`: iterative thresholding of
the singular values, on the observed pixels only (the iterate is kept as
factors, the full matrix is never formed).

A photograph is not exactly low rank, so the rank is a bias-variance
trade-off: :func:`~sparse_estimators.impute.choose_rank` hides 10 % of the
observed pixels and measures the error on them at each rank. Hard
thresholding (the best rank-r approximation at each step) is compared with
the ``lq`` operator lifted to the singular values (Liu & Barber, Sec. 5,
`arXiv:1804.08841 <https://arxiv.org/abs/1804.08841>`__),
which shrinks them and overfits less at higher ranks.
"""

# %%
# A photograph, 35 % of its pixels observed
# -----------------------------------------
# scikit-learn's sample image, in grayscale and downscaled three times (to keep
# the example fast).
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_sample_image

from sparse_estimators.impute import choose_rank, complete_matrix

image = load_sample_image("china.jpg").mean(axis=2) / 255.0
h, w = image.shape[0] // 3, image.shape[1] // 3
image = image[: 3 * h, : 3 * w].reshape(h, 3, w, 3).mean(axis=(1, 3))

rng = np.random.default_rng(0)
mask = rng.uniform(size=image.shape) < 0.35
rows, cols = np.nonzero(mask)
observed = (rows, cols, image[rows, cols])  # the observed entries: rows, columns, values
print(f"{image.shape[0]} x {image.shape[1]} image, {mask.sum()} of {mask.size} pixels observed")

# %%
# Choosing the rank on held-out pixels
# ------------------------------------
# ``center=True`` fits a mean per column alongside the low-rank part.
ranks = [2, 4, 6, 8, 12]
options = {"center": True, "tol": 1e-4, "max_iter": 200}
validation = {name: choose_rank(observed, ranks, shape=image.shape, thresholding=name, **options)
              for name in ["hard", "lq"]}

fig, ax = plt.subplots(figsize=(5, 3.5))
for name, result in validation.items():
    ax.plot(result.ranks, result.mean_errors, "o-", label=f"{name} (best rank {result.best_rank})")
ax.set_xlabel("rank")
ax.set_ylabel("RMSE on held-out pixels")
ax.legend()
fig.tight_layout()

# %%
# Completion at the chosen ranks
# ------------------------------
# All the observed pixels now; the error is measured on the 65 % never observed.
completed = {}
for name, result in validation.items():
    fit = complete_matrix(observed, result.best_rank, shape=image.shape, thresholding=name, **options)
    completed[name] = np.clip(fit.to_dense(), 0.0, 1.0)
    rmse = np.sqrt(np.mean((completed[name][~mask] - image[~mask]) ** 2))
    print(f"{name}: rank {result.best_rank}, {fit.n_iter} iterations, RMSE on unobserved pixels {rmse:.4f}")

shown = np.where(mask, image, np.nan)
panels = [("original", image), ("35 % observed", shown),
          *[(f"{name}, rank {validation[name].best_rank}", completed[name]) for name in completed]]
fig, axes = plt.subplots(2, 2, figsize=(8, 6))
for ax, (title, picture) in zip(axes.ravel(), panels, strict=True):
    ax.imshow(picture, cmap="gray", vmin=0, vmax=1)
    ax.set_title(title)
    ax.axis("off")
fig.tight_layout()
plt.show()

# %%
# For a data table with missing values (``np.nan``), the same completion is
# available as a scikit-learn transformer,
# :class:`~sparse_estimators.impute.LowRankImputer`, which also fills new rows
# (least squares in the learned row space) inside a ``Pipeline``.
