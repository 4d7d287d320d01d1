"""
=====================================================
Counts at exactly ``k`` features: doctor visits
=====================================================

``loss='poisson'`` fits a Poisson regression with the log link (the expected
count is ``exp(X coef_ + intercept_)``) at exactly ``k`` features. The data
are the RAND Health Insurance Experiment's, as statsmodels ships them
(``statsmodels.datasets.randhie``): 20190 person-years, the number of
outpatient visits to a doctor (``mdvis``) and nine covariates (coinsurance,
deductible, incentive payment, physical limitation, chronic diseases,
self-rated health). With the covariates' pairwise products and squares the
model has 47 candidate columns; which few predict the number of visits?

``score`` is D^2, the fraction of Poisson deviance explained, as for
scikit-learn's :class:`~sklearn.linear_model.PoissonRegressor`, the dense
reference here.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import PoissonRegressor
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from statsmodels.datasets import randhie

from sparse_estimators import IHTRegressor

data = randhie.load_pandas().data
y = data["mdvis"].to_numpy(float)
covariates = data.drop(columns="mdvis")
print(f"{len(y)} rows; visits: mean {y.mean():.2f}, variance {y.var():.1f}, "
      f"{np.mean(y == 0):.0%} zeros, max {y.max():.0f}")

# Main effects, products and squares; the squares of the binary covariates
# repeat them and are dropped.
expand = PolynomialFeatures(degree=2, include_bias=False).fit(covariates)
binary = covariates.nunique().to_numpy() == 2
keep = [j for j, pw in enumerate(expand.powers_) if not (pw.max() == 2 and binary[pw.argmax()])]
names = expand.get_feature_names_out()[keep]
X = expand.transform(covariates)[:, keep]
varies = X.std(axis=0) > 0  # products of exclusive dummies (e.g. fair and poor health) are all zero
X, names = X[:, varies], names[varies]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
print(f"{X.shape[1]} candidate columns")

# %%
# Held-out D^2 against ``k``
# --------------------------
# Selection is by coefficient magnitude: standardise the columns first.
ks = [1, 2, 4, 6, 9, 12]
scores, models = [], {}
for k in ks:
    models[k] = make_pipeline(StandardScaler(), IHTRegressor(k=k, loss="poisson")).fit(X_train, y_train)
    scores.append(models[k].score(X_test, y_test))
dense = make_pipeline(StandardScaler(), PoissonRegressor(alpha=1e-4, max_iter=1000)).fit(X_train, y_train)
dense_score = dense.score(X_test, y_test)

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(ks, scores, "o-", label="IHTRegressor(k, loss='poisson')")
ax.axhline(dense_score, color="gray", ls="--", label=f"PoissonRegressor, all {X.shape[1]} columns")
ax.set_xlabel("k (number of columns)")
ax.set_ylabel("held-out D^2 (Poisson)")
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# Doctor visits are overdispersed (the variance is several times the mean),
# so D^2 stays low whatever the model: the covariates explain a small part of
# who goes to the doctor how often. A handful of columns reach most of what
# all columns explain.
k = 6
model = models[k]
iht = model[-1]
print(f"k={k}: held-out D^2 {model.score(X_test, y_test):.4f}; all columns: {dense_score:.4f}")
for j in iht.support_:
    print(f"  {names[j]:>16}: {iht.coef_[j]:+.3f}  (x {np.exp(iht.coef_[j]):.2f} visits per sd)")

# %%
# ``predict`` returns the expected number of visits. Grouping the test rows
# by predicted count shows that the means of the observed counts follow the
# predictions (the log link's multiplicative effects):
mu = model.predict(X_test)
edges = np.quantile(mu, np.linspace(0, 1, 11))
group = np.clip(np.searchsorted(edges, mu, side="right") - 1, 0, 9)
fig, ax = plt.subplots(figsize=(4.5, 4))
pred = [mu[group == g].mean() for g in range(10)]
obs = [y_test[group == g].mean() for g in range(10)]
ax.plot(pred, obs, "o")
ax.plot([0, max(obs)], [0, max(obs)], color="gray", lw=1)
ax.set_xlabel("mean predicted visits (decile of the prediction)")
ax.set_ylabel("mean observed visits")
fig.tight_layout()
