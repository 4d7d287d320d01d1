"""Choosing k: cross-validation over warm-started sparsity paths, and information criteria."""

import numbers
import time
import traceback
import warnings
from inspect import signature
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone, is_classifier, is_regressor
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.metrics._scorer import _check_multimetric_scoring, _MultimetricScorer
from sklearn.model_selection import check_cv
from sklearn.model_selection._validation import _score
from sklearn.utils import Bunch, _safe_indexing, metadata_routing
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    _check_method_params,
    _check_n_features,
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from .._dask import is_dask_collection, set_feature_names
from .._delegation import _SurvivalDelegateMixin
from .._selection import _SupportMixin
from .._utils import _DocLinkMixin, _numeric_target, all_or_nothing
from ._criteria import CRITERIA, information_criterion
from ._path import _check_has_k, _fitted_estimator, _path_fits, _search_grid

__all__ = ["SparsityCV", "SparsityIC", "one_standard_error"]


def _fold_scores(estimator, X, y, sample_weight, train, test, k_grid, scoring, fold, n_folds, verbose):
    """Path over ``k_grid`` on one training fold (cheap splicing: first search only), scored on its test part.

    ``scoring`` is a :class:`_Scoring`. Returns the test scores and the train
    scores (``{metric: (n_k,)}``, the latter None unless asked for), the
    time, and each level's solution ``(support, coef rows, intercept
    variable)``, the starts of the full fits of :func:`_fold_rescore`.
    """
    start = time.perf_counter()
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    sw_train = None if sample_weight is None else sample_weight[train]
    template, grid, fits, info, _ = _path_fits(estimator, X_train, y_train, sw_train, k_grid, second_search=False)
    test_scores, train_scores = scoring.score_fits(template, fits, grid, info, X, y, train, test)
    elapsed = time.perf_counter() - start
    if verbose:
        first = next(iter(test_scores.values()))
        best = int(np.nanargmax(first)) if not np.all(np.isnan(first)) else 0
        print(f"[SparsityCV] fold {fold + 1}/{n_folds}: path over {len(grid)} values of k "
              f"in {elapsed:.2f} s, best k={grid[best]} (score {first[best]:.4f})", flush=True)
    return test_scores, train_scores, elapsed, [(fit.support, fit.coef[fit.support], fit.b) for fit in fits]


def _fold_rescore(estimator, X, y, sample_weight, train, test, levels, starts, scoring):
    """Full fits (the estimator's own splicing search) at ``levels`` on one fold, from the path's ``starts``."""
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    est = clone(estimator)
    operator = est._validate_params()
    loss, info = est._setup(X_train, y_train, None if sample_weight is None else sample_weight[train])
    info = dict(info, structure=est._structure(operator, loss))  # (the fitted estimators' k_, groups_support_)
    fits = []
    for k, (support, rows, b) in zip(levels, starts, strict=True):
        W = loss.zeros()[0]
        W[support] = rows
        fits.append(est._solve(loss, operator, int(min(k, loss.n_features)), W, b.copy()))
    return scoring.score_fits(est, fits, levels, info, X, y, train, test)


def _guarded(function, error_score, *args):
    """``function(*args)``, or ``(None, the formatted exception)`` when it fails and errors become scores."""
    if error_score == "raise":
        return function(*args)
    try:
        return function(*args)
    except Exception:  # (a failed fit scores error_score, as in GridSearchCV; KeyboardInterrupt passes)
        return None, traceback.format_exc()


class _Scoring:
    """The scorers of a search and their parameters; scores the path's fitted points on a fold.

    ``scorer`` is None for the estimator's own ``score`` (computed with the
    test data validated once for all the levels), else a scikit-learn
    scorer, a callable, or a ``_MultimetricScorer``. ``score_params`` are
    the routed scorer parameters (e.g. ``sample_weight``), indexed per fold.
    """

    def __init__(self, scorer, score_params, error_score, return_train_score):
        self.scorer = scorer
        self.score_params = score_params
        self.error_score = error_score
        self.return_train_score = return_train_score

    def score_fits(self, template, fits, levels, info, X, y, train, test):
        estimators = [_fitted_estimator(template, fit, info, k) for fit, k in zip(fits, levels, strict=True)]
        test_scores = self._scores(estimators, X, y, test)
        train_scores = self._scores(estimators, X, y, train) if self.return_train_score else None
        return test_scores, train_scores

    def _scores(self, estimators, X, y, indices):
        X_part, y_part = _safe_indexing(X, indices), _safe_indexing(y, indices)
        params = _check_method_params(X, params=self.score_params, indices=indices)
        if self.scorer is None:  # the estimator's own score (R^2 / accuracy), test data validated once
            return {"score": _default_scores(estimators, X_part, y_part, params.get("sample_weight"))}
        values = [_score(est, X_part, y_part, self.scorer, params, self.error_score) for est in estimators]
        if isinstance(values[0], dict):
            return {name: np.array([v[name] for v in values], dtype=float) for name in values[0]}
        return {"score": np.array(values, dtype=float)}


def _default_scores(estimators, X_test, y_test, sample_weight=None):
    """``est.score(X_test, y_test, sample_weight)`` for fitted estimators sharing their training data.

    The same values as the estimators' ``score`` (R^2, uniform average over
    targets, D^2 for the Poisson and Gamma losses, accuracy, or the concordance
    index of the survival models), with the test data validated once instead
    of once per estimator.
    """
    from sklearn.metrics import accuracy_score, r2_score

    first = estimators[0]
    X_test = validate_data(first, X_test, accept_sparse=["csr", "csc"], reset=False)
    if is_classifier(first):
        return np.array([accuracy_score(y_test, est._labels_from_scores(est._scores(X_test)),
                                        sample_weight=sample_weight) for est in estimators])
    if getattr(first, "_structured_target", False):  # (survival: the concordance index of the risk scores)
        return np.array([est._score_linear(y_test, est._scores(X_test), sample_weight) for est in estimators])
    y_test = np.asarray(y_test, dtype=float)
    if hasattr(first, "_score_linear"):  # (the regressors: R^2, or D^2 for the Poisson and Gamma losses)
        return np.array([est._score_linear(y_test, est._scores(X_test), sample_weight) for est in estimators])
    return np.array([r2_score(y_test, est._scores(X_test), sample_weight=sample_weight) for est in estimators])


def _rank(mean):
    """Ranks of the mean scores (1 the best), as GridSearchCV: NaN ranks after every finite score.

    Means are compared to 12 significant decimals, so equal scores up to
    rounding tie (the first ``k`` of the grid wins the tie).
    """
    mean = np.round(mean, 12)
    if np.all(np.isnan(mean)):
        return np.ones(mean.shape, dtype=np.int32)
    if np.any(np.isnan(mean)):
        mean = np.where(np.isnan(mean), np.nanmin(mean) - 1, mean)
    return rankdata(-mean, method="min").astype(np.int32)


def one_standard_error(cv_results, *, metric="score", param="k"):
    """The one-standard-error rule: the smallest ``k`` whose mean score is within one standard error of the best.

    Pass it as ``refit`` (``SparsityCV(est, refit=one_standard_error)``, or
    ``GridSearchCV(est, {"k": grid}, refit=one_standard_error)``); with
    several metrics, name one: ``refit=functools.partial(one_standard_error,
    metric="roc_auc")``. The standard error of the best level is its
    ``std_test_<metric>`` divided by the square root of the number of folds
    (Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*,
    2nd ed., section 7.10). The CV curve of a sparse model is usually flat
    beyond the true sparsity: the rule trades a score difference within noise
    for fewer features. NaN scores are never chosen.

    Parameters
    ----------
    cv_results : dict
        ``cv_results_`` of :class:`SparsityCV` or of
        :class:`~sklearn.model_selection.GridSearchCV`.
    metric : str, default="score"
        The metric (``"score"`` for a single one).
    param : str, default="k"
        The sparsity parameter's key in ``cv_results["params"]`` (e.g.
        ``"model__k"`` for a pipeline in GridSearchCV).

    Returns
    -------
    int
        The index of the chosen candidate in ``cv_results``.

    Examples
    --------
    >>> from sparse_estimators.model_selection import one_standard_error
    >>> results = {"params": [{"k": 1}, {"k": 2}, {"k": 3}],
    ...            "mean_test_score": [0.5, 0.79, 0.8], "std_test_score": [0.1, 0.02, 0.02],
    ...            "split0_test_score": [0, 0, 0], "split1_test_score": [0, 0, 0],
    ...            "split2_test_score": [0, 0, 0], "split3_test_score": [0, 0, 0]}
    >>> one_standard_error(results)  # 0.79 >= 0.8 - 0.02 / sqrt(4)
    1
    """
    mean = np.asarray(cv_results[f"mean_test_{metric}"], dtype=float)
    if np.all(np.isnan(mean)):
        raise ValueError(f"Every mean_test_{metric} is NaN: the one-standard-error rule has no best score.")
    n_splits = sum(1 for key in cv_results if key.startswith("split") and key.endswith(f"_test_{metric}"))
    best = int(np.nanargmax(mean))
    threshold = mean[best] - float(cv_results[f"std_test_{metric}"][best]) / np.sqrt(max(n_splits, 1))
    within = np.flatnonzero(np.nan_to_num(mean, nan=-np.inf) >= threshold)
    ks = np.array([cv_results["params"][i][param] for i in within])
    return int(within[np.argmin(ks)])  # (the smallest k; among equal k, the first)


def _accepts_sample_weight(scorer):
    """Whether a scorer takes ``sample_weight`` (GridSearchCV's rule without metadata routing)."""
    if hasattr(scorer, "_accept_sample_weight"):
        return bool(scorer._accept_sample_weight())
    return "sample_weight" in signature(scorer).parameters


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

    def _has(name):  # noqa: N805 - a decorator factory used in the class body
        def check(self):
            return hasattr(self.best_estimator_ if hasattr(self, "best_estimator_") else self.estimator, name)
        return check

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

    @available_if(_has("predict_proba"))
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

    @available_if(_has("predict_log_proba"))
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

    @available_if(_has("decision_function"))
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


class SparsityCV(_SparsitySearchBase):
    """Choose ``k`` by cross-validation over warm-started sparsity paths, then refit.

    On each fold, one warm-started path over ``k_grid`` (see
    :func:`sparsity_path`) replaces ``len(k_grid)`` independent fits; each
    point is scored on the held-out part. The path's points run a cheaper
    splicing search than the estimator's own fit (from the solver's support
    only, not from its second, screening start); then the level ``refit``
    chooses and the best levels by mean score (three in all), and those
    between them, are fitted again on every fold with the full search,
    started from the path's solutions, and rescored, and so on until the
    chosen level is such a full fit (``cv_results_['full_search']`` tells
    which were). The chosen ``k`` is refitted on all the data.
    On well-posed problems a path point equals a
    single fit, so the choice is the one ``GridSearchCV(estimator, {'k':
    k_grid})`` makes on the same folds (ties: the first ``k`` of the grid).
    A warm-started point can differ from a cold fit where the cold fit stops
    in a worse local optimum (the path usually reaches the lower training
    loss), or, beyond the true sparsity, fills the extra slots with other
    noise features; where the CV curve is flat, the two searches can then
    pick neighbouring values of ``k`` with scores within noise of each other.

    **Dask input.** For a least-squares regressor (``loss='squared_error'``)
    and a dask ``X`` chunked by rows, the whole search reads ``X`` once
    (``n_passes_ == 1``): one pass accumulates each fold's Gram statistics
    (weights, means, centred ``X^T X``, ``X^T y``, ``y^T y``, extremes);
    a fold's training loss merges the other folds' statistics, and its
    validation score is a quadratic form in its own, so the paths, the
    full fits, the scores and the refit run in memory and equal, up to
    rounding, the search on NumPy data with the same folds. Fold
    membership follows each row's index, whatever the chunks: ``cv=int``
    and ``KFold(n)`` give scikit-learn's contiguous ``KFold`` folds (the
    NumPy search's folds for a regressor); ``KFold(n, shuffle=True,
    random_state=seed)`` puts row ``i`` in fold ``splitmix64(i, seed) mod
    n`` (a seeded hash: folds of about ``n_samples / n`` rows, not the
    NumPy ``KFold``'s permutation); ``PredefinedSplit(test_fold)`` takes the
    given labels. Other splitters, scorers other than ``None`` (R^2),
    ``'r2'``, ``'neg_mean_squared_error'`` and
    ``'neg_root_mean_squared_error'``, classifiers and the other losses
    (which would read ``X`` once per fold and iteration) are refused with a
    ValueError: choose their ``k`` with :class:`SparsityIC` or ``k=None``.
    The partial results in flight hold one ``p x p`` matrix per fold:
    above 4096 features the estimator needs ``precompute=True``.

    Parameters
    ----------
    estimator : estimator of this package
        The model whose ``k`` is chosen; its other hyperparameters are kept.
        Other estimators are refused with a TypeError (search them with
        ``GridSearchCV``).
    k_grid : array-like of int, default=None
        Candidate sparsity levels; ``None`` means ``1 .. min(n_features, 50)``
        (with ``groups``, ``k`` counts groups: ``n_groups`` in place of
        ``n_features``; with ``always_select``, from their number on).
        Values above ``n_features`` (``n_groups``) are clipped to it and
        repeated values merged, and values below the number of
        ``always_select`` features (or groups) left out, with a warning.
    cv : int, cross-validation generator or iterable, default=5
        As in :class:`~sklearn.model_selection.GridSearchCV` (stratified
        folds for classifiers when an int). Group-aware splitters
        (``GroupKFold``) get the ``groups`` passed to :meth:`fit`. On a dask
        ``X``: an int, ``KFold`` or ``PredefinedSplit`` (see above).
    scoring : str, callable, list, tuple or dict, default=None
        As in ``GridSearchCV``; ``None`` uses the estimator's ``score``
        (R^2, D^2, accuracy, or the concordance index of the survival
        models). Several metrics (a list of names or a dict of
        scorers) are all reported in ``cv_results_``; ``refit`` then names
        the one that chooses ``k``.
    refit : bool, str or callable, default=True
        How ``k`` is chosen, as in ``GridSearchCV``: ``True``, the best mean
        score (single metric); a metric name, the best mean score of that
        metric; a callable, ``refit(cv_results_)`` returns the index of the
        chosen level, e.g. :func:`one_standard_error`, the smallest ``k``
        within one standard error of the best. The chosen ``k`` is always
        refitted on all the data (``False`` is not supported: use
        ``GridSearchCV`` for scores alone).
    n_jobs : int, default=None
        Folds run in parallel through joblib; any joblib backend works,
        including Dask's (``with joblib.parallel_config(backend="dask"):``
        after creating a ``distributed.Client``). Not used for a dask ``X``
        (its folds run in memory on ``p x p`` statistics, one after the
        other).
    verbose : int, default=0
        Print one line per fold.
    return_train_score : bool, default=False
        Also score each level on its training folds (``split{i}_train_*``,
        ``mean_train_*``, ``std_train_*`` in ``cv_results_``).
    error_score : 'raise' or float, default=np.nan
        Score of a fold whose path fit or scoring fails, with a
        FitFailedWarning (a failed fit fails every level of its fold's
        path); ``'raise'`` raises. When every fold fails, the fit raises.

    Attributes
    ----------
    k_ : int
        The chosen sparsity level.
    best_index_ : int
        Its index in ``cv_results_``.
    best_params_ : dict
        ``{'k': k_}``.
    best_score_ : float
        Its mean cross-validated score (of the ``refit`` metric; not set
        when ``refit`` is a callable and there are several metrics).
    best_estimator_ : estimator
        ``estimator`` with ``k=k_`` refitted on all the data.
    cv_results_ : dict of ndarrays
        GridSearchCV-like: ``param_k``, ``params``, ``split{i}_test_<metric>``,
        ``mean_test_<metric>``, ``std_test_<metric>``, ``rank_test_<metric>``
        (``<metric>`` is ``score`` for a single metric; NaN means rank last),
        the train scores with ``return_train_score``, ``mean_path_time``
        (seconds per fold for the whole path), and ``full_search`` (whether
        the level's scores come from the full fits).
    multimetric_ : bool
        Whether several metrics were scored.
    n_splits_ : int
        Number of folds.
    n_passes_ : int
        Only when ``X`` is a dask array: the passes over its chunks for the
        whole search and the refit (1).
    classes_ : ndarray
        Class labels (classifiers).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    SparsityIC : Choose k by BIC / EBIC, without cross-validation.
    sparsity_path : The warm-started path.
    one_standard_error : The one-standard-error rule, as ``refit``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import IHTRegressor
    >>> from sparse_estimators.model_selection import SparsityCV
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((150, 30))
    >>> y = X[:, 1] - 2 * X[:, 5] + 1.5 * X[:, 20] + 0.5 * rng.standard_normal(150)
    >>> search = SparsityCV(IHTRegressor(), k_grid=range(1, 11)).fit(X, y)
    >>> search.k_, search.best_estimator_.support_.tolist()
    (3, [1, 5, 20])
    """

    #: levels fitted again with the full splicing search per round (doc/changelog.rst, SparsityCV speed)
    _full_search_levels = 3

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "k_grid": ["array-like", None],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(get_scorer_names())), callable, list, tuple, dict, None],
        "refit": ["boolean", str, callable],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "return_train_score": ["boolean"],
        "error_score": [StrOptions({"raise"}), Real],
    }

    def __init__(self, estimator, *, k_grid=None, cv=5, scoring=None, refit=True, n_jobs=None, verbose=0,
                 return_train_score=False, error_score=np.nan):
        self.estimator = estimator
        self.k_grid = k_grid
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.return_train_score = return_train_score
        self.error_score = error_score

    @_fit_context(prefer_skip_nested_validation=False)  # (the estimator validates its own parameters)
    def fit(self, X, y, sample_weight=None, **params):
        """Cross-validate the path over ``k_grid``, choose ``k_`` and refit.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A dask array chunked by rows is read once (see above).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            A classifier's column vector ``(n_samples, 1)`` is raveled with
            a DataConversionWarning.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the estimator's fit on each training fold and the
            refit, and to the scorers that accept it, as ``GridSearchCV``
            does (with metadata routing: to those that request it).
        **params : dict
            ``groups`` for group-aware splitters (``GroupKFold``); with
            metadata routing enabled, any metadata the estimator, the
            scorers or the splitter request.

        Returns
        -------
        self : object
        """
        return self._atomic(self._fit, X, y, sample_weight, params)

    def _get_scorers(self):
        """The scorer (None: the estimator's own score), the metric names (None: found when scoring) and refit's."""
        if self.scoring is None:
            return None, ["score"], "score"
        if callable(self.scoring):
            return self.scoring, None, "score"
        if isinstance(self.scoring, str):
            return check_scoring(self.estimator, scoring=self.scoring), ["score"], "score"
        scorers = _check_multimetric_scoring(self.estimator, self.scoring)
        return (_MultimetricScorer(scorers=scorers, raise_exc=(self.error_score == "raise")), list(scorers),
                self.refit if isinstance(self.refit, str) else None)

    def _check_refit(self, names):
        """``refit`` must name one of several metrics (or be a callable); ``False`` is refused."""
        if self.refit is False:
            raise ValueError(f"{type(self).__name__} always refits the chosen k: refit must be True, a metric "
                             "name or a callable, got False (use GridSearchCV for scores alone).")
        if callable(self.refit):
            return None
        if names == ["score"]:
            if isinstance(self.refit, str) and self.refit != "score":
                raise ValueError(f"The 'refit' parameter {self.refit!r} names no metric: the scoring is a "
                                 "single metric; use refit=True.")
            return "score"
        if isinstance(self.refit, str) and self.refit in names:
            return self.refit
        raise ValueError(f"For multi-metric scoring, the 'refit' parameter must be a metric name of {names} or "
                         f"a callable, got {self.refit!r}.")

    def _fit(self, X, y, sample_weight, params):
        self._check_estimator()
        if is_dask_collection(X):  # (every fold's statistics from one pass, the folds in memory: _dask_cv.py)
            from ._dask_cv import dask_cv_fit

            return dask_cv_fit(self, X, y, sample_weight, params)
        X, y = self._validate_input(X, y)
        scorer, names, _ = self._get_scorers()
        routed = self._routed_fit_params(sample_weight, params, splitter=True,
                                         scorer=check_scoring(self.estimator) if scorer is None else scorer)
        sample_weight = routed.estimator.fit.get("sample_weight")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
        grid = _search_grid(self.estimator, X, self.k_grid)  # (in groups with groups)
        cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        splits = list(cv.split(X, y, **routed.splitter.split))
        scoring = _Scoring(scorer, routed.scorer.score, self.error_score, self.return_train_score)
        start = time.perf_counter()
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_guarded)(_fold_scores, self.error_score, self.estimator, X, y, sample_weight, train, test,
                              grid, scoring, i, len(splits), self.verbose)
            for i, (train, test) in enumerate(splits))

        def rescore(todo):
            return Parallel(n_jobs=self.n_jobs)(
                delayed(_guarded)(_fold_rescore, self.error_score, self.estimator, X, y, sample_weight, train,
                                  test, grid[todo], [o[3][i] for i in todo], scoring)
                for o, (train, test) in zip(out, splits, strict=True) if o[0] is not None)

        self._choose(grid, out, rescore)
        self._refit(X, y, sample_weight)
        if self.verbose:
            self._report(start)

    def _choose(self, grid, out, rescore):
        """Choose ``k_`` from the folds' path scores ``out``, rescoring levels with full fits (``rescore``).

        ``out`` holds per fold ``(test scores, train scores, time, starts)``
        or ``(None, error)``; ``rescore(todo)`` fits the levels ``grid[todo]``
        again on the folds that did not fail, from their ``starts``, and
        returns their ``(test scores, train scores)`` or ``(None, error)``.
        Sets ``cv_results_`` and the attributes of the choice.
        """
        failed = [o[1] for o in out if o[0] is None]
        if len(failed) == len(out):
            raise ValueError(f"All the {len(out)} fold paths of {type(self).__name__} failed; the first "
                             f"error:\n{failed[0]}")
        if failed:
            warnings.warn(f"{len(failed)} of the {len(out)} fold paths failed and score error_score="
                          f"{self.error_score!r}; the first error:\n{failed[0]}", FitFailedWarning, stacklevel=4)
        names = list(next(o[0] for o in out if o[0] is not None))
        metric = self._check_refit(names)
        ranking = metric or names[0]  # (the metric that shortlists the levels fitted again)
        blank = np.full((len(out), grid.size), np.nan if self.error_score == "raise" else float(self.error_score))
        test_scores = {name: blank.copy() for name in names}
        train_scores = {name: blank.copy() for name in names} if self.return_train_score else None
        for i, o in enumerate(out):
            if o[0] is not None:
                self._store_scores(test_scores, train_scores, i, slice(None), o[0], o[1])
        times = np.mean([o[2] for o in out if o[0] is not None])
        full = np.zeros(grid.size, dtype=bool)
        while True:  # full fits at the chosen and the best levels, until the chosen one is a full fit
            results = self._results(grid, test_scores, train_scores, times, full, len(out))
            best = self._select(results, metric, names)
            if full[best]:
                break
            order = np.argsort(-np.round(results[f"mean_test_{ranking}"], 12), kind="stable")
            short = [best] + [i for i in order if not full[i] and i != best][:self._full_search_levels - 1]
            # (and the levels between them: a cheap path point can score below a full fit's neighbours)
            todo = np.flatnonzero(~full & (grid >= grid[short].min()) & (grid <= grid[short].max()))
            rescored = rescore(todo)
            for i, r in zip([i for i, o in enumerate(out) if o[0] is not None], rescored, strict=True):
                if r[0] is None:
                    warnings.warn(f"A full fit on fold {i} failed and scores error_score={self.error_score!r}:"
                                  f"\n{r[1]}", FitFailedWarning, stacklevel=4)
                    for scores in (test_scores, train_scores):
                        for name in names if scores is not None else ():
                            scores[name][i, todo] = float(self.error_score)
                else:
                    self._store_scores(test_scores, train_scores, i, todo, r[0], r[1])
            full[todo] = True
        self.cv_results_ = results
        self.multimetric_ = names != ["score"]
        self.n_splits_ = len(out)
        self.best_index_ = best
        self.k_ = int(grid[best])
        self.best_params_ = {"k": self.k_}
        if metric is not None or not self.multimetric_:
            self.best_score_ = float(results[f"mean_test_{metric or 'score'}"][best])

    def _report(self, start):
        score = f" (mean score {self.best_score_:.4f})" if hasattr(self, "best_score_") else ""
        print(f"[SparsityCV] chose k={self.k_}{score} in {time.perf_counter() - start:.2f} s", flush=True)

    @staticmethod
    def _store_scores(test_scores, train_scores, fold, columns, test, train):
        for name, values in test.items():
            test_scores[name][fold, columns] = values
        if train_scores is not None:
            for name, values in train.items():
                train_scores[name][fold, columns] = values

    @staticmethod
    def _results(grid, test_scores, train_scores, times, full, n_splits):
        results = {"param_k": np.ma.MaskedArray(grid.astype(object), mask=False),
                   "params": [{"k": int(k)} for k in grid]}
        for kind, scores in (("test", test_scores), ("train", train_scores)):
            for name, values in (scores or {}).items():
                for i in range(n_splits):
                    results[f"split{i}_{kind}_{name}"] = values[i].copy()
                mean = values.mean(axis=0)
                results[f"mean_{kind}_{name}"] = mean
                results[f"std_{kind}_{name}"] = values.std(axis=0)
                if kind == "test":
                    results[f"rank_test_{name}"] = _rank(mean)
        results.update(mean_path_time=np.full(grid.size, times), full_search=full.copy())
        return results

    def _select(self, results, metric, names):
        """The index ``refit`` chooses; a ValueError when every score it reads is NaN."""
        for name in ([metric] if metric else names):
            if not np.all(np.isnan(results[f"mean_test_{name}"])):
                break
        else:
            raise ValueError(f"Every cross-validated score is NaN (k_grid {[p['k'] for p in results['params']]}), "
                             "so no k can be chosen; with one-sample test folds (e.g. cv=n_samples) R^2 is "
                             "undefined: use fewer folds or another scoring.")
        if metric is not None:
            return int(np.argmin(results[f"rank_test_{metric}"]))
        best = self.refit(results)
        if isinstance(best, bool) or not isinstance(best, numbers.Integral):
            raise TypeError(f"refit must return an integer index, got {best!r}.")
        if not 0 <= best < len(results["params"]):
            raise IndexError(f"refit returned {best}, out of range for {len(results['params'])} candidates.")
        return int(best)

    def get_metadata_routing(self):
        """Get the metadata routing of this object: to the estimator's fit, the scorers and the splitter.

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter`, as
            ``GridSearchCV``'s.
        """
        scorer = self._get_scorers()[0]
        router = MetadataRouter(owner=self)
        router.add(estimator=self.estimator, method_mapping=MethodMapping().add(caller="fit", callee="fit"))
        router.add(scorer=check_scoring(self.estimator) if scorer is None else scorer,
                   method_mapping=MethodMapping().add(caller="score", callee="score").add(caller="fit",
                                                                                        callee="score"))
        router.add(splitter=self.cv, method_mapping=MethodMapping().add(caller="fit", callee="split"))
        return router


class SparsityIC(_SparsitySearchBase):
    """Choose ``k`` by an information criterion, then refit.

    One warm-started path on all the data (the estimator's own fits at each
    ``k``); no cross-validation, hence about ``cv`` times cheaper than
    :class:`SparsityCV`. For each ``k``, the criterion is ``-2 log L`` (the
    loss's :meth:`~sparse_estimators.losses.BaseLoss.minus_two_log_likelihood`:
    ``n sum_j log(RSS_j / n)`` for least squares, ``RSS_j`` the residual sum
    of squares of target ``j``; the deviance, twice the summed log-loss, for
    logistic and multinomial; the Poisson likelihood, and the Gamma likelihood
    with its shape estimated by maximum likelihood, for the regressors'
    ``loss='poisson'`` and ``loss='gamma'``; the Cox partial likelihood for
    the models of :mod:`sparse_estimators.survival`) plus a penalty in ``df``, the number of free
    coefficients (``k`` times the number of targets, ``k`` for two classes,
    ``k (n_classes - 1)`` for more):

    * ``'aic'``: ``2 df``;
    * ``'bic'``: ``df log(n)``;
    * ``'gic'``: ``df log(p) log(log(n))``, abess's generalised information
      criterion;
    * ``'ebic'``: ``df log(n) + 2 gamma log(binomial(p, k))`` (Chen & Chen,
      2008), which also pays for the number of models of size ``k`` and suits
      ``p >> n``; the criterion of the estimators' ``k=None``, which
      recovered the true support best on the peer benchmark
      (the benchmark :source:`benchmarks/auto_k.py`).

    ``n`` is the number of observations: the number of samples, or the sum of
    the sample weights when it is larger (frequency weights; weights that sum
    to less, e.g. normalised to sum to 1, are read as relative importances,
    and the fit terms use the weighted means times ``n``).

    The grid stays where the criteria are defined: ``k`` at most
    ``n / (m log(p))`` (``m`` free coefficients per feature), beyond which
    the selection of the best-fitting features among ``p`` makes every
    criterion prefer ever larger models (in the limit of a saturated least
    squares fit, ``RSS = 0``, the fit term is minus infinity). With
    ``groups`` the bound counts the features inside the selected groups: the
    default grid ends at the largest number of groups whose smallest members
    fit within it, and a level whose fit has more features (it took larger
    groups) gets ``criterion_ = inf`` and is not chosen (a ValueError when no
    level is judged). With ``always_select``, the bound is at least their
    number of features, and the grid starts at their number.

    The Huber loss (``loss='huber'``) is not a likelihood: SparsityIC raises
    a ValueError for it; use :class:`SparsityCV`.

    Parameters
    ----------
    estimator : estimator of this package
        The model whose ``k`` is chosen.
    k_grid : array-like of int, default=None
        Candidate sparsity levels; ``None`` means ``1 .. n / (m log(p))``
        (see above). Larger values are left out, with a warning; values
        above ``n_features`` (``n_groups``) are clipped to it, and values
        below the number of ``always_select`` features (or groups) left out.
    criterion : {'ebic', 'bic', 'aic', 'gic'}, default='ebic'
        The information criterion.
    gamma : float in [0, 1], default=1.0
        EBIC's ``gamma`` (0 gives BIC).

    Attributes
    ----------
    k_ : int
        The chosen sparsity level.
    criterion_ : ndarray of shape (n_k,)
        The criterion at each ``k`` of ``k_grid_`` (``inf`` where the fit
        has more features than the criteria can judge, see above).
    k_grid_ : ndarray of shape (n_k,)
        The grid used.
    n_passes_ : int
        Only when ``X`` is a dask array: the passes over its chunks for the
        path and the refit (1 for least squares).
    best_estimator_ : estimator
        ``estimator`` with ``k=k_`` refitted on all the data.
    classes_ : ndarray
        Class labels (classifiers).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    SparsityCV : Choose k by cross-validation.

    References
    ----------
    J. Chen and Z. Chen, "Extended Bayesian information criteria for model
    selection with large model spaces", Biometrika 95(3):759-771, 2008,
    https://doi.org/10.1093/biomet/asn034

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators import IHTRegressor
    >>> from sparse_estimators.model_selection import SparsityIC
    >>> rng = np.random.RandomState(0)
    >>> X = rng.standard_normal((200, 300))
    >>> y = X[:, 1] - 2 * X[:, 5] + 1.5 * X[:, 20] + 0.5 * rng.standard_normal(200)
    >>> SparsityIC(IHTRegressor(), k_grid=range(1, 11), criterion="ebic").fit(X, y).k_
    3
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "k_grid": ["array-like", None],
        "criterion": [StrOptions(set(CRITERIA))],
        "gamma": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, estimator, *, k_grid=None, criterion="ebic", gamma=1.0):
        self.estimator = estimator
        self.k_grid = k_grid
        self.criterion = criterion
        self.gamma = gamma

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None, **params):
        """Compute the path, the criterion at each ``k``, choose ``k_`` and refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            A classifier's column vector ``(n_samples, 1)`` is raveled with
            a DataConversionWarning.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the estimator (with metadata routing enabled, only if
            it requests it: ``set_fit_request(sample_weight=True)``).
        **params : dict
            With metadata routing enabled, metadata the estimator requests.

        Returns
        -------
        self : object
        """
        return self._atomic(self._fit, X, y, sample_weight, params)

    def _fit(self, X, y, sample_weight, params):
        self._check_estimator()
        X, y = self._validate_input(X, y)
        sample_weight = self._routed_fit_params(sample_weight, params).estimator.fit.get("sample_weight")
        if getattr(self.estimator, "loss", None) == "huber":  # (before the path: no criterion to compare with)
            raise ValueError("SparsityIC needs a likelihood, and the Huber loss (loss='huber') has none: "
                             "choose k by cross-validation with SparsityCV.")
        template, grid, fits, info, loss = _path_fits(self.estimator, X, y, sample_weight, self.k_grid,
                                                      criterion_limit=True)
        if not loss.has_likelihood:
            raise ValueError(f"SparsityIC needs a likelihood, and the {type(loss).__name__} has none: "
                             "choose k by cross-validation with SparsityCV.")
        structure = template._structure(template._validate_params(), loss)  # (EBIC counts groups with groups)
        bound = info["criterion_bound"]
        # a fit with more features than the criteria can judge (groups larger than the level's share) is not chosen
        judged = [structure.features(structure.units(fit.support)).size <= bound for fit in fits]
        crit = [information_criterion(loss, fit.coef, fit.b, self.criterion, self.gamma, structure=structure)
                if ok else np.inf for fit, ok in zip(fits, judged, strict=True)]
        if not any(judged):
            raise ValueError(f"Every fit of k_grid {grid.tolist()} has more than {bound} features, the most an "
                             f"information criterion can judge on these data (with groups, the selected groups "
                             f"are larger): choose k with SparsityCV.")
        self.criterion_ = np.array(crit)
        self.k_grid_ = grid
        self.k_ = int(grid[int(np.argmin(self.criterion_))])
        self._refit(X, y, sample_weight, (template, loss, info) if is_dask_collection(X) else None)

    def get_metadata_routing(self):
        """Get the metadata routing of this object: ``fit``'s metadata go to the estimator's fit.

        Returns
        -------
        routing : MetadataRouter
            A :class:`~sklearn.utils.metadata_routing.MetadataRouter`.
        """
        return MetadataRouter(owner=self).add(estimator=self.estimator,
                                              method_mapping=MethodMapping().add(caller="fit", callee="fit"))
