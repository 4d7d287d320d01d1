"""
==========================================================
Comparison with the Lasso and orthogonal matching pursuit
==========================================================

On a correlated design (AR(1) correlation 0.8 between neighbouring features,
as in the experiments of the accelerated-IHT paper) with 10 true features out
of 150, each method is asked for ``k`` features, ``k = 1 .. 25``:

* the iterative thresholding estimators (exactly ``k`` features, refitted on
  them);
* :class:`~sklearn.linear_model.OrthogonalMatchingPursuit` with
  ``n_nonzero_coefs=k``: greedy, exact ``k``;
* :class:`~sklearn.linear_model.Lasso`: the ``alpha`` of its regularization
  path where the model first has ``k`` non-zero coefficients (the Lasso only
  controls ``k`` indirectly), refitted by least squares on its support for a
  fair comparison of the supports.

We report the recovered fraction of the true support and the test R^2. This
is one random problem: the :doc:`comparison page </benchmarks>` averages over
many settings (and includes abess).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LinearRegression, OrthogonalMatchingPursuit, lasso_path

from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor, IOBSRegressor, RegularizedIHTRegressor

rng = np.random.default_rng(0)
n_samples, n_features, k_true, rho = 100, 150, 10, 0.8
cov_root = rho ** np.abs(np.subtract.outer(np.arange(n_features), np.arange(n_features)))
cov_root = np.linalg.cholesky(cov_root)


def sample(n):
    return rng.standard_normal((n, n_features)) @ cov_root.T


X, X_test = sample(n_samples), sample(1000)
true_support = np.sort(rng.choice(n_features, k_true, replace=False))
coef = np.zeros(n_features)
coef[true_support] = rng.choice([-1, 1], k_true) * rng.uniform(0.5, 2.0, k_true)
noise = 1.5
y = X @ coef + noise * rng.standard_normal(n_samples)
y_test = X_test @ coef + noise * rng.standard_normal(1000)
# the columns have unit variance already; centre them as a scaler would
mean = X.mean(axis=0)
X, X_test = X - mean, X_test - mean

k_grid = np.arange(1, 26)


def evaluate(support, model):
    recovered = np.intersect1d(support, true_support).size / k_true
    return recovered, model.score(X_test, y_test)


# %%
# Fit every method at every ``k``.
# Regularized IHT's default weight step ``k / max_iter`` stretches its schedule
# over ``max_iter`` iterations; with noise and ``k`` above the true sparsity the
# support then still changes late. A fixed ``weight_step`` ends the weighting
# sooner (see the estimator's documentation).
models = {
    "IHT": lambda k: IHTRegressor(k=k),
    "accelerated IHT": lambda k: AcceleratedIHTRegressor(k=k),
    "regularized IHT": lambda k: RegularizedIHTRegressor(k=k, weight_step=0.05),
    "I-OBS": lambda k: IOBSRegressor(k=k),
}
results = {name: [] for name in [*models, "OMP", "Lasso + refit"]}
alphas, lasso_coefs, _ = lasso_path(X, y - y.mean(), alphas=300, eps=1e-3)
n_active = (lasso_coefs != 0).sum(axis=0)
for k in k_grid:
    for name, make in models.items():
        est = make(int(k)).fit(X, y)
        results[name].append(evaluate(est.support_, est))
    omp = OrthogonalMatchingPursuit(n_nonzero_coefs=int(k)).fit(X, y)
    results["OMP"].append(evaluate(np.flatnonzero(omp.coef_), omp))
    first = np.flatnonzero(n_active >= k)
    support = np.flatnonzero(lasso_coefs[:, first[0]]) if first.size else np.flatnonzero(lasso_coefs[:, -1])
    refit = LinearRegression().fit(X[:, support], y)
    results["Lasso + refit"].append((np.intersect1d(support, true_support).size / k_true,
                                     refit.score(X_test[:, support], y_test)))

# %%
# Support recovery and test score against ``k``. Beyond ``k = 10`` every
# method can contain the true support; below it, the question is which
# features are found first.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
styles = {"OMP": "k--", "Lasso + refit": "k:"}
for name, values in results.items():
    values = np.array(values)
    axes[0].plot(k_grid, values[:, 0], styles.get(name, "-"), marker=None if name in styles else ".",
                 label=name)
    axes[1].plot(k_grid, values[:, 1], styles.get(name, "-"), marker=None if name in styles else ".",
                 label=name)
for ax in axes:
    ax.axvline(k_true, color="0.7", lw=1)
    ax.set_xlabel("k (number of features)")
axes[0].set_ylabel("fraction of the true support recovered")
axes[1].set_ylabel("test R^2")
axes[1].set_ylim(max(0.0, axes[1].get_ylim()[0]), None)
axes[0].legend()
fig.tight_layout()

# %%
# At the true sparsity:
for name, values in results.items():
    recovered, score = values[k_true - 1]
    print(f"{name:>16}: recovered {recovered:.0%} of the support, test R^2 {score:.4f}")
