"""
==========
Quickstart
==========

Fit a linear model that uses **exactly** ``k`` features, for regression and
for classification, and read off which features it selected.

Selection is by coefficient magnitude, which depends on the scale of the
features: the estimators go behind a :class:`~sklearn.preprocessing.StandardScaler`
in a :class:`~sklearn.pipeline.Pipeline`.
"""

# %%
# Regression: a sparse signal
# ---------------------------
# Fifty features, three of which carry the signal.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import IHTClassifier, IHTRegressor

rng = np.random.default_rng(0)
n_samples, n_features = 200, 50
X = rng.standard_normal((n_samples, n_features))
true_coef = np.zeros(n_features)
true_coef[[3, 17, 42]] = [2.0, -3.0, 1.0]
y = X @ true_coef + 0.1 * rng.standard_normal(n_samples)

model = make_pipeline(StandardScaler(), IHTRegressor(k=3)).fit(X, y)
iht = model[-1]
print("selected features:", iht.support_)
print("their coefficients:", np.round(iht.coef_[iht.support_], 3))
print(f"iterations: {iht.n_iter_}, training R^2: {model.score(X, y):.4f}")

# %%
# ``coef_`` has exactly ``k`` non-zero entries; after the sparse solver the
# model is refitted by least squares on the selected support
# (``debias=True``), so the kept coefficients are not shrunk.
fig, ax = plt.subplots(figsize=(7, 3))
ax.stem(np.arange(n_features), true_coef, linefmt="C0-", markerfmt="C0o", basefmt=" ", label="true")
ax.stem(np.arange(n_features), iht.coef_ * model[0].scale_ ** -1, linefmt="C1--", markerfmt="C1x",
        basefmt="k-", label="IHTRegressor(k=3), original scale")
ax.set_xlabel("feature")
ax.set_ylabel("coefficient")
ax.legend()
fig.tight_layout()

# %%
# Classification
# --------------
# The classifiers use the logistic loss (multinomial for more than two
# classes, with one support shared by all classes). Here, five of the thirty
# features of the breast cancer data set.
data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(data.data, data.target, stratify=data.target,
                                                    random_state=0)
clf = make_pipeline(StandardScaler(), IHTClassifier(k=5)).fit(X_train, y_train)
print("selected:", ", ".join(data.feature_names[clf[-1].support_]))
print(f"test accuracy with 5 features: {clf.score(X_test, y_test):.3f}")

# %%
# Any scikit-learn tool works, for instance cross-validation:
scores = cross_val_score(make_pipeline(StandardScaler(), IHTClassifier(k=5)), data.data, data.target, cv=5)
print(f"5-fold accuracy: {scores.mean():.3f} +/- {scores.std():.3f}")
