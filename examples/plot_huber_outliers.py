"""
=======================================================
Outliers in the target: Huber's loss at exactly ``k``
=======================================================

``loss='huber'`` is squared error for residuals up to ``epsilon`` (1.35, as
in scikit-learn's :class:`~sklearn.linear_model.HuberRegressor`) times a
robust scale of the residuals, and absolute error beyond: a few gross errors
in ``y`` cannot pull the fit, nor the choice of the ``k`` features.

The data are scikit-learn's diabetes data (442 patients, disease progression
after one year from age, sex, body mass index, blood pressure and six blood
serum measurements), with their pairwise products and squares as candidate
columns. In the training rows, one target in ten is corrupted as a data-entry
error would: an extra digit (the value times 10). The models are scored by
R^2 on clean test rows.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import HuberRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from sparse_estimators import IHTRegressor

data = load_diabetes()
expand = PolynomialFeatures(degree=2, include_bias=False).fit(data.data)
names = expand.get_feature_names_out(data.feature_names)
keep = names != "sex^2"  # sex is binary: its square repeats it
X = StandardScaler().fit_transform(expand.transform(data.data)[:, keep])
names = names[keep]
X_train, X_test, y_train, y_test = train_test_split(X, data.target, test_size=0.3, random_state=0)

rng = np.random.default_rng(0)
corrupted = rng.choice(len(y_train), len(y_train) // 10, replace=False)
y_dirty = y_train.copy()
y_dirty[corrupted] *= 10
print(f"{X.shape[1]} candidate columns; {corrupted.size} of {len(y_train)} training targets corrupted")

# %%
# Fits at ``k = 6``
# -----------------
# The reference is least squares on the clean targets; then least squares
# and Huber's loss on the corrupted ones, and ``HuberRegressor`` on all
# columns.
k = 6
models = {
    "least squares, clean y": (IHTRegressor(k=k), y_train),
    "least squares, corrupted y": (IHTRegressor(k=k), y_dirty),
    "Huber, corrupted y": (IHTRegressor(k=k, loss="huber"), y_dirty),
    "HuberRegressor (all columns), corrupted y": (HuberRegressor(max_iter=1000), y_dirty),
}
reference = set(models["least squares, clean y"][0].fit(X_train, y_train).support_)
for name, (model, target) in models.items():
    model.fit(X_train, target)
    r2 = r2_score(y_test, model.predict(X_test))  # (clean rows: R^2 for all; Huber's own score is D^2 of its loss)
    line = f"{name:>42}: test R^2 {r2:.3f}"
    if hasattr(model, "support_"):
        line += f", {len(reference & set(model.support_))} of the clean fit's {k} columns: "
        line += ", ".join(names[model.support_])
    print(line)

# %%
# The coefficients of the columns selected on the clean targets: least
# squares on the corrupted targets distorts them (and selects other
# columns), Huber's loss stays close.
ref = sorted(reference)
width = 0.27
fig, ax = plt.subplots(figsize=(7, 3.5))
for i, name in enumerate(["least squares, clean y", "least squares, corrupted y", "Huber, corrupted y"]):
    ax.bar(np.arange(len(ref)) + (i - 1) * width, models[name][0].coef_[ref], width, label=name)
ax.set_xticks(np.arange(len(ref)), names[ref], rotation=30, ha="right")
ax.set_ylabel("coefficient (standardised columns)")
ax.axhline(0, color="gray", lw=0.5)
ax.legend(fontsize=8)
fig.tight_layout()

# %%
# The scale: ``loss='huber'`` estimates it as 1.4826 times the median
# absolute deviation of the residuals of a first fit, so the threshold
# follows the units of ``y``, and multiplying ``y`` by 100 multiplies the
# coefficients by 100:
huber = models["Huber, corrupted y"][0]
scaled = IHTRegressor(k=k, loss="huber").fit(X_train, 100 * y_dirty)
print("same support:", np.array_equal(scaled.support_, huber.support_),
      "; coefficients ratio:", np.round(scaled.coef_[huber.support_] / huber.coef_[huber.support_], 6))
