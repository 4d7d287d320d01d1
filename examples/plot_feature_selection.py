"""
=============================================
Feature selection with ``SelectFromModel``
=============================================

A sparse estimator is also a feature selector: with
:class:`~sklearn.feature_selection.SelectFromModel` and its default arguments
it keeps the ``k`` features of the model's support, and any model can be
trained on them. (``SelectFromModel``'s default threshold for these models is
1e-5 on the coefficients' magnitudes, as for l1-penalised models, not their
mean magnitude, which would drop selected features with small coefficients;
``importance_getter=support_importance``,
:func:`~sparse_estimators.support_importance`, keeps exactly the support also
when a selected coefficient is below 1e-5.) The estimator's own
``get_support()`` gives the same boolean mask (its ``support_`` holds
indices). Here a classifier with 6 of the 30 features of the breast cancer
data set feeds a random forest, compared with the forest on all features.
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

from sparse_estimators import AcceleratedIHTClassifier

data = load_breast_cancer()
X, y = data.data, data.target

selector = make_pipeline(StandardScaler(), SelectFromModel(AcceleratedIHTClassifier(k=6)))
selector.fit(X, y)
mask = selector[-1].get_support()
assert (mask == selector[-1].estimator_.get_support()).all()
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
selection = SelectFromModel(AcceleratedIHTClassifier(k=6))
pipe = make_pipeline(StandardScaler(), selection, forest)
for name, model in [("forest on 6 selected features", pipe), ("forest on all 30 features", forest)]:
    scores = cross_val_score(model, X, y, cv=5)
    print(f"{name}: accuracy {scores.mean():.3f} +/- {scores.std():.3f}")
