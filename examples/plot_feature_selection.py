"""
=============================================
Feature selection with ``SelectFromModel``
=============================================

A sparse estimator is also a feature selector: with
:class:`~sklearn.feature_selection.SelectFromModel` and
``importance_getter=support_importance``
(:func:`~sparse_estimators.support_importance`: 1 for a selected feature,
0 for the others) it keeps exactly the ``k``
features of the model's support, and any model can be trained on them.
``SelectFromModel``'s defaults read ``coef_`` and keep only the coefficients
at least as large as their mean magnitude, which drops selected features with
small coefficients; ``max_features=k`` alone does not change that (it also
needs ``threshold=-np.inf``). Here
a classifier with 6 of the 30 features of the breast cancer data set feeds a
random forest, compared with the forest on all features.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import SelectFromModel
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparse_estimators import AcceleratedIHTClassifier, support_importance

data = load_breast_cancer()
X, y = data.data, data.target

selector = make_pipeline(StandardScaler(),
                         SelectFromModel(AcceleratedIHTClassifier(k=6), importance_getter=support_importance))
selector.fit(X, y)
mask = selector[-1].get_support()
print(f"{mask.sum()} features kept:", ", ".join(data.feature_names[mask]))

# %%
# The selected features' coefficients (on standardised features), the model
# that did the selecting:
clf = selector[-1].estimator_
order = np.argsort(np.abs(clf.coef_[0, mask]))
fig, ax = plt.subplots(figsize=(6, 3))
ax.barh(data.feature_names[mask][order], clf.coef_[0, mask][order])
ax.set_xlabel("logistic coefficient (standardised features)")
fig.tight_layout()

# %%
# Selection inside a pipeline, cross-validated together with the downstream
# model (the selection is refitted on every training fold, so the score is
# not optimistic):
forest = RandomForestClassifier(n_estimators=50, random_state=0)
selection = SelectFromModel(AcceleratedIHTClassifier(k=6), importance_getter=support_importance)
pipe = make_pipeline(StandardScaler(), selection, forest)
for name, model in [("forest on 6 selected features", pipe), ("forest on all 30 features", forest)]:
    scores = cross_val_score(model, X, y, cv=5)
    print(f"{name}: accuracy {scores.mean():.3f} +/- {scores.std():.3f}")
