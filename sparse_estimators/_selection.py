"""Feature selection with scikit-learn's ``SelectFromModel``: exactly the model's support."""

import numpy as np

__all__ = ["support_importance"]


def support_importance(estimator):
    """1 for the features of a fitted model's support, 0 for the others: an ``importance_getter``.

    ``SelectFromModel(estimator, importance_getter=support_importance)``
    keeps exactly the features of ``estimator.support_`` with its default
    threshold (the mean importance, ``k / n_features``, which every selected
    feature reaches and no other does), whatever the scale of the
    coefficients. By default ``SelectFromModel`` reads ``coef_`` and keeps
    the features whose magnitude is at least the mean magnitude, which drops
    the selected features with small coefficients.

    Parameters
    ----------
    estimator : fitted estimator of this package, SparsityCV, SparsityIC or Pipeline
        A fitted model with ``support_`` (for the selectors, their
        ``best_estimator_``'s; for a pipeline, its last step's).

    Returns
    -------
    ndarray of shape (n_features,)
        1.0 at the support's indices, 0.0 elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.feature_selection import SelectFromModel
    >>> from sparse_estimators import IHTRegressor, support_importance
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((100, 20))
    >>> y = 3 * X[:, 2] - 2 * X[:, 7] + 0.1 * X[:, 11] + 0.05 * rng.standard_normal(100)
    >>> selector = SelectFromModel(IHTRegressor(k=3), importance_getter=support_importance).fit(X, y)
    >>> np.flatnonzero(selector.get_support()).tolist()
    [2, 7, 11]
    """
    model = estimator
    if not hasattr(model, "support_") and hasattr(model, "steps"):  # a Pipeline: its final estimator
        model = model.steps[-1][1]
    if not hasattr(model, "support_") and hasattr(model, "best_estimator_"):
        model = model.best_estimator_
    if not hasattr(model, "support_"):
        raise TypeError(f"support_importance needs a fitted estimator with a support_ attribute, got "
                        f"{type(estimator).__name__}.")
    importance = np.zeros(model.n_features_in_)
    importance[model.support_] = 1.0
    return importance
