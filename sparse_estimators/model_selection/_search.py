"""The shared base of the k selectors: input checks, metadata routing, refit, delegation, tags."""



import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_regressor
from sklearn.utils import Bunch, metadata_routing
from sklearn.utils.metadata_routing import (
    _routing_enabled,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    _check_n_features,
    check_is_fitted,
    validate_data,
)

from .._dask import is_dask_collection, set_feature_names
from .._delegation import _inner_has, _SurvivalDelegateMixin
from .._selection import _SupportMixin
from .._utils import _DocLinkMixin, _numeric_target, all_or_nothing
from ._path import _check_has_k
from ._scoring import _accepts_sample_weight


class _SparsitySearchBase(_SupportMixin, _SurvivalDelegateMixin, _DocLinkMixin, MetaEstimatorMixin,
                          BaseEstimator):
    """Shared by the selectors: input checks, routing, delegation to ``best_estimator_``, tags, atomic fit.

    The survival functions of a survival estimator are delegated too
    (:class:`~sparse_estimators._delegation._SurvivalDelegateMixin`).
    """

    # sample_weight is passed on (to the estimator, and to scorers that accept it), not consumed here
    __metadata_request__fit = {"sample_weight": metadata_routing.UNUSED}

    def _atomic(self, fit_body, *args):
        with all_or_nothing(self):
            fit_body(*args)
        return self

    def _check_estimator(self):
        """The estimator must be one of this package's (its paths use their solvers), with valid parameters."""
        from ..linear_model._base import _SparseLinearBase  # (here: linear_model imports model_selection)

        if not isinstance(self.estimator, _SparseLinearBase):
            raise TypeError(
                f"{type(self).__name__} needs an estimator of sparse_estimators (its warm-started paths run "
                f"their solvers), got {type(self.estimator).__name__}. For another estimator with a sparsity "
                "parameter, search it with sklearn.model_selection.GridSearchCV, e.g. "
                "GridSearchCV(OrthogonalMatchingPursuit(), {'n_nonzero_coefs': range(1, 11)}).")
        _check_has_k(self.estimator, type(self).__name__)
        clone(self.estimator)._validate_params()  # (a clear error before any fold is fitted)

    def _validate_input(self, X, y):
        """Check ``X`` and ``y`` as the estimator will, once; a column-vector ``y`` of a classifier is raveled.

        Returns the data the folds and the refit use: arrays and sparse
        matrices as validated (the estimator's own validation then copies
        nothing), DataFrames as given (so that the fitted estimators keep
        their column names), ``y`` as validated (a classifier's ``(n, 1)``
        ``y`` raveled, with a DataConversionWarning; a regressor keeps it
        as one target, as the estimator does).
        """
        if getattr(self.estimator, "_structured_target", False):  # (survival: y a structured array (event, time))
            from ..survival._target import check_survival_target

            X_valid = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32], order="C")
            check_survival_target(y, X_valid.shape[0])
            return (X if hasattr(X, "columns") else X_valid), y
        regressor = is_regressor(self.estimator)
        if is_dask_collection(X):  # (checked lazily by the estimator's set-up, in the pass that reads X)
            set_feature_names(self, X)
            _check_n_features(self, X, reset=True)
            return X, y
        X_valid, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                                   order="C", multi_output=regressor, y_numeric=regressor)
        if regressor:
            y = _numeric_target(y)
        return (X if hasattr(X, "columns") else X_valid), y

    def _routed_fit_params(self, sample_weight, params, *, splitter=False, scorer=None):
        """The fit's metadata for the estimator, the splitter and the scorer, as GridSearchCV routes them.

        With metadata routing enabled (``sklearn.set_config(enable_metadata_routing=True)``), through
        :func:`~sklearn.utils.metadata_routing.process_routing`: the estimator gets ``sample_weight``
        only if it requests it (``set_fit_request``), the scorers that request it get it, the splitter
        gets ``groups``. Without routing: ``sample_weight`` goes to the estimator's fit and to the
        scorers that accept it (as GridSearchCV does), ``groups`` to the splitter.
        """
        name = type(self).__name__
        if _routing_enabled():
            kwargs = {key: value for key, value in params.items() if value is not None}
            if sample_weight is not None:
                kwargs["sample_weight"] = sample_weight
            return process_routing(self, "fit", **kwargs)
        params = dict(params)
        groups = params.pop("groups", None) if splitter else None
        if params:
            allowed = "sample_weight and groups" if splitter else "sample_weight"
            raise TypeError(f"{name}.fit got unexpected parameters {sorted(params)}: it takes {allowed}; other "
                            "metadata need metadata routing (sklearn.set_config(enable_metadata_routing=True)).")
        score = {}
        if sample_weight is not None and scorer is not None and _accepts_sample_weight(scorer):
            score["sample_weight"] = sample_weight
        return Bunch(estimator=Bunch(fit={} if sample_weight is None else {"sample_weight": sample_weight}),
                     splitter=Bunch(split={"groups": groups}), scorer=Bunch(score=score))

    def _refit(self, X, y, sample_weight, setup=None):
        """Fit the best estimator; ``setup``: ``(template, loss, info)`` of a path on the same data, reused."""
        for name in ("classes_", "n_passes_"):  # (an earlier fit's: a classifier's labels, a dask X's passes)
            self.__dict__.pop(name, None)
        best = clone(self.estimator).set_params(k=int(self.k_))
        if setup is None:
            self.best_estimator_ = best.fit(X, y, sample_weight=sample_weight)
        else:  # (a dask X: the path's statistics, not another pass)
            template, loss, info = setup
            for name in ("n_features_in_", "feature_names_in_"):
                if hasattr(template, name):
                    setattr(best, name, getattr(template, name))
            self.best_estimator_ = best._fit(X, y, sample_weight, None, setup=(loss, info))
            self.n_passes_ = loss.design.n_passes
        self.n_features_in_ = self.best_estimator_.n_features_in_
        if hasattr(self.best_estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.best_estimator_.feature_names_in_
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_

    def predict(self, X):
        """Predict with the refitted best estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_inner_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the refitted best estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_inner_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Logarithm of the class probabilities of the refitted best estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_inner_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the refitted best estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """Score of the refitted best estimator (R^2, accuracy, or a survival estimator's concordance index).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a structured survival array
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        check_is_fitted(self)
        return self.best_estimator_.score(X, y, sample_weight=sample_weight)

    @property
    def coef_(self):
        """Coefficients of the refitted best estimator (for ``SelectFromModel``)."""
        check_is_fitted(self)
        return self.best_estimator_.coef_

    @property
    def intercept_(self):
        """Intercept of the refitted best estimator."""
        check_is_fitted(self)
        return self.best_estimator_.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags = inner.target_tags
        tags.input_tags.sparse = inner.input_tags.sparse
        return tags
