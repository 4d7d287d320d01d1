"""Choosing k by cross-validation over warm-started sparsity paths (SparsityCV)."""


import numbers
import time
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import _fit_context, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.metrics._scorer import _check_multimetric_scoring, _MultimetricScorer
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
)
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
)

from .. import _policy
from .._dask import is_dask_collection
from ._path import _search_grid
from ._scoring import _accepts_sample_weight, _fold_rescore, _fold_scores, _guarded, _rank, _Scoring
from ._search import _SparsitySearchBase

__all__ = ["SparsityCV"]


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
    on its Gram path and a dask ``X`` chunked by rows, the whole search
    reads ``X`` once (``n_passes_ == 1``): one pass accumulates each fold's Gram statistics
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
    given labels. Scorers other than ``None`` (R^2), ``'r2'``,
    ``'neg_mean_squared_error'`` and ``'neg_root_mean_squared_error'`` are
    refused with a ValueError. The partial results in flight hold one
    ``p x p`` matrix per fold: this path is taken up to 4096 features with
    ``precompute='auto'`` (at any width with ``precompute=True``).

    The classifiers, the ``'poisson'``, ``'gamma'`` and ``'huber'`` losses,
    and least squares read at every iteration (above 4096 features with
    ``precompute='auto'``, or ``precompute=False``) read a dask ``X`` at
    every step (one pass per product). Each fold's path is then the
    estimator's own dask fit on a lazy view of its training rows, and the
    folds run **in lockstep**: every pass over ``X`` computes the next
    product of every fold (``n_passes_`` about the passes of the slowest
    fold's path, not their sum, plus the refit's). Each level is scored on
    its test rows block by block, where the blocks live, with the
    estimator's own ``score`` (accuracy, D^2, R^2: ``scoring`` ``None`` or
    its name; least squares and Huber also take ``'r2'``,
    ``'neg_mean_squared_error'`` and ``'neg_root_mean_squared_error'``;
    Huber's own D^2 is computed from each level's test predictions,
    gathered in the client).
    These searches hold the targets, weights and ``groups`` (``n`` values)
    in memory, so their folds are scikit-learn's on NumPy data for any
    ``cv`` (``check_cv``, then ``split`` on the targets and ``groups``:
    stratified folds for a classifier's int, ``GroupKFold``,
    ``ShuffleSplit``, iterables of ``(train, test)`` indices...), except
    ``KFold(shuffle=True)``, the seeded hash above; splits that repeat a
    row are refused with a ValueError. A least-squares search with a
    splitter other than an int, ``KFold`` or ``PredefinedSplit`` runs this
    way too, each fold's Gram statistics from its own pass (the folds'
    passes shared: three or four passes with the refit).

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
        ``X``: the same splits, except ``KFold(shuffle=True)`` (a seeded
        hash of the row index); only an int, ``KFold`` or ``PredefinedSplit``
        keep least squares to its single pass (see above).
    scoring : str, callable, list, tuple or dict, default=None
        As in ``GridSearchCV``; ``None`` uses the estimator's ``score``
        (R^2, D^2, accuracy, or the concordance index of the survival
        models). Several metrics (a list of names or a dict of
        scorers) are all reported in ``cv_results_``; ``refit`` then names
        the one that chooses ``k``. :meth:`score` scores by that metric too.
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
        (least squares: its folds run in memory on ``p x p`` statistics, one
        after the other; the other losses: its folds in lockstep, see above).
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
        whole search and the refit (1 for least squares from its Gram
        statistics; otherwise the passes of the folds in lockstep plus the
        refit's ``best_estimator_.n_passes_``).
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
            A dask array chunked by rows is read once for least squares,
            once per step of the folds in lockstep otherwise (see above).
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
        n_failed = len(failed)  # (fold paths, then full fits, that scored error_score: see _select's message)
        while True:  # full fits at the chosen and the best levels, until the chosen one is a full fit
            results = self._results(grid, test_scores, train_scores, times, full, len(out))
            best = self._select(results, metric, names, n_failed)
            if full[best]:
                break
            order = np.argsort(-np.round(results[f"mean_test_{ranking}"], 12), kind="stable")
            short = [best] + [i for i in order if not full[i] and i != best][:_policy.CV_FULL_SEARCH_LEVELS - 1]
            # (and the levels between them: a cheap path point can score below a full fit's neighbours)
            todo = np.flatnonzero(~full & (grid >= grid[short].min()) & (grid <= grid[short].max()))
            rescored = rescore(todo)
            for i, r in zip([i for i, o in enumerate(out) if o[0] is not None], rescored, strict=True):
                if r[0] is None:
                    n_failed += 1
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
        else:  # (not an earlier fit's: no metric chose k)
            self.__dict__.pop("best_score_", None)

    def score(self, X, y, sample_weight=None):
        """The score of the refitted best estimator by the metric that chose ``k``, as ``GridSearchCV``'s.

        ``scoring`` (its ``refit`` metric when there are several); the
        estimator's own ``score`` (R^2, accuracy, D^2, concordance index)
        when ``scoring`` is None, or when ``refit`` is a callable over
        several metrics (no metric chose ``k``). A nested cross-validation
        (``cross_val_score(search, X, y)``) thus scores the outer folds by the
        metric the inner search optimised.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a structured survival array
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the scorer when it accepts it.

        Returns
        -------
        float
        """
        check_is_fitted(self)
        scorer, _, _ = self._get_scorers()
        metric = self.refit if isinstance(self.refit, str) else None
        if scorer is None or (self.multimetric_ and metric is None):
            return self.best_estimator_.score(X, y, sample_weight=sample_weight)
        if isinstance(scorer, _MultimetricScorer):
            scorer = scorer._scorers[metric]
        kwargs = {} if sample_weight is None or not _accepts_sample_weight(scorer) else {"sample_weight": sample_weight}
        score = scorer(self.best_estimator_, X, y, **kwargs)
        if isinstance(score, dict):  # (a callable scoring returning a dict of metrics)
            score = score[metric or "score"]
        return float(score)

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
        results = {"param_k": np.ma.MaskedArray(grid.astype(np.int64), mask=False),  # (integers, as GridSearchCV's)
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

    def _select(self, results, metric, names, n_failed=0):
        """The index ``refit`` chooses; a ValueError when every score it reads is NaN.

        ``n_failed``: the fits that failed and scored ``error_score`` (a NaN
        one makes every mean it enters NaN): the message names them as the
        cause, not the scoring.
        """
        for name in ([metric] if metric else names):
            if not np.all(np.isnan(results[f"mean_test_{name}"])):
                break
        else:
            grid = [p["k"] for p in results["params"]]
            if n_failed and self.error_score != "raise" and np.isnan(self.error_score):
                raise ValueError(f"Every cross-validated score is NaN (k_grid {grid}), so no k can be chosen: "
                                 f"{n_failed} fold fit(s) failed (see the FitFailedWarning) and error_score=nan "
                                 "makes every mean they enter NaN. Pass error_score='raise' to see the error, "
                                 "or a finite error_score to choose k without those folds' levels.")
            if self.scoring is not None:  # (a scorer that raised scored error_score, with scikit-learn's warning)
                raise ValueError(f"Every cross-validated score is NaN (k_grid {grid}), so no k can be chosen: the "
                                 f"scoring {self.scoring!r} failed or was undefined on some fold at every level "
                                 "(see the 'Scoring failed' warnings; e.g. a probability scorer on a test fold "
                                 "with a class its training fold lacks). Pass error_score='raise' to see the "
                                 "error, or use folds that keep every class in training (StratifiedKFold) or "
                                 "another scoring.")
            raise ValueError(f"Every cross-validated score is NaN (k_grid {grid}), so no k can be chosen; with "
                             "one-sample test folds (e.g. cv=n_samples) R^2 is undefined: use fewer folds or "
                             "another scoring.")
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
