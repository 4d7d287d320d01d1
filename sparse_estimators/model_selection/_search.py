"""Choosing k: cross-validation over warm-started paths, and information criteria."""

import time

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.metrics import check_scoring, r2_score
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, indexable, validate_data

from .._utils import all_or_nothing
from ._criteria import CRITERIA, information_criterion
from ._path import _check_k_grid, _fitted_estimator, _path_fits


def _fold_scores(estimator, X, y, sample_weight, train, test, k_grid, scorer, fold, n_folds, verbose):
    """Path over ``k_grid`` on one training fold (cheap splicing: first search only), scored on its test part.

    Returns the scores, the time, and each level's solution ``(support,
    coef rows, intercept variable)``, the starts of the full fits of
    :func:`_fold_rescore`.
    """
    start = time.perf_counter()
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    sw_train = None if sample_weight is None else sample_weight[train]
    template, grid, fits, info, _ = _path_fits(estimator, X_train, y_train, sw_train, k_grid, second_search=False)
    scores = _score_fits(template, fits, grid, info, _safe_indexing(X, test), _safe_indexing(y, test), scorer)
    elapsed = time.perf_counter() - start
    if verbose:
        print(f"[SparsityCV] fold {fold + 1}/{n_folds}: path over {len(grid)} values of k "
              f"in {elapsed:.2f} s, best k={grid[np.argmax(scores)]} (score {scores.max():.4f})", flush=True)
    return scores, elapsed, [(fit.support, fit.coef[fit.support], fit.b) for fit in fits]


def _fold_rescore(estimator, X, y, sample_weight, train, test, levels, starts, scorer):
    """Full fits (the estimator's own splicing search) at ``levels`` on one fold, from the path's ``starts``."""
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    est = clone(estimator)
    operator = est._validate_params()
    loss, info = est._setup(X_train, y_train, None if sample_weight is None else sample_weight[train])
    fits = []
    for k, (support, rows, b) in zip(levels, starts, strict=True):
        W = loss.zeros()[0]
        W[support] = rows
        fits.append(est._solve(loss, operator, int(min(k, loss.n_features)), W, b.copy()))
    return _score_fits(est, fits, levels, info, _safe_indexing(X, test), _safe_indexing(y, test), scorer)


def _score_fits(template, fits, levels, info, X_test, y_test, scorer):
    estimators = [_fitted_estimator(template, fit, info, k) for fit, k in zip(fits, levels, strict=True)]
    if scorer is None:  # the estimator's own score (R^2 / accuracy), test data validated once
        return _default_scores(estimators, X_test, y_test)
    return np.array([scorer(est, X_test, y_test) for est in estimators])


def _default_scores(estimators, X_test, y_test):
    """``est.score(X_test, y_test)`` for fitted estimators sharing their training data.

    The same values as the estimators' ``score`` (R^2, uniform average over
    targets, or accuracy), with the test data validated once instead of once
    per estimator.
    """
    first = estimators[0]
    X_test = validate_data(first, X_test, accept_sparse=["csr", "csc"], reset=False)
    if is_classifier(first):
        y_test = np.asarray(y_test)
        return np.array([float(np.mean(est._labels_from_scores(est._scores(X_test)) == y_test))
                         for est in estimators])
    y_test = np.asarray(y_test, dtype=float)
    return np.array([r2_score(y_test, est._scores(X_test)) for est in estimators])


def _rank(mean):
    """Ranks of the mean scores (1 the best), as GridSearchCV: NaN ranks after every finite score.

    Means are compared to 12 significant decimals, so equal scores up to
    rounding tie (the first ``k`` of the grid wins the tie).
    """
    mean = np.round(mean, 12)
    if np.any(np.isnan(mean)):
        mean = np.where(np.isnan(mean), np.nanmin(mean) - 1, mean)
    return rankdata(-mean, method="min").astype(np.int32)


class _SparsitySearchBase(MetaEstimatorMixin, BaseEstimator):
    """Shared by the selectors: delegation to ``best_estimator_``, tags, atomic fit."""

    def _atomic(self, fit_body, *args):
        with all_or_nothing(self):
            fit_body(*args)
        return self

    def _refit(self, X, y, sample_weight):
        self.best_estimator_ = clone(self.estimator).set_params(k=int(self.k_)).fit(
            X, y, sample_weight=sample_weight)
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
        """Score of the refitted best estimator (R^2 or accuracy).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
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
    only, not from its second, screening start); then the three levels of
    best mean score, and those between them, are fitted again on every fold
    with the full search, started from the path's solutions, and rescored,
    and so on until the best level is such a full fit (``cv_results_['full_search']`` tells which
    were). The ``k`` with the best mean score is refitted on all the data.
    On well-posed problems a path point equals a
    single fit, so the choice is the one ``GridSearchCV(estimator, {'k':
    k_grid})`` makes on the same folds (ties: the first ``k`` of the grid).
    A warm-started point can differ from a cold fit where the cold fit stops
    in a worse local optimum (the path usually reaches the lower training
    loss), or, beyond the true sparsity, fills the extra slots with other
    noise features; where the CV curve is flat, the two searches can then
    pick neighbouring values of ``k`` with scores within noise of each other.

    Parameters
    ----------
    estimator : estimator of this package
        The model whose ``k`` is chosen; its other hyperparameters are kept.
    k_grid : array-like of int, default=None
        Candidate sparsity levels; ``None`` means ``1 .. min(n_features, 50)``.
    cv : int, cross-validation generator or iterable, default=5
        As in :class:`~sklearn.model_selection.GridSearchCV` (stratified
        folds for classifiers when an int).
    scoring : str or callable, default=None
        As in ``GridSearchCV``; ``None`` uses the estimator's ``score``
        (R^2 or accuracy).
    n_jobs : int, default=None
        Folds run in parallel through joblib; any joblib backend works,
        including Dask's (``with joblib.parallel_config(backend="dask"):``
        after creating a ``distributed.Client``).
    verbose : int, default=0
        Print one line per fold.

    Attributes
    ----------
    k_ : int
        The chosen sparsity level.
    best_index_ : int
        Its index in ``cv_results_``.
    best_score_ : float
        Its mean cross-validated score.
    best_estimator_ : estimator
        ``estimator`` with ``k=k_`` refitted on all the data.
    cv_results_ : dict of ndarrays
        GridSearchCV-like: ``param_k``, ``params``, ``split{i}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
        ``mean_path_time`` (seconds per fold for the whole path), and
        ``full_search`` (whether the level's scores come from the full fits).
    n_splits_ : int
        Number of folds.
    classes_ : ndarray
        Class labels (classifiers).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    SparsityIC : Choose k by BIC / EBIC, without cross-validation.
    sparsity_path : The warm-started path.

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

    def __init__(self, estimator, *, k_grid=None, cv=5, scoring=None, n_jobs=None, verbose=0):
        self.estimator = estimator
        self.k_grid = k_grid
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the path over ``k_grid``, choose ``k_`` and refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the estimator's fit on each training fold and the refit
            (not to the scorer, as in ``GridSearchCV``).

        Returns
        -------
        self : object
        """
        return self._atomic(self._fit, X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        X, y = indexable(X, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
        grid = _check_k_grid(self.k_grid, X.shape[1])
        cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        splits = list(cv.split(X, y))
        scorer = None if self.scoring is None else check_scoring(self.estimator, scoring=self.scoring)
        start = time.perf_counter()
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_scores)(self.estimator, X, y, sample_weight, train, test, grid, scorer, i,
                                  len(splits), self.verbose)
            for i, (train, test) in enumerate(splits))
        scores = np.array([o[0] for o in out])  # (n_splits, n_k)
        full = np.zeros(grid.size, dtype=bool)
        while True:  # full fits where the cheap path's scores are best, until the best is a full fit
            order = np.argsort(-np.round(scores.mean(axis=0), 12), kind="stable")
            if full[order[0]]:
                break
            short = grid[[i for i in order if not full[i]][:self._full_search_levels]]
            # (and the levels between them: a cheap path point can score below a full fit's neighbours)
            todo = np.flatnonzero(~full & (grid >= short.min()) & (grid <= short.max()))
            rescored = Parallel(n_jobs=self.n_jobs)(
                delayed(_fold_rescore)(self.estimator, X, y, sample_weight, train, test, grid[todo],
                                       [o[2][i] for i in todo], scorer)
                for o, (train, test) in zip(out, splits, strict=True))
            scores[:, todo] = np.array(rescored)
            full[todo] = True
        mean, std = scores.mean(axis=0), scores.std(axis=0)
        if np.all(np.isnan(mean)):
            raise ValueError(f"Every cross-validated score is NaN (k_grid {grid.tolist()}, {len(splits)} folds), "
                             "so no k can be chosen; with one-sample test folds (e.g. cv=n_samples) R^2 is "
                             "undefined: use fewer folds or another scoring.")
        rank = _rank(mean)
        results = {"param_k": np.ma.MaskedArray(grid.astype(object), mask=False),
                   "params": [{"k": int(k)} for k in grid]}
        for i in range(len(splits)):
            results[f"split{i}_test_score"] = scores[i]
        results.update(mean_test_score=mean, std_test_score=std, rank_test_score=rank,
                       mean_path_time=np.full(grid.size, np.mean([o[1] for o in out])), full_search=full)
        self.cv_results_ = results
        self.n_splits_ = len(splits)
        self.best_index_ = int(np.argmin(rank))
        self.best_score_ = float(mean[self.best_index_])
        self.k_ = int(grid[self.best_index_])
        self._refit(X, y, sample_weight)
        if self.verbose:
            print(f"[SparsityCV] chose k={self.k_} (mean score {self.best_score_:.4f}) in "
                  f"{time.perf_counter() - start:.2f} s", flush=True)


class SparsityIC(_SparsitySearchBase):
    """Choose ``k`` by an information criterion, then refit.

    One warm-started path on all the data (the estimator's own fits at each
    ``k``); no cross-validation, hence about ``cv`` times cheaper than
    :class:`SparsityCV`. For each ``k``, the criterion is ``-2 log L`` (the
    loss's :meth:`~sparse_estimators.losses.BaseLoss.minus_two_log_likelihood`:
    ``n sum_j log(RSS_j / n)`` for least squares, ``RSS_j`` the residual sum
    of squares of target ``j``; the deviance, twice the summed log-loss, for
    logistic and multinomial) plus a penalty in ``df``, the number of free
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
      (``doc/auto_k.md``).

    ``n`` is the number of observations: the number of samples, or the sum of
    the sample weights when it is larger (frequency weights; weights that sum
    to less, e.g. normalised to sum to 1, are read as relative importances,
    and the fit terms use the weighted means times ``n``).

    The grid stays where the criteria are defined: ``k`` at most
    ``n / (m log(p))`` (``m`` free coefficients per feature), beyond which
    the selection of the best-fitting features among ``p`` makes every
    criterion prefer ever larger models (in the limit of a saturated least
    squares fit, ``RSS = 0``, the fit term is minus infinity).

    Parameters
    ----------
    estimator : estimator of this package
        The model whose ``k`` is chosen.
    k_grid : array-like of int, default=None
        Candidate sparsity levels; ``None`` means ``1 .. n / (m log(p))``
        (see above). Larger values are left out, with a warning; values
        above ``n_features`` are clipped to it.
    criterion : {'ebic', 'bic', 'aic', 'gic'}, default='ebic'
        The information criterion.
    gamma : float in [0, 1], default=1.0
        EBIC's ``gamma`` (0 gives BIC).

    Attributes
    ----------
    k_ : int
        The chosen sparsity level.
    criterion_ : ndarray of shape (n_k,)
        The criterion at each ``k`` of ``k_grid_``.
    k_grid_ : ndarray of shape (n_k,)
        The grid used.
    best_estimator_ : estimator
        ``estimator`` with ``k=k_`` refitted on all the data.
    classes_ : ndarray
        Class labels (classifiers).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    SparsityCV : Choose k by cross-validation.

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

    def __init__(self, estimator, *, k_grid=None, criterion="ebic", gamma=1.0):
        self.estimator = estimator
        self.k_grid = k_grid
        self.criterion = criterion
        self.gamma = gamma

    def fit(self, X, y, sample_weight=None):
        """Compute the path, the criterion at each ``k``, choose ``k_`` and refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        return self._atomic(self._fit, X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        if self.criterion not in CRITERIA:
            raise ValueError(f"The 'criterion' parameter must be one of {CRITERIA}, got {self.criterion!r}.")
        if not (0.0 <= self.gamma <= 1.0):
            raise ValueError(f"The 'gamma' parameter must be in [0, 1], got {self.gamma!r}.")
        template, grid, fits, info, loss = _path_fits(self.estimator, X, y, sample_weight, self.k_grid,
                                                      criterion_limit=True)
        crit = [information_criterion(loss, fit.coef, fit.b, self.criterion, self.gamma) for fit in fits]
        self.criterion_ = np.array(crit)
        self.k_grid_ = grid
        self.k_ = int(grid[int(np.argmin(self.criterion_))])
        self._refit(X, y, sample_weight)
