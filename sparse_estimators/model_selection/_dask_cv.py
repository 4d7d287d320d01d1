"""SparsityCV on a dask ``X``: every fold's Gram statistics from one pass, then the whole search in memory.

The pass (:meth:`~sparse_estimators.losses._dask_design.DaskDesign.gram_statistics`
with fold labels) returns, for each fold, the statistics of its rows: weight,
means, centred cross-products ``X^T X``, ``X^T y``, ``y^T y`` and extremes.
A fold's training loss is the merge of the other folds' statistics (the
Gram path's :class:`~sparse_estimators.losses._dask_squared.DaskGramSquaredLoss`);
its validation squared error is a quadratic form in its own statistics,

    RSS_j = yy_j - 2 C_j^T W_j + W_j^T G W_j + sum(s) (y_mean_j - x_mean^T W_j - b_j)^2

(``G``, ``C``, ``yy`` centred at the fold's weighted means), so R^2 and the
mean squared error need no second pass. Then the search runs exactly as
:class:`~sparse_estimators.model_selection.SparsityCV` does on NumPy data
(paths, full fits of the best levels, refit on all the rows from the merged
statistics).
"""

import numbers
import time

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.model_selection import KFold, PredefinedSplit
from sklearn.utils import check_random_state

from .. import _policy
from .._dask import as_dask_array, check_dask_fit_input, check_dask_X, set_feature_names
from ._path import _fitted_estimator, _path_fits, _search_grid
from ._scoring import _fits_from_starts, _guarded

#: scorers computed from the folds' statistics (R^2 is the estimator's own score)
_SCORINGS = (None, "r2", "neg_mean_squared_error", "neg_root_mean_squared_error")


def _kfold_labels(start, n, n_samples, n_splits):
    """Folds of rows ``start .. start + n`` as :class:`~sklearn.model_selection.KFold` without shuffling."""
    sizes = np.full(n_splits, n_samples // n_splits, dtype=np.int64)
    sizes[:n_samples % n_splits] += 1
    return np.searchsorted(np.cumsum(sizes), np.arange(start, start + n), side="right")


def _hash_labels(start, n, n_splits, seed):
    """Folds of rows ``start .. start + n``: a seeded hash of the row index, modulo ``n_splits``.

    The hash is splitmix64's output function of ``i + seed * 0x9E3779B97F4A7C15``
    (mod ``2**64``): neighbouring rows land in unrelated folds, and a row's
    fold depends on its index and the seed only, not on the chunks.
    """
    z = np.arange(start, start + n, dtype=np.uint64) + np.uint64(seed * 0x9E3779B97F4A7C15 % 2**64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(n_splits)).astype(np.int64)


def _given_labels(labels):
    return labels


def hash_folds(n_samples, n_splits, seed):
    """The fold of each row under ``KFold(n_splits, shuffle=True, random_state=seed)`` on a dask ``X`` (int seed).

    ``PredefinedSplit(hash_folds(n, n_splits, seed))`` gives the same folds
    on NumPy data.
    """
    return _hash_labels(0, n_samples, n_splits, seed)


def _fold_plan(cv, rows):
    """``(labelling, folds)``: one ``(function, args)`` per block of rows (``rows``: the row chunks), the test folds.

    ``cv``: an int or ``KFold`` without shuffling (the folds scikit-learn
    draws on NumPy data), ``KFold(shuffle=True)`` (:func:`_hash_labels`,
    seeded by its ``random_state`` when an int, else by an int drawn from
    it), or ``PredefinedSplit`` (its labels, ``-1`` for rows never in a test
    fold).
    """
    n_samples = int(sum(rows))
    starts = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(int)
    cv = 5 if cv is None else cv
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        cv = KFold(int(cv))
    if type(cv) is KFold:
        if cv.n_splits > n_samples:
            raise ValueError(f"Cannot have number of splits n_splits={cv.n_splits} greater than the number of "
                             f"samples: n_samples={n_samples}.")
        if cv.shuffle:
            seed = cv.random_state if isinstance(cv.random_state, numbers.Integral) else \
                int(check_random_state(cv.random_state).randint(np.iinfo(np.int32).max))
            labelling = [(_hash_labels, (int(s), int(n), cv.n_splits, seed)) for s, n in zip(starts, rows, strict=True)]
        else:
            labelling = [(_kfold_labels, (int(s), int(n), n_samples, cv.n_splits))
                         for s, n in zip(starts, rows, strict=True)]
        return labelling, list(range(cv.n_splits))
    if isinstance(cv, PredefinedSplit):
        labels = np.asarray(cv.test_fold)
        if labels.shape != (n_samples,):
            raise ValueError(f"The PredefinedSplit has {labels.shape[0]} labels; X has {n_samples} rows.")
        labelling = [(_given_labels, (labels[s:s + n],)) for s, n in zip(starts, rows, strict=True)]
        return labelling, [int(f) for f in np.unique(labels) if f != -1]
    raise ValueError(f"On a dask X, SparsityCV's cv must be an int, a KFold or a PredefinedSplit (folds that each "
                     f"block of rows labels by its rows' indices, in the single pass over X); got {cv!r}. For other "
                     "folds, pass PredefinedSplit(test_fold) with the fold of each row.")


def _check_supported(search, n_features):
    """Which search a dask ``X`` takes (``'gram'``, ``'lockstep'``); ValueErrors for what neither can do."""
    est = search.estimator
    loss = est._loss_name() if hasattr(est, "_loss_name") else None
    if getattr(est, "_structured_target", False) or not (is_classifier(est) or is_regressor(est)):
        raise ValueError(f"SparsityCV on a dask X takes the regressors and classifiers; {type(est).__name__} "
                         "would need its folds' risk sets in memory. Pass a NumPy array.")
    if is_classifier(est) or loss != "squared_error":  # (a pass per product: the folds fitted in lockstep)
        return "lockstep"
    if est.precompute is False or (est.precompute == "auto" and n_features > _policy.DASK_GRAM_MAX_FEATURES):
        return "lockstep"  # (least squares read at every iteration, as the GLM losses)
    if not _one_pass_cv(search.cv):  # (other splits: each fold's own Gram pass, the folds' passes shared)
        return "lockstep"
    if not (search.scoring is None or (isinstance(search.scoring, str) and search.scoring in _SCORINGS)):
        raise ValueError(f"On a dask X, SparsityCV scores the folds from their statistics: scoring must be one of "
                         f"{list(_SCORINGS)}, got {search.scoring!r}.")
    return "gram"


def _one_pass_cv(cv):
    """Whether :func:`_fold_plan` labels the rows of ``cv``'s folds block by block (int, KFold, PredefinedSplit)."""
    return cv is None or (isinstance(cv, numbers.Integral) and not isinstance(cv, bool)) or type(cv) is KFold \
        or isinstance(cv, PredefinedSplit)


def _squared_errors(stats, W, b):
    """Per target, the weighted residual sum of squares of the rows of ``stats`` (centred) under ``(W, b)``."""
    d = stats["y_mean"] - stats["x_mean"] @ W - b
    rss = (stats["yy"] - 2 * np.einsum("pm,pm->m", stats["xy"], W) + np.einsum("pm,pm->m", W, stats["xx"] @ W)
           + stats["weight"] * d * d)
    return np.maximum(rss, 0.0)


def _score(stats, est, scoring):
    """``scoring`` (R^2, averaged over targets, or minus the mean squared error) of ``est`` on ``stats``' rows.

    NaN where scikit-learn's metric is undefined on those rows: a zero total
    weight, and R^2 on fewer than two rows.
    """
    if not stats["weight"] > 0 or (scoring in (None, "r2") and stats["rows"] < 2):
        return np.nan
    coef = np.asarray(est.coef_, dtype=float)
    W = coef[:, None] if coef.ndim == 1 else coef.T
    rss = _squared_errors(stats, W, np.atleast_1d(np.asarray(est.intercept_, dtype=float)))
    if scoring == "neg_mean_squared_error":
        return -float(np.mean(rss / stats["weight"]))
    if scoring == "neg_root_mean_squared_error":
        return -float(np.mean(np.sqrt(rss / stats["weight"])))
    total = stats["yy"]  # (r2_score: 1 where y is constant and predicted exactly, else 0 there)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(total > 0, 1 - rss / np.where(total > 0, total, 1), np.where(rss == 0, 1.0, 0.0))
    return float(np.mean(r2))


def _fit_weights(routed):
    """The fit's routed ``sample_weight``, which must also be the scorer's (the folds are scored with it)."""
    sample_weight = routed.estimator.fit.get("sample_weight")
    if (routed.scorer.score.get("sample_weight") is None) != (sample_weight is None):
        raise ValueError("On a dask X, SparsityCV scores the folds with the fit's sample weights: the scorer must "
                         "receive the same sample_weight as the estimator (or neither may).")
    return sample_weight


def _report_fold(i, n_folds, grid, scores, elapsed):
    """The verbose line of fold ``i``'s path: its time and best level."""
    best = int(np.nanargmax(scores)) if not np.all(np.isnan(scores)) else 0
    print(f"[SparsityCV] fold {i + 1}/{n_folds}: path over {len(grid)} values of k "
          f"in {elapsed:.2f} s, best k={grid[best]} (score {scores[best]:.4f})", flush=True)

class _Folds:
    """The folds' statistics and what a search needs from them: losses, scores."""

    def __init__(self, search, X, design, parts, labels, n_outputs, y_ndim, weighted, dtype):
        from ..losses._dask_design import merged

        self.estimator, self.X, self.design = search.estimator, X, design
        self.scoring, self.return_train_score = search.scoring, search.return_train_score
        self.n_outputs, self.y_ndim, self.weighted, self.dtype = n_outputs, y_ndim, weighted, dtype
        order = sorted(parts)
        self.total = merged([parts[g] for g in order])
        self.test = [parts[f] for f in labels]  # (train: the merge of the other labels, -1 included)
        self.train = [merged([parts[g] for g in order if g != f]) if len(order) > 1 else None for f in labels]

    def setup(self, stats):
        """``setup(est)`` for :func:`_path_fits`: the loss of the rows of ``stats``, no pass."""
        from ..linear_model._dask import check_statistics, gram_loss
        from ..losses._dask_design import uncentred
        from ..losses._dask_squared import DaskGramSquaredLoss

        def setup(est):
            if stats is None:  # (a fold holding every row: fails, and scores error_score, as on NumPy data)
                raise ValueError("Found array with 0 sample(s) (shape=(0, "
                                 f"{self.design.shape[1]})) while a minimum of 1 is required: the training set "
                                 "of a test fold holding every row.")
            set_feature_names(est, self.X)
            est.n_features_in_ = self.design.shape[1]
            check_statistics(stats, self.weighted, (int(stats["rows"]), self.design.shape[1]))
            rows = stats if est.fit_intercept else uncentred(stats)
            loss = DaskGramSquaredLoss.from_statistics(self.design, rows, self.n_outputs, est.fit_intercept,
                                                       self.weighted)
            return gram_loss(est, loss, rows, self.y_ndim, self.dtype)

        return setup

    def scores(self, template, fits, levels, info, i):
        estimators = [_fitted_estimator(template, fit, info, k) for fit, k in zip(fits, levels, strict=True)]
        test = {"score": np.array([_score(self.test[i], e, self.scoring) for e in estimators])}
        train = {"score": np.array([_score(self.train[i], e, self.scoring) for e in estimators])} \
            if self.return_train_score else None
        return test, train

    def path(self, grid, i, verbose):
        """The path over ``grid`` on training fold ``i``, scored: as ``_fold_scores`` of NumPy data."""
        start = time.perf_counter()
        template, grid, fits, info, _ = _path_fits(self.estimator, None, None, None, grid, second_search=False,
                                                   setup=self.setup(self.train[i]))
        test, train = self.scores(template, fits, grid, info, i)
        elapsed = time.perf_counter() - start
        if verbose:
            _report_fold(i, len(self.test), grid, test["score"], elapsed)
        return test, train, elapsed, [(fit.support, fit.coef[fit.support], fit.b) for fit in fits]

    def rescore(self, i, levels, starts):
        """Full fits at ``levels`` on training fold ``i`` from the path's ``starts``: as ``_fold_rescore``."""
        est = clone(self.estimator)
        operator = est._validate_params()
        loss, info = self.setup(self.train[i])(est)
        info = dict(info, structure=est._structure(operator, loss))
        return self.scores(est, _fits_from_starts(est, operator, loss, levels, starts), levels, info, i)


def dask_cv_fit(search, X, y, sample_weight, params):
    """:meth:`SparsityCV.fit <sparse_estimators.model_selection.SparsityCV.fit>` on a dask ``X``: one pass."""
    from sklearn.metrics import check_scoring

    from ..linear_model._dask import check_statistics
    from ..losses._dask_design import DaskDesign

    Xa = check_dask_X(as_dask_array(X, "X"))
    if _check_supported(search, Xa.shape[1]) == "lockstep":  # (the GLM losses, classifiers: _dask_cv_glm.py)
        from ._dask_cv_glm import lockstep_cv_fit

        return lockstep_cv_fit(search, X, Xa, y, sample_weight, params)
    X, y = search._validate_input(X, y)
    scorer, _, _ = search._get_scorers()
    routed = search._routed_fit_params(sample_weight, params, splitter=True,
                                       scorer=check_scoring(search.estimator) if scorer is None else scorer)
    sample_weight = _fit_weights(routed)
    grid = _search_grid(search.estimator, X, search.k_grid)
    Xa, Y, y_ndim, sw = check_dask_fit_input(Xa, y, sample_weight)
    labelling, labels = _fold_plan(search.cv, Xa.chunks[0])
    design = DaskDesign(Xa)
    start = time.perf_counter()
    parts = design.gram_statistics(Y, sw, centred=True, folds=labelling)
    empty = [f for f in labels if f not in parts]
    if empty:  # (hashed folds of very few rows)
        raise ValueError(f"The test folds {empty} hold no rows of X ({Xa.shape[0]} rows): use fewer folds.")
    folds = _Folds(search, X, design, parts, labels, Y.shape[1], y_ndim, sw is not None, Xa.dtype)
    check_statistics(folds.total, sw is not None, Xa.shape)
    out = [_guarded(folds.path, search.error_score, grid, i, search.verbose) for i in range(len(labels))]

    def rescore(todo):
        return [_guarded(folds.rescore, search.error_score, i, grid[todo], [o[3][j] for j in todo])
                for i, o in enumerate(out) if o[0] is not None]

    search._choose(grid, out, rescore)
    template = clone(search.estimator)
    template._validate_params()
    loss, info = folds.setup(folds.total)(template)
    search._refit(X, y, sample_weight, (template, loss, info))
    if search.verbose:
        search._report(start)
