"""
==========================================================
Survival after a heart attack: a Cox model with k features
==========================================================

The Worcester Heart Attack Study data (``whas500``, bundled with
`scikit-survival <https://scikit-survival.readthedocs.io>`_): 500 patients,
14 clinical variables, and the time to death or to the end of follow-up
(57 % of the times are censored). We choose how many variables a Cox
proportional-hazards model needs, fit it with exactly that many, and compare
its held-out concordance with scikit-survival's Cox model on all variables.
"""

# %%
# The data
# --------
# ``y`` is the structured array ``(event, time)`` of scikit-survival; the
# categorical variables are one-hot encoded and every column standardised.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sksurv.column import encode_categorical
from sksurv.datasets import load_whas500
from sksurv.linear_model import CoxPHSurvivalAnalysis

from sparse_estimators.model_selection import SparsityIC
from sparse_estimators.survival import IHTCoxPHSurvivalAnalysis

X, y = load_whas500()
X = encode_categorical(X)
event_name, time_name = y.dtype.names
print(f"{X.shape[0]} patients, {X.shape[1]} variables, {y[event_name].mean():.0%} deaths observed")
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0,
                                                    stratify=y[event_name])

# %%
# How many variables?
# -------------------
# :class:`~sparse_estimators.model_selection.SparsityIC` fits the path
# ``k = 1, 2, ...`` and compares the levels by the extended BIC, with minus
# twice the log partial likelihood as the fit term.
scaler = StandardScaler().fit(X_train)
search = SparsityIC(IHTCoxPHSurvivalAnalysis(), k_grid=range(1, 11)).fit(scaler.transform(X_train), y_train)
print("chosen k:", search.k_)
print("variables:", list(X.columns[search.best_estimator_.support_]))

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(search.k_grid_, search.criterion_, marker="o")
ax.axvline(search.k_, color="grey", linestyle=":")
ax.set(xlabel="k (variables)", ylabel="extended BIC", title="Choosing k on the training part")
fig.tight_layout()

# %%
# Held-out concordance
# --------------------
# Harrell's concordance index (``score``) of the sparse model against the
# Cox model on all 14 variables.
sparse = make_pipeline(StandardScaler(), IHTCoxPHSurvivalAnalysis(k=search.k_)).fit(X_train, y_train)
full = make_pipeline(StandardScaler(), CoxPHSurvivalAnalysis()).fit(X_train, y_train)
print(f"sparse model ({search.k_} variables): C-index {sparse.score(X_test, y_test):.3f}")
print(f"all {X.shape[1]} variables (scikit-survival): C-index {full.score(X_test, y_test):.3f}")

# %%
# Predicted survival curves
# -------------------------
# ``predict_survival_function`` returns step functions from Breslow's
# baseline, as scikit-survival's Cox model does.
cox = sparse[-1]
curves = cox.predict_survival_function(sparse[:-1].transform(X_test.iloc[:4]))
fig, ax = plt.subplots(figsize=(6, 3.5))
for i, curve in enumerate(curves):
    ax.step(curve.x, curve(curve.x), where="post", label=f"patient {i + 1}")
ax.set(xlabel="days", ylabel="survival probability", ylim=(0, 1.02), title="Four held-out patients")
ax.legend()
fig.tight_layout()
plt.show()
print("risk scores:", np.round(cox.predict(sparse[:-1].transform(X_test.iloc[:4])), 2))
