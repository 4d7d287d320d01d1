"""
=======================================
Convergence of the four algorithms
=======================================

The training objective after each iteration (``loss_curve_``) of the four
algorithms on one ill-conditioned least-squares problem, then the effect of
each algorithm's own hyperparameter. The problem: 200 samples, 300 strongly
correlated features (AR(1) correlation 0.9 between neighbours), 10 true
features, and ``k = 20`` (asking for more features than the truth is what
the guarantees of all four papers need).

The curves show the training objective (half the mean squared error) on a
log scale; the dotted line is the lowest value any run of the figure reached.
The legends give the number of iterations and how many of the 10 true
features the ``k = 20`` selected ones contain. The estimators refit on the selected support after the
iterations (``debias=True``); ``loss_curve_`` records the iterations only.
The figures are reused on the :ref:`user guide <user_guide>` pages.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from sparse_estimators import AcceleratedIHTRegressor, IHTRegressor, IOBSRegressor, RegularizedIHTRegressor

rng = np.random.default_rng(0)
n_samples, n_features, k_true, rho = 200, 300, 10, 0.9
ar1 = rho ** np.abs(np.subtract.outer(np.arange(n_features), np.arange(n_features)))
X = rng.standard_normal((n_samples, n_features)) @ np.linalg.cholesky(ar1).T
X = (X - X.mean(axis=0)) / X.std(axis=0)
true_support = rng.choice(n_features, k_true, replace=False)
coef = np.zeros(n_features)
coef[true_support] = rng.choice([-1, 1], k_true) * rng.uniform(1, 2, k_true)
y = X @ coef + 0.5 * rng.standard_normal(n_samples)
k = 20


def fit_all(estimators):
    """Fit each estimator; return {label: fitted estimator}."""
    return {label: est.fit(X, y) for label, est in estimators.items()}


def plot_curves(fits, title, ax=None):
    """Training objective against the iteration, and the lowest value any run reached."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    best = min(est.loss_curve_.min() for est in fits.values())
    for label, est in fits.items():
        recovered = np.intersect1d(est.support_, true_support).size
        ax.semilogy(np.arange(1, est.loss_curve_.size + 1), est.loss_curve_,
                    label=f"{label} ({est.n_iter_} it., {recovered}/{k_true})")
    ax.axhline(best, color="k", ls=":", lw=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel("training objective (half mean squared error)")
    ax.set_title(title)
    ax.legend(fontsize="small", title="(iterations, true features found)", title_fontsize="small")
    ax.figure.tight_layout()
    return ax


# %%
# The four algorithms
# -------------------
# Default hyperparameters, except regularized IHT's ``weight_step`` (its
# default, ``k / max_iter``, spreads the schedule over all ``max_iter``
# iterations). I-OBS takes a few expensive (Newton) iterations where the
# first-order methods take many cheap ones.
fits = fit_all({
    "IHT": IHTRegressor(k=k),
    "accelerated IHT": AcceleratedIHTRegressor(k=k),
    "regularized IHT": RegularizedIHTRegressor(k=k, weight_step=0.05),
    "I-OBS": IOBSRegressor(k=k),
})
plot_curves(fits, "Four algorithms, k = 20")

# %%
# IHT: the thresholding operator
# ------------------------------
# Hard thresholding keeps the selected entries; soft thresholding shrinks
# them by the largest discarded magnitude, which biases the iterates (its
# objective stalls higher); reciprocal and lq thresholding shrink less, and
# Liu & Barber (`arXiv:1804.08841 <https://arxiv.org/abs/1804.08841>`__)
# show they need a smaller ``k`` than hard thresholding for their guarantee.
# Non-hard operators return their best iterate.
plot_curves(fit_all({f"thresholding='{name}'": IHTRegressor(k=k, thresholding=name)
                     for name in ["hard", "soft", "reciprocal", "lq"]}), "IHTRegressor: operators")

# %%
# Accelerated IHT: the momentum
# -----------------------------
# ``momentum=0`` is plain IHT; the paper's universal choice is 1/4. A momentum
# step that raises the objective is discarded (restart), so large values slow
# the fit down but never make it diverge.
plot_curves(fit_all({f"momentum={m}": AcceleratedIHTRegressor(k=k, momentum=m) for m in [0.0, 0.25, 0.5, 0.9]}),
            "AcceleratedIHTRegressor: momentum")

# %%
# Regularized IHT: the weight step
# --------------------------------
# The weight step ``c`` sets how fast the per-feature penalty is removed: the
# run lasts about ``k / c`` iterations. Early iterations are worse than plain
# IHT's (the penalty is active); large ``c`` behaves like IHT.
plot_curves(fit_all({f"weight_step={c}": RegularizedIHTRegressor(k=k, weight_step=c)
                     for c in [0.05, 0.2, 1.0]} | {"IHT": IHTRegressor(k=k)}),
            "RegularizedIHTRegressor: weight step")

# %%
# I-OBS: damping and correction
# -----------------------------
# Small damping gives Newton-like steps and convergence in a handful of
# iterations; large damping tends to IHT with a step ``1 / lambda``. Without
# the OBS correction (``correction=False``, top-k I-OBS) the kept values are
# those of the Newton point, not re-optimised on the support.
plot_curves(fit_all({f"damping={d}": IOBSRegressor(k=k, damping=d) for d in [1e-3, 1e-2, 1e-1, 1.0]}
                    | {"damping=0.01, correction=False": IOBSRegressor(k=k, correction=False)}),
            "IOBSRegressor: damping")

plt.show()
