"""The survival functions of a wrapped estimator, delegated by the meta-estimators that fit one.

:class:`~sparse_estimators.model_selection.SparsityCV`,
:class:`~sparse_estimators.model_selection.SparsityIC` (their
``best_estimator_``) and :class:`~sparse_estimators.compose.GroupsFromTransformer`
(its ``estimator_``, on the transformed ``X``) offer
``predict_survival_function`` and ``predict_cumulative_hazard_function``
exactly when the estimator they wrap has them (``available_if``), as they
already do for ``predict_proba``.
"""

from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted


def _inner_has(name):
    """``available_if`` check: the fitted inner estimator (or, before fit, the unfitted one) has ``name``."""
    def check(self):
        inner = getattr(self, self._fitted_inner, None)
        return hasattr(self.estimator if inner is None else inner, name)
    return check


class _SurvivalDelegateMixin:
    """Delegates the survival functions to the fitted inner estimator.

    A subclass names the attribute holding its fitted estimator
    (``_fitted_inner``) and may map ``X`` to that estimator's input
    (``_inner_input``, e.g. a transformer's output).
    """

    #: the attribute of the fitted inner estimator
    _fitted_inner = "best_estimator_"

    def _inner_input(self, X):
        return X

    def _inner(self):
        check_is_fitted(self)
        return getattr(self, self._fitted_inner)

    @available_if(_inner_has("predict_survival_function"))
    def predict_survival_function(self, X, return_array=False):
        """The survival functions of the samples of ``X``, from the fitted inner estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        return_array : bool, default=False
            False: an array of step functions (one per sample); True: their
            values at the inner estimator's ``unique_times_``.

        Returns
        -------
        ndarray
            As the inner estimator's ``predict_survival_function``.
        """
        inner = self._inner()
        return inner.predict_survival_function(self._inner_input(X), return_array=return_array)

    @available_if(_inner_has("predict_cumulative_hazard_function"))
    def predict_cumulative_hazard_function(self, X, return_array=False):
        """The cumulative hazard functions of the samples of ``X``, from the fitted inner estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        return_array : bool, default=False
            False: an array of step functions (one per sample); True: their
            values at the inner estimator's ``unique_times_``.

        Returns
        -------
        ndarray
            As the inner estimator's ``predict_cumulative_hazard_function``.
        """
        inner = self._inner()
        return inner.predict_cumulative_hazard_function(self._inner_input(X), return_array=return_array)
