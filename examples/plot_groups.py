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
:class:`~sparse_estimators.compose.GroupsFromTransformer` chains the
transformer and the estimator, and resolves the groups from the fitted
transformer's output names (``get_feature_names_out``), so the one-hot
columns can stay a scipy.sparse matrix.

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
from sparse_estimators.compose import GroupsFromTransformer
from sparse_estimators.structures import groups_from_feature_names

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
X["sex"] = X["sex"].map({1: "female", 2: "male"}).astype("category")
X["age_band"] = pd.cut(X.pop("age"), [0, 30, 45, 60, 100], labels=["<30", "30-45", "45-60", "60+"])
X["bmi_class"] = pd.cut(X.pop("bmi"), [0, 25, 30, 100], labels=["normal", "overweight", "obese"])
categorical = ["sex", "age_band", "bmi_class"]
numeric = [c for c in X.columns if c not in categorical]
print(f"{X.shape[1]} variables: {categorical} categorical, {numeric} numeric")

# %%
# The groups are resolved at every fit from the fitted transformer's output
# names (``onehot__age_band_60+``, ``num__bp``, ...), so they follow whatever
# categories each training fold holds; the one-hot columns stay sparse
# (``sparse_threshold=1``: the whole output is a scipy.sparse matrix).
columns = ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="ignore"), categorical),
                             ("num", StandardScaler(), numeric)], sparse_threshold=1.0)
model = GroupsFromTransformer(columns, IHTRegressor(groups=groups_from_feature_names(X.columns)))
search = GridSearchCV(model, {"estimator__k": range(1, X.shape[1] + 1)}, cv=5).fit(X, y)
best = search.best_estimator_
names = best.get_feature_names_out()
print(f"chosen k = {search.best_params_['estimator__k']} variables: {list(best.estimator_.groups_support_)}")
print(f"{best.estimator_.support_.size} of {names.size} columns:", list(names[best.estimator_.support_]))

# %%
# The same model through a plain ``Pipeline``: there the names reach the
# estimator only as the columns of a DataFrame (``set_output``), which needs
# dense one-hot output.
dense = ColumnTransformer([("onehot", OneHotEncoder(sparse_output=False, handle_unknown="ignore"), categorical),
                           ("num", StandardScaler(), numeric)]).set_output(transform="pandas")
k = search.best_params_["estimator__k"]
pipeline = make_pipeline(dense, IHTRegressor(k=k, groups=groups_from_feature_names(X.columns))).fit(X, y)
print("same variables through a dense Pipeline:", list(pipeline[-1].groups_support_))

# %%
# Cross-validated R^2 against the number of variables: each level keeps whole
# variables (all the dummy columns of a band, or none).
ks = np.arange(1, X.shape[1] + 1)
scores = search.cv_results_["mean_test_score"]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.errorbar(ks, scores, yerr=search.cv_results_["std_test_score"], marker="o", capsize=3)
ax.axvline(search.best_params_["estimator__k"], color="gray", linestyle="--", label="chosen k")
ax.set_xlabel("k (original variables)")
ax.set_ylabel("CV R^2")
ax.legend()
fig.tight_layout()
plt.show()
