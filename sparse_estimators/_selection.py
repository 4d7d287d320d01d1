"""The selected features as scikit-learn's feature selection sees them: exactly the model's support.

``get_support`` and ``SelectFromModel``'s default threshold (the mixin of
the exact-``k`` estimators and the searches), and ``support_importance``.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["support_importance"]


def support_importance(estimator):
    """1 for the features of a fitted model's support, 0 for the others: an ``importance_getter``.

    ``SelectFromModel(estimator, importance_getter=support_importance)``
    keeps exactly the features of ``estimator.support_`` with its default
    threshold (the mean importance, ``k / n_features``, which every selected
    feature reaches and no other does), whatever the scale of the
    coefficients. Without it ``SelectFromModel`` reads ``coef_`` and keeps
    the features whose magnitude is at least 1e-5 (its default threshold for
    this package's estimators, see ``get_support``): the support, unless a
    selected coefficient is smaller than that (e.g. unscaled features).

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


class _SupportMixin:
    """``get_support(indices=False)`` and the selected features kept by ``SelectFromModel``'s defaults.

    ``penalty = "l1"`` (a class attribute, not a parameter) is what
    scikit-learn's ``SelectFromModel`` reads to choose its default
    threshold (``sklearn.feature_selection._from_model._calculate_threshold``):
    1e-5 on the coefficients' magnitudes for an l1-penalised model, whose
    zero coefficients are exact zeros, instead of their mean magnitude, which
    drops the selected features with small coefficients. The models here
    share that property (every feature outside the support has an exactly
    zero coefficient), so ``SelectFromModel(IHTRegressor(k=3))`` keeps the
    ``k`` selected features whenever their coefficients are at least 1e-5 in
    magnitude (summed over outputs or classes); ``importance_getter=
    support_importance`` keeps them whatever the coefficients' scale.
    """

    #: read by SelectFromModel's default threshold only (see the class docstring); not a parameter
    penalty = "l1"

    def _support_indices(self):
        check_is_fitted(self)
        model = getattr(self, "best_estimator_", self)  # (the searches: their refitted estimator's)
        return np.asarray(model.support_, dtype=np.intp)

    def get_support(self, indices=False):
        """The selected features, as scikit-learn's feature selectors give them.

        ``support_`` holds the *indices* of the selected features;
        scikit-learn's selectors (``SelectFromModel``, ``RFE``) call a
        boolean mask ``support_``. This method has their semantics.

        Parameters
        ----------
        indices : bool, default=False
            If True, the sorted indices of the selected features (a copy of
            ``support_``); otherwise a boolean mask.

        Returns
        -------
        support : ndarray
            A boolean mask of shape ``(n_features_in_,)``, True at the
            selected features, or (``indices=True``) an integer array of
            shape ``(n_selected,)``.
        """
        selected = self._support_indices()
        if indices:
            return selected.copy()
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[selected] = True
        return mask
