"""A transformer, then an estimator whose ``groups`` are resolved from the fitted transformer's output names.

Feature names reach an estimator only in a DataFrame (``feature_names_in_``),
and pandas output refuses sparse matrices, so inside a ``Pipeline`` a groups
callable such as ``groups_from_feature_names`` needs dense output. This
meta-estimator asks the fitted transformer itself
(``get_feature_names_out``), so any output works, sparse included.
"""

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._delegation import _SurvivalDelegateMixin
from .._utils import _DocLinkMixin, all_or_nothing

__all__ = ["GroupsFromTransformer"]


def _estimator_has(name):
    def check(self):
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, name)
    return check


class GroupsFromTransformer(_SurvivalDelegateMixin, _DocLinkMixin, MetaEstimatorMixin, BaseEstimator):
    """Fit a transformer, then the estimator with ``groups`` resolved from the transformer's output names.

    Like ``make_pipeline(transformer, estimator)``, but when the
    estimator's ``groups`` is a callable of feature names (such as
    :class:`~sparse_estimators.structures.groups_from_feature_names`), it
    is called with the fitted transformer's
    ``get_feature_names_out()``, not with the names of the estimator's
    input. The transformer's output can then be a scipy.sparse matrix (a
    ``ColumnTransformer`` with ``OneHotEncoder(sparse_output=True)``),
    which carries no names: inside a ``Pipeline`` the names reach the
    estimator only as the columns of a DataFrame
    (``set_output(transform="pandas")``), which needs dense output. The
    groups are resolved again at every fit, so they follow the categories
    each training fold holds. ``groups`` given as labels (or None) are used
    as they are.

    Parameters
    ----------
    transformer : transformer
        Fitted (a clone) on ``X`` at :meth:`fit`; it must have
        ``get_feature_names_out`` when the estimator's ``groups`` is a
        callable.
    estimator : estimator
        A clone is fitted on the transformer's output, with ``groups`` set
        to the labels the callable returns.

    Attributes
    ----------
    transformer_ : transformer
        The fitted transformer.
    estimator_ : estimator
        The fitted estimator; its ``groups`` holds the resolved labels, and
        its ``support_`` indexes :meth:`get_feature_names_out`'s names.
    groups_ : ndarray of shape (n_transformed_features,) or None
        The labels the estimator was fitted with (for a search such as
        :class:`~sparse_estimators.model_selection.SparsityCV`, its
        estimator's ``groups``, resolved alike).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during :term:`fit`, when ``X`` has string
        column names.
    classes_ : ndarray of shape (n_classes,)
        The class labels, for a classifier.

    See Also
    --------
    sparse_estimators.structures.groups_from_feature_names : Group the columns of a ``ColumnTransformer``.
    sklearn.pipeline.Pipeline : The same chain, with names only through DataFrames.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sparse_estimators import IHTRegressor
    >>> from sparse_estimators.compose import GroupsFromTransformer
    >>> from sparse_estimators.structures import groups_from_feature_names
    >>> rng = np.random.RandomState(0)
    >>> X = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], 200), "size": rng.standard_normal(200),
    ...                   "noise": rng.standard_normal(200)})
    >>> y = 2.0 * (X["color"] == "red") - 1.0 * (X["color"] == "blue") + 0.01 * rng.standard_normal(200)
    >>> columns = ColumnTransformer([("onehot", OneHotEncoder(), ["color"]),  # sparse output
    ...                              ("num", StandardScaler(), ["size", "noise"])])
    >>> model = GroupsFromTransformer(columns, IHTRegressor(k=1, groups=groups_from_feature_names(X.columns)))
    >>> model.fit(X, y).estimator_.groups_support_.tolist()
    ['color']
    >>> model.get_feature_names_out()[model.estimator_.support_].tolist()
    ['onehot__color_blue', 'onehot__color_green', 'onehot__color_red']
    """

    def __init__(self, transformer, estimator):
        self.transformer = transformer
        self.estimator = estimator

    def fit(self, X, y, **fit_params):
        """Fit the transformer on ``X``, then the estimator on its output with the resolved ``groups``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Input of the transformer.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets.
        **fit_params : dict
            Passed to the estimator's ``fit`` (e.g. ``sample_weight``).

        Returns
        -------
        self : object
            The fitted meta-estimator.
        """
        with all_or_nothing(self):
            transformer = clone(self.transformer)
            Xt = transformer.fit_transform(X, y)
            estimator = clone(self.estimator)
            # 'groups' of the estimator, or of the estimator it wraps (SparsityCV's 'estimator__groups')
            params = estimator.get_params()
            keys = [key for key in params if key == "groups" or key.endswith("__groups")]
            callables = {key: params[key] for key in keys if callable(params[key])}
            if callables and not hasattr(transformer, "get_feature_names_out"):
                raise TypeError(f"GroupsFromTransformer: the transformer {type(transformer).__name__} has no "
                                "get_feature_names_out, so the 'groups' callable has no names to group.")
            if callables:
                names = np.asarray(transformer.get_feature_names_out(), dtype=object)
                estimator.set_params(**{key: np.asarray(spec(names)) for key, spec in callables.items()})
            groups = estimator.get_params()[keys[0]] if keys else None
            self.transformer_ = transformer
            self.estimator_ = estimator.fit(Xt, y, **fit_params)
            self.groups_ = None if groups is None else np.asarray(groups)
            for name in ("n_features_in_", "feature_names_in_"):
                if hasattr(transformer, name):
                    setattr(self, name, getattr(transformer, name))
                elif hasattr(self, name):
                    delattr(self, name)
            if hasattr(self.estimator_, "classes_"):
                self.classes_ = self.estimator_.classes_
            else:  # (not an earlier classifier's labels)
                self.__dict__.pop("classes_", None)
        return self

    #: the survival functions (of a survival estimator) are delegated to the fitted estimator, on transformed X
    _fitted_inner = "estimator_"

    def _transformed(self, X):
        check_is_fitted(self)
        return self.transformer_.transform(X)

    _inner_input = _transformed

    def predict(self, X):
        """Predict with the estimator on the transformed ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        Xt = self._transformed(X)
        return self.estimator_.predict(Xt)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the estimator on the transformed ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        Xt = self._transformed(X)
        return self.estimator_.predict_proba(Xt)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Logarithm of the class probabilities of the estimator on the transformed ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        Xt = self._transformed(X)
        return self.estimator_.predict_log_proba(Xt)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the estimator on the transformed ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        Xt = self._transformed(X)
        return self.estimator_.decision_function(Xt)

    def score(self, X, y, sample_weight=None):
        """The estimator's score (R^2 or accuracy) on the transformed ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        Xt = self._transformed(X)
        return self.estimator_.score(Xt, y, sample_weight=sample_weight)

    def get_feature_names_out(self, input_features=None):
        """The names of the estimator's input features: the transformer's output names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Passed to the transformer's ``get_feature_names_out``.

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self)
        return self.transformer_.get_feature_names_out(input_features)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags = inner.target_tags
        tags.input_tags.sparse = self.transformer.__sklearn_tags__().input_tags.sparse
        return tags
