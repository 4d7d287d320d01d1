"""Scoring the folds of a sparsity search: per-fold path scores, error scores, ranks, the one-SE rule."""


import time
import traceback
from inspect import signature

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.model_selection._validation import _score
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import (
    _check_method_params,
    validate_data,
)

from ._path import _fitted_estimator, _path_fits

__all__ = ["one_standard_error"]


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
    fits = _fits_from_starts(est, operator, loss, levels, starts)
    return scoring.score_fits(est, fits, levels, info, X, y, train, test)


def _fits_from_starts(est, operator, loss, levels, starts):
    """``est``'s full fits on ``loss`` at ``levels``, each from its path start ``(support, rows, intercept)``."""
    fits = []
    for k, (support, rows, b) in zip(levels, starts, strict=True):
        W = loss.zeros()[0]
        W[support] = rows
        fits.append(est._solve(loss, operator, int(min(k, loss.n_features)), W, b.copy()))
    return fits


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
