"""
=====================================================
Grid search over ``k`` and the thresholding operator
=====================================================

The estimators have flat constructor hyperparameters, so
:class:`~sklearn.model_selection.GridSearchCV` searches over ``k``, the
``thresholding`` operator and the step size with no adapter, here inside a
:class:`~sklearn.pipeline.Pipeline` with a
:class:`~sklearn.preprocessing.StandardScaler` (selection by magnitude needs
standardised features).

A ``k`` larger than the number of features is clipped with a warning rather
than an error, so a grid never fails on it.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import IHTRegressor
from sparse_estimators.thresholding import Reciprocal

rng = np.random.default_rng(0)
n_samples, n_features = 200, 40
X = rng.standard_normal((n_samples, n_features))
coef = np.zeros(n_features)
true_support = np.sort(rng.choice(n_features, 6, replace=False))
coef[true_support] = rng.choice([-1, 1], 6) * rng.uniform(1, 3, 6)
y = X @ coef + rng.standard_normal(n_samples)
# put the features on very different scales: the scaler is needed
X = X * rng.uniform(0.1, 10.0, size=n_features)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

pipe = Pipeline([("scale", StandardScaler()), ("iht", IHTRegressor())])
param_grid = {
    "iht__k": [2, 4, 6, 8, 10, 15],
    "iht__thresholding": ["hard", "reciprocal", "lq", Reciprocal(c=0.5)],
}
search = GridSearchCV(pipe, param_grid, cv=5).fit(X_train, y_train)
print("best parameters:", search.best_params_)
print(f"test R^2: {search.score(X_test, y_test):.4f}")
print("selected:", search.best_estimator_[-1].support_, " true:", true_support)

# %%
# The cross-validated score against ``k`` for each operator. Hard
# thresholding keeps the entries unchanged; the others shrink them during the
# iterations, which can help the search find the support, and all are
# refitted on the support at the end (``debias=True``).
results = pd.DataFrame(search.cv_results_)
results["operator"] = results["param_iht__thresholding"].astype(str)
fig, ax = plt.subplots(figsize=(6, 4))
for name, group in results.groupby("operator", sort=False):
    ax.errorbar(group["param_iht__k"].astype(int), group["mean_test_score"], yerr=group["std_test_score"],
                marker="o", capsize=3, label=name)
ax.axvline(6, color="k", ls=":", lw=1, label="true number of features")
ax.set_xlabel("k")
ax.set_ylabel("mean CV R^2")
ax.legend()
fig.tight_layout()

# %%
# The step size is searchable too: ``'auto'`` backtracks, a float is a fixed
# step in multiples of ``1/L`` (``L`` the smoothness constant of the loss),
# so the same value means the same thing on every data set.
search = GridSearchCV(pipe, {"iht__k": [6], "iht__step_size": ["auto", 0.5, 1.0, 1.5]}, cv=5)
search.fit(X_train, y_train)
print(pd.DataFrame(search.cv_results_)[["param_iht__step_size", "mean_test_score", "mean_fit_time"]])
