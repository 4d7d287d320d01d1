"""
=================================================================
Positive skewed amounts at exactly ``k`` features: card spending
=================================================================

``loss='gamma'`` fits a Gamma regression with the log link: the expected
amount is ``exp(X coef_ + intercept_)``, always positive, and each
coefficient multiplies it; the Gamma deviance weighs an error relative to the
expected amount, which suits amounts whose spread grows with their level
(claims, costs, durations). The data are the average monthly credit card
expenditure of 72 cardholders from Greene's *Econometric Analysis*, as
statsmodels ships them (``statsmodels.datasets.ccard``), with age, income and
home ownership, their products and squares as candidate columns.

``score`` is D^2, the fraction of Gamma deviance explained, as for
scikit-learn's :class:`~sklearn.linear_model.GammaRegressor`;
:class:`~sparse_estimators.model_selection.SparsityCV` uses it to choose ``k``.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import GammaRegressor
from sklearn.metrics import d2_tweedie_score
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from statsmodels.datasets import ccard

from sparse_estimators import IHTRegressor
from sparse_estimators.model_selection import SparsityCV

data = ccard.load_pandas().data
y = data["AVGEXP"].to_numpy(float)
print(f"{len(y)} cardholders; monthly spending: median {np.median(y):.0f}, mean {y.mean():.0f}, "
      f"max {y.max():.0f}")

base = data[["AGE", "INCOME", "OWNRENT"]]
expand = PolynomialFeatures(degree=2, include_bias=False).fit(base)
names = expand.get_feature_names_out()
keep = names != "OWNRENT^2"  # a binary column's square repeats it
X = StandardScaler().fit_transform(expand.transform(base)[:, keep])
names = names[keep]
print("candidate columns:", ", ".join(names))

# %%
# Cross-validated D^2 against ``k``
# ---------------------------------
# Out-of-fold predictions (5 folds) for each ``k``, for the Gamma loss and for
# least squares, against ``GammaRegressor`` on all columns. A least-squares
# model can predict a negative amount, where the Gamma deviance is not
# defined.
cv = KFold(5, shuffle=True, random_state=0)
ks = range(1, len(names) + 1)
rows = []
for k in ks:
    gamma = cross_val_predict(IHTRegressor(k=k, loss="gamma"), X, y, cv=cv)
    squares = cross_val_predict(IHTRegressor(k=k), X, y, cv=cv)
    rows.append((d2_tweedie_score(y, gamma, power=2), np.sum(squares <= 0)))
    ok = "" if rows[-1][1] == 0 else f"  (least squares: {rows[-1][1]} predictions <= 0)"
    print(f"k={k}: D^2 {rows[-1][0]:.3f}{ok}")
dense = cross_val_predict(GammaRegressor(alpha=1e-4, max_iter=1000), X, y, cv=cv)
dense_d2 = d2_tweedie_score(y, dense, power=2)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(ks, [r[0] for r in rows], "o-", label="IHTRegressor(k, loss='gamma')")
ax.axhline(dense_d2, color="gray", ls="--", label=f"GammaRegressor, all {len(names)} columns")
ax.set_xlabel("k (number of columns)")
ax.set_ylabel("cross-validated D^2 (Gamma)")
ax.legend(loc="upper right")
fig.tight_layout()

# %%
# With 72 rows, a few columns generalise better than all of them. Choosing
# ``k`` by cross-validation (``SparsityCV`` scores with the estimator's own
# ``score``, D^2 here):
search = SparsityCV(IHTRegressor(loss="gamma"), k_grid=ks, cv=cv).fit(X, y)
model = search.best_estimator_
print(f"SparsityCV chose k={search.k_} (mean D^2 {search.best_score_:.3f})")
for j in model.support_:
    print(f"  {names[j]:>14}: {model.coef_[j]:+.3f}  (spending x {np.exp(model.coef_[j]):.2f} per sd)")

# %%
# Observed against predicted spending, on log scales: the spread of the
# amounts grows with their level, as the Gamma model assumes (constant
# coefficient of variation).
fig, ax = plt.subplots(figsize=(4.5, 4))
mu = model.predict(X)
ax.loglog(mu, y, "o", alpha=0.7)
lims = [min(mu.min(), y.min()), max(mu.max(), y.max())]
ax.plot(lims, lims, color="gray", lw=1)
ax.set_xlabel("predicted monthly spending")
ax.set_ylabel("observed monthly spending")
fig.tight_layout()
