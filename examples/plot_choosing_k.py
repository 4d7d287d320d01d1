"""
===============================================
Choosing ``k`` with SparsityCV and SparsityIC
===============================================

:class:`~sparse_estimators.model_selection.SparsityCV` cross-validates a
warm-started path over ``k`` (one path per fold instead of one fit per ``k``
and fold) and refits the best ``k``;
:class:`~sparse_estimators.model_selection.SparsityIC` chooses ``k`` by BIC
or extended BIC from one path on all the data.
:class:`~sparse_estimators.plotting.SparsityPathDisplay` draws the score
against ``k`` and the coefficient paths.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sparse_estimators import IHTRegressor
from sparse_estimators.model_selection import SparsityCV, SparsityIC, one_standard_error, sparsity_path
from sparse_estimators.plotting import SparsityPathDisplay

rng = np.random.default_rng(0)
n_samples, n_features, k_true = 150, 60, 6
X = pd.DataFrame(rng.standard_normal((n_samples, n_features)),
                 columns=[f"x{j:02d}" for j in range(n_features)])
true_support = np.sort(rng.choice(n_features, k_true, replace=False))
coef = np.zeros(n_features)
coef[true_support] = rng.choice([-1, 1], k_true) * np.linspace(0.6, 2.0, k_true)
y = X.to_numpy() @ coef + rng.standard_normal(n_samples)
print("true features:", list(X.columns[true_support]))

# %%
# Cross-validation over a path
# ----------------------------
# The features here are already standardised; otherwise use a
# ``StandardScaler`` first (selection is by coefficient magnitude).
search = SparsityCV(IHTRegressor(), k_grid=range(1, 21), cv=5).fit(X, y)
print(f"SparsityCV chose k={search.k_} (mean R^2 {search.best_score_:.3f}):",
      list(search.feature_names_in_[search.best_estimator_.support_]))

# %%
# The display shows the mean cross-validated score with a band of one
# standard deviation, and, given the data, the coefficient path (computed
# with :func:`~sparse_estimators.model_selection.sparsity_path`): each
# feature's coefficient against ``k``.
display = SparsityPathDisplay.from_estimator(search, X, y, max_legend=8)
display.figure_.tight_layout()

# %%
# The CV curve is usually flat beyond the true sparsity: a common rule is to
# take the smallest ``k`` whose score is within one standard error of the
# best, :func:`~sparse_estimators.model_selection.one_standard_error`, passed
# as ``refit``.
search_1se = SparsityCV(IHTRegressor(), k_grid=range(1, 21), cv=5, refit=one_standard_error).fit(X, y)
print(f"one-standard-error rule: k={search_1se.k_}")

# %%
# Information criteria
# --------------------
# No cross-validation: one path on all the data, about ``cv`` times cheaper.
# BIC suits ``n_samples`` much larger than ``k``; the extended BIC also
# penalises the number of candidate supports, which matters when there are
# many features.
fig, ax = plt.subplots(1, 2, figsize=(11, 4))
for axis, criterion in zip(ax, ["bic", "ebic"], strict=True):
    selector = SparsityIC(IHTRegressor(), k_grid=range(1, 21), criterion=criterion).fit(X, y)
    print(f"SparsityIC({criterion!r}) chose k={selector.k_}")
    SparsityPathDisplay.from_estimator(selector, ax=axis)
fig.tight_layout()

# %%
# The path itself
# ---------------
# :func:`~sparse_estimators.model_selection.sparsity_path` returns the
# coefficients, supports, training objective and a fitted estimator at every
# ``k``, warm-starting each level from the previous one.
path = sparsity_path(IHTRegressor(), X, y, k_grid=range(1, 11))
for k, support, objective in zip(path.k_grid, path.supports, path.objectives, strict=True):
    print(f"k={k:2d}  objective {objective:.4f}  support {', '.join(X.columns[support])}")

# %%
# Parallel and distributed folds
# ------------------------------
# ``n_jobs`` runs the folds in parallel through joblib, so any joblib backend
# works, including Dask's on a cluster::
#
#     import joblib
#     from distributed import Client
#
#     client = Client()  # or Client("scheduler-address:8786")
#     with joblib.parallel_config(backend="dask"):
#         SparsityCV(IHTRegressor(), k_grid=range(1, 51), cv=10, n_jobs=-1).fit(X, y)
plt.show()
