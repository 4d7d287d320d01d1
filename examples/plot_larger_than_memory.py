"""
===============================================
Larger than memory: fitting on a dask array
===============================================

A :class:`dask.array.Array` chunked by rows can be passed to ``fit`` as it is:
the estimators never gather it into the client. Least squares needs a single
pass over the chunks, which builds the centred Gram statistics
(``X^T X``, ``X^T y`` and the means, a ``p x p`` matrix and a few vectors);
the solver, the splicing search, ``k=None``,
:class:`~sparse_estimators.model_selection.SparsityIC` and
:class:`~sparse_estimators.model_selection.SparsityCV` then run in memory on
them. ``n_passes_`` counts the passes; predictions on a dask array are lazy.

Here a small array on a :class:`distributed.LocalCluster` (threads, so that
the example stays light); with data larger than memory, the same code runs
with the array read from disk (``dask.array.from_zarr``) or generated in
blocks, on a cluster of any size.
"""

# %%
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster

from sparse_estimators import IHTClassifier, IHTRegressor
from sparse_estimators.model_selection import SparsityCV, SparsityIC

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
client = Client(cluster)

rng = np.random.RandomState(0)
n, p = 20_000, 30
beta = np.zeros(p)
beta[[2, 7, 11, 19, 25]] = [1.5, -2.0, 1.0, 0.8, -1.2]
X = da.random.RandomState(0).standard_normal((n, p), chunks=(4_000, p))  # 5 blocks of rows
y = X @ beta + da.random.RandomState(1).standard_normal(n, chunks=4_000)

# %%
# One pass for a fit at fixed ``k``
# ---------------------------------
est = IHTRegressor(k=5).fit(X, y)
print("support:", est.support_, "passes over X:", est.n_passes_)

# %%
# The same fit in memory gives the same model (to rounding).
in_memory = IHTRegressor(k=5).fit(X.compute(), y.compute())
print("same support:", np.array_equal(in_memory.support_, est.support_),
      "largest coefficient difference:", float(np.abs(in_memory.coef_ - est.coef_).max()))

# %%
# Choosing ``k`` also costs one pass
# -----------------------------------
# The whole path and its information criteria come from the same statistics.
search = SparsityIC(IHTRegressor(), k_grid=range(1, 13)).fit(X, y)
print("chosen k:", search.k_, "passes over X:", search.n_passes_)

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(search.k_grid_, search.criterion_, marker="o")
ax.axvline(search.k_, color="grey", linestyle="--")
ax.set_xlabel("k")
ax.set_ylabel("extended BIC")
ax.set_title("SparsityIC on a dask array (one pass)")
fig.tight_layout()

# %%
# Cross-validation in the same single pass
# ----------------------------------------
# :class:`~sparse_estimators.model_selection.SparsityCV` accumulates each
# fold's statistics in the one pass (folds by row index: ``cv=5`` gives
# scikit-learn's ``KFold(5)``); every fold's training loss and validation
# R^2 then come from them, in memory.
cv_search = SparsityCV(IHTRegressor(), k_grid=range(1, 13), cv=5).fit(X, y)
print("chosen k:", cv_search.k_, "passes over X:", cv_search.n_passes_)

# %%
# Lazy predictions
# ----------------
# ``predict`` (and ``predict_proba``, ``decision_function``) return dask
# arrays with X's row chunks; nothing runs until they are computed.
pred = est.predict(X)
print(type(pred).__name__, pred.chunks)
print("R^2:", est.score(X, y))

# %%
# Classifiers
# -----------
# The logistic loss changes its curvature with the fit: each gradient, and
# each Newton step of the refits on a support, is a pass over the chunks.
labels = (y > 0).astype(int)
clf = IHTClassifier(k=5).fit(X, labels)
print("support:", clf.support_, "passes over X:", clf.n_passes_)

client.close()
cluster.close()
