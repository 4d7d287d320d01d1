"""
==============================================================
Selecting ``k`` original variables with categorical features
==============================================================

One-hot encoding turns a categorical variable into several dummy columns, and
a model that counts columns would have to count them by hand. With
``groups=``, ``k`` counts **groups** of columns kept or dropped together; here
:class:`~sparse_estimators.structures.groups_from_feature_names` groups the
columns a :class:`~sklearn.compose.ColumnTransformer` makes by the original
variable each comes from, so that one ``Pipeline`` and one ``GridSearchCV``
choose the number of *original variables*.

The data: scikit-learn's diabetes data set (disease progression after one
year), with ``sex`` as a category and age and body-mass index as bands (the
way they are often recorded), beside six blood serum measurements.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sparse_estimators import IHTRegressor
from sparse_estimators.structures import groups_from_feature_names

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
X["sex"] = X["sex"].map({1: "female", 2: "male"}).astype("category")
X["age_band"] = pd.cut(X.pop("age"), [0, 30, 45, 60, 100], labels=["<30", "30-45", "45-60", "60+"])
X["bmi_class"] = pd.cut(X.pop("bmi"), [0, 25, 30, 100], labels=["normal", "overweight", "obese"])
categorical = ["sex", "age_band", "bmi_class"]
numeric = [c for c in X.columns if c not in categorical]
print(f"{X.shape[1]} variables: {categorical} categorical, {numeric} numeric")

# %%
# The transformer outputs a DataFrame (``set_output``), so the estimator sees
# the column names (``onehot__age_band_60+``, ``num__bp``, ...) and the groups
# follow them, whatever categories each training fold holds.
columns = ColumnTransformer([("onehot", OneHotEncoder(sparse_output=False), categorical),
                             ("num", StandardScaler(), numeric)]).set_output(transform="pandas")
model = make_pipeline(columns, IHTRegressor(groups=groups_from_feature_names(X.columns)))
search = GridSearchCV(model, {"ihtregressor__k": range(1, X.shape[1] + 1)}, cv=5).fit(X, y)
best = search.best_estimator_[-1]
print(f"chosen k = {search.best_params_['ihtregressor__k']} variables: {list(best.groups_support_)}")
print(f"{best.support_.size} of {best.n_features_in_} columns:", list(best.feature_names_in_[best.support_]))

# %%
# Cross-validated R^2 against the number of variables: each level keeps whole
# variables (all the dummy columns of a band, or none).
ks = np.arange(1, X.shape[1] + 1)
scores = search.cv_results_["mean_test_score"]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.errorbar(ks, scores, yerr=search.cv_results_["std_test_score"], marker="o", capsize=3)
ax.axvline(search.best_params_["ihtregressor__k"], color="gray", linestyle="--", label="chosen k")
ax.set_xlabel("k (original variables)")
ax.set_ylabel("CV R^2")
ax.legend()
fig.tight_layout()
plt.show()
