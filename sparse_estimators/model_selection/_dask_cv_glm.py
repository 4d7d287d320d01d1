"""SparsityCV on a dask ``X`` for the losses read at every iteration: the folds fitted in lockstep, scored blockwise.

The classifiers (logistic, multinomial), the regressors with
``loss='poisson'``, ``'gamma'`` or ``'huber'``, and least squares above the
Gram path's limit (or ``precompute=False``) fit by one pass over ``X`` per
product (:class:`~sparse_estimators.losses._dask_design.DaskLinearDesign`);
least squares with a splitter the one-pass search cannot label block by
block comes here too (each fold's Gram statistics from its own pass).
Each fold's path is the estimator's own dask fit on its training rows (a
lazy view of ``X``'s blocks, never a copy), and the folds run in lockstep
(:func:`~sparse_estimators.model_selection._lockstep.run_in_lockstep`):
every pass over ``X`` computes the next product of every fold. Each fold's
levels are scored on its test rows block by block where the blocks live
(weighted sums per level, merged in the client): accuracy or D^2
(Poisson, Gamma), the estimators' own ``score`` (and R^2 and squared errors
for Huber and least squares). Huber's own score, D^2 of its loss at the
scale of each level's residuals, is no sum over the rows: each level's test
predictions are gathered in the client (levels x test rows floats). The targets, weights and groups (``n`` values) are
in the client, as in those fits: the splits are scikit-learn's.
"""

import time

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import KFold, check_cv
from sklearn.utils.validation import _check_sample_weight

from .. import _policy
from .._dask import check_dask_fit_input, set_feature_names
from ..losses._robust import d2_huber_score
from ._lockstep import run_in_lockstep
from ._path import _fitted_estimator, _path_fits, _search_grid
from ._scoring import _fits_from_starts, _guarded

#: the scorers of an R^2 regressor's folds that are sums over the rows too
_SQUARED_ERRORS = ("neg_mean_squared_error", "neg_root_mean_squared_error")


def score_kind(estimator):
    """The estimator's own ``score``: ``'accuracy'``, ``'r2'``, ``('d2', power)`` (blockwise sums) or ``'huber'``.

    ``'huber'`` (D^2 of Huber's loss, at the scale of each level's
    residuals: :func:`~sparse_estimators.losses._robust.d2_huber_score`) is
    not a sum over the rows: the levels' test predictions are gathered.
    """
    from ..linear_model._regressor import _LOG_LINK_POWER

    if is_classifier(estimator):
        return "accuracy"
    if estimator._loss_name() == "huber":
        return "huber"
    power = _LOG_LINK_POWER.get(estimator._loss_name())
    return "r2" if power is None else ("d2", power)


def check_scoring_name(search):
    """ValueError unless ``search.scoring`` is a score the blocks can sum: the estimator's own, or a squared error.

    Least squares and Huber also take R^2 (``'r2'``), the mean squared
    error and its root (``'neg_mean_squared_error'``, ``'neg_root_mean_squared_error'``).
    """
    kind = score_kind(search.estimator)
    if search.scoring is None or (isinstance(kind, str) and search.scoring == kind):
        return
    if kind == "huber" and isinstance(search.scoring, str) and search.scoring in ("r2",) + _SQUARED_ERRORS:
        return
    if kind == "r2" and isinstance(search.scoring, str) and search.scoring in _SQUARED_ERRORS:
        return
    own = {"huber": "D^2 of the Huber loss"}.get(kind, kind) if isinstance(kind, str) else f"D^2 (power {kind[1]})"
    accepted = f" or {kind!r}" if kind in ("accuracy", "r2") else ""
    if kind in ("r2", "huber"):
        accepted = ", " + ", ".join(repr(name) for name in ("r2",) + _SQUARED_ERRORS)
    raise ValueError(f"On a dask X, SparsityCV scores {type(search.estimator).__name__}'s folds block by block with "
                     f"its own score ({own}): scoring must be None{accepted}, got {search.scoring!r}.")


def _block_sums(x, y, w, rows, estimators, kind, centre):
    """Per level of ``estimators``: the weighted sums of ``kind``'s score on the block's rows ``rows``, ``(L, 4, m)``.

    Rows: the numerator (right predictions, residual sum of squares or
    deviance), the denominator (total weight, total sum of squares or null
    deviance about ``centre``), the number of rows and the total weight;
    columns: the ``m`` targets (``y`` is ``(n, m)``; one for classifiers).
    """
    from scipy.special import xlogy

    x, y = np.asarray(x)[rows], np.asarray(y)[rows]
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=float)[rows]
    out = np.zeros((len(estimators), 4, y.shape[1]))
    out[:, 2] = y.shape[0]
    out[:, 3] = w.sum()
    if not y.shape[0]:
        return out
    if kind != "accuracy":
        y = y.astype(float)
    for j, est in enumerate(estimators):
        scores = est._scores(x)
        if kind == "accuracy":
            out[j, :2, 0] = w @ (est._labels_from_scores(scores) == y[:, 0]), w.sum()
            continue
        scores = np.reshape(scores, y.shape)
        if kind == "r2":
            out[j, :2] = w @ (y - scores) ** 2, w @ (y - centre) ** 2
        elif kind[1] == 1:  # (Poisson deviance, as sklearn's _mean_tweedie_deviance)
            mu = np.exp(scores)
            out[j, :2] = w @ (2 * (xlogy(y, y / mu) - y + mu)), w @ (2 * (xlogy(y, y / centre) - y + centre))
        else:  # (Gamma deviance)
            mu = np.exp(scores)
            out[j, :2] = w @ (2 * (np.log(mu / y) + y / mu - 1)), w @ (2 * (np.log(centre / y) + y / centre - 1))
    return out


def _block_predictions(x, rows, estimators):
    """Per level of ``estimators``: the linear predictions of the block's rows ``rows``, ``(L, rows)``."""
    x = np.asarray(x)[rows]
    return np.array([np.reshape(est._scores(x), -1) for est in estimators]).reshape(len(estimators), x.shape[0])


def _join(*parts):
    return np.concatenate(parts, axis=1)


def _sum(*parts):
    return sum(parts[1:], parts[0])


def _finish(sums, kind, scoring=None):
    """Scores of the levels from their sums, averaged over targets (NaN where scikit-learn's metric is undefined).

    Undefined: a zero total weight, and R^2 or D^2 on fewer than two rows.
    """
    num, den, rows, weight = sums[:, 0], sums[:, 1], sums[:, 2, 0], sums[:, 3, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "accuracy":
            return np.where(den[:, 0] > 0, num[:, 0] / np.where(den[:, 0] > 0, den[:, 0], 1), np.nan)
        if scoring in _SQUARED_ERRORS:
            mse = num / np.where(weight > 0, weight, 1)[:, None]
            score = -np.mean(mse if scoring == "neg_mean_squared_error" else np.sqrt(mse), axis=1)
            return np.where(weight > 0, score, np.nan)
        if kind == "r2":  # (r2_score: 1 where y is constant and predicted exactly, else 0 there)
            score = np.where(den > 0, 1 - num / np.where(den > 0, den, 1), np.where(num == 0, 1.0, 0.0))
        else:
            score = 1 - num / den
    return np.where((rows < 2) | ~(weight > 0), np.nan, np.mean(score, axis=1))


def _fold_masks(search, Xa, y, split_params):
    """``(train, test)``: each split's training and test rows as boolean masks, the NumPy search's splits.

    ``KFold(shuffle=True)`` gives the seeded hash of the least-squares path
    (:func:`~sparse_estimators.model_selection._dask_cv._fold_plan`), as
    there. Any other ``cv`` (an int, a splitter, an iterable of ``(train,
    test)`` indices) is split by scikit-learn as on NumPy data:
    ``check_cv`` (stratified folds for a classifier's int), then ``split``
    on the dask ``X`` (its number of rows: scikit-learn's splitters read no
    values of ``X``), the targets and ``groups`` in memory (``n`` values).
    """
    from ._dask_cv import _fold_plan

    cv = 5 if search.cv is None else search.cv
    if type(cv) is KFold and cv.shuffle:
        labelling, folds = _fold_plan(cv, Xa.chunks[0])
        labels = np.concatenate([function(*args) for function, args in labelling])
        empty = [f for f in folds if not np.any(labels == f)]
        if empty:
            raise ValueError(f"The test folds {empty} hold no rows of X ({Xa.shape[0]} rows): use fewer folds.")
        return [labels != f for f in folds], [labels == f for f in folds]
    cv = check_cv(cv, y, classifier=is_classifier(search.estimator))
    train, test = [], []
    for i, split in enumerate(cv.split(Xa, y, **split_params)):
        for index, masks, name in zip(split, (train, test), ("training", "test"), strict=True):
            index = np.asarray(index)
            mask = np.zeros(Xa.shape[0], dtype=bool)
            mask[index] = True
            if index.dtype != bool and np.count_nonzero(mask) != index.size:
                raise ValueError(f"On a dask X, SparsityCV takes each split's rows once: the {name} rows of split "
                                 f"{i} of cv repeat some rows (a fold of X is a set of its rows).")
            masks.append(mask)
        if not test[-1].any():
            raise ValueError(f"The test set of split {i} of cv holds no rows of X.")
    return train, test


def _subset(X, masks):
    """The rows of the dask ``X`` where the per-block ``masks`` hold: a lazy view of its blocks (no copy)."""
    import dask.array as da

    pieces = [X.blocks[b][m] for b, m in enumerate(masks) if m.any()]
    return pieces[0] if len(pieces) == 1 else da.concatenate(pieces, axis=0)


class _LockstepFolds:
    """The folds of a dask ``X``: each path the estimator's own dask fit on its training rows, scored blockwise."""

    def __init__(self, search, X, Xa, Y, y, sample_weight, sample_weight_lazy, train, test):
        self.estimator, self.X, self.Xa = search.estimator, X, Xa
        self.return_train_score, self.scoring = search.return_train_score, search.scoring
        self.kind = score_kind(search.estimator)
        if self.kind == "huber" and search.scoring is not None:  # (R^2 or a squared error: blockwise sums)
            self.kind = "r2"
        self.y, self.sample_weight = y, sample_weight
        self.x_blocks = Xa.to_delayed(optimize_graph=False).ravel()
        self.y_blocks = Y.to_delayed(optimize_graph=False).ravel()  # (n x m blocks: every target)
        self.w_blocks = [None] * len(self.x_blocks) if sample_weight_lazy is None else \
            list(sample_weight_lazy.to_delayed(optimize_graph=False).ravel())
        self.bounds = np.concatenate([[0], np.cumsum(Xa.chunks[0])]).astype(int)
        self.train, self.test = train, test
        self.setups = [None] * len(test)  # (the path's template, loss and info, reused by the full fits)
        self.passes = [0] * len(test)  # (each fold's passes, were it fitted alone)

    def _blocks(self, mask):
        return [mask[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]

    def _lazy_sums(self, estimators, mask):
        """The delayed sums of :func:`_block_sums` over the rows ``mask`` (a tree over the blocks)."""
        import dask

        from ..losses._dask_design import _tree

        if self.kind == "huber":  # (not a sum: the predictions, in the rows' order)
            ests = dask.delayed(estimators, traverse=False)
            block = dask.delayed(_block_predictions, pure=True)
            parts = [block(x, m, ests) for x, m in zip(self.x_blocks, self._blocks(mask), strict=True) if m.any()]
            return _tree(parts, _join) if parts else dask.delayed(np.zeros)((len(estimators), 0))
        centre = None
        if self.kind != "accuracy" and mask.any():
            w = None if self.sample_weight is None else self.sample_weight[mask]
            y = self.y[mask].astype(float)
            centre = np.average(y.reshape(y.shape[0], -1), axis=0, weights=w) if w is None or w.sum() > 0 else 0.0
        ests = dask.delayed(estimators, traverse=False)
        block = dask.delayed(_block_sums, pure=True)
        parts = [block(x, y, w, m, ests, self.kind, centre)
                 for x, y, w, m in zip(self.x_blocks, self.y_blocks, self.w_blocks, self._blocks(mask), strict=True)
                 if m.any()]
        if not parts:
            return dask.delayed(np.zeros)((len(estimators), 4, 1 if self.y.ndim == 1 else self.y.shape[1]))
        return _tree(parts, _sum)

    def scores(self, template, fits, levels, info, i):
        """Test (and train) scores of the fitted levels of fold ``i``: one pass (shared with the other folds)."""
        import dask

        estimators = [_fitted_estimator(template, fit, info, k) for fit, k in zip(fits, levels, strict=True)]
        masks = [self.test[i]] + ([self.train[i]] if self.return_train_score else [])
        sums = dask.compute(*[self._lazy_sums(estimators, mask) for mask in masks])
        self.passes[i] += 1
        finish = [self._huber_scores(np.asarray(s), m, template) if self.kind == "huber" else
                  _finish(np.asarray(s), self.kind, self.scoring) for s, m in zip(sums, masks, strict=True)]
        return {"score": finish[0]}, ({"score": finish[1]} if self.return_train_score else None)

    def _huber_scores(self, predictions, mask, template):
        """D^2 of the Huber loss of each level's ``predictions`` of the rows ``mask`` (as the estimator's ``score``)."""
        y = self.y[mask].reshape(-1).astype(float)
        w = None if self.sample_weight is None else self.sample_weight[mask]
        return np.array([d2_huber_score(y, pred, w, template.epsilon) for pred in predictions])

    def path(self, grid, i, verbose):
        """The path over ``grid`` on training fold ``i``, scored: as ``_fold_scores`` of NumPy data."""
        start = time.perf_counter()
        train = self.train[i]
        X_train = _subset(self.Xa, self._blocks(train))
        sw = None if self.sample_weight is None else self.sample_weight[train]
        def setup(est):  # (the fold's rows are a dask array: the search's X names the features, for groups
            # given as a callable of the names and always_select's names)
            loss_info = est._setup(X_train, self.y[train], sw)
            set_feature_names(est, self.X)
            return loss_info

        template, grid, fits, info, loss = _path_fits(self.estimator, None, None, None, grid, second_search=False,
                                                      setup=setup)
        self.setups[i] = (template, loss, info)
        self.passes[i] += loss.design.n_passes
        test, train_scores = self.scores(template, fits, grid, info, i)
        elapsed = time.perf_counter() - start
        if verbose:
            from ._dask_cv import _report_fold

            _report_fold(i, len(self.test), grid, test["score"], elapsed)
        return test, train_scores, elapsed, [(fit.support, fit.coef[fit.support], fit.b) for fit in fits]

    def rescore(self, i, levels, starts):
        """Full fits at ``levels`` on training fold ``i`` from the path's ``starts``: as ``_fold_rescore``."""
        template, loss, info = self.setups[i]
        before = loss.design.n_passes
        operator = template._validate_params()
        fits = _fits_from_starts(template, operator, loss, levels, starts)
        self.passes[i] += loss.design.n_passes - before
        return self.scores(template, fits, levels, info, i)


def _run_folds(calls, Xa):
    """The folds' ``calls`` in lockstep (or one after the other without ``_policy.LOCKSTEP``): results, passes."""
    if _policy.LOCKSTEP:
        results, scheduler = run_in_lockstep(calls, [Xa], Xa.name)
        return results, scheduler.n_passes
    runs = [run_in_lockstep([call], [Xa], Xa.name) for call in calls]
    return [run[0][0] for run in runs], sum(run[1].n_passes for run in runs)


def lockstep_cv_fit(search, X, Xa, y, sample_weight, params):
    """:meth:`SparsityCV.fit` on a dask ``X`` read at every step (or split by any ``cv``): the folds' passes shared."""
    import dask
    from sklearn.metrics import check_scoring

    from ._dask_cv import _fit_weights

    check_scoring_name(search)
    X, y = search._validate_input(X, y)
    routed = search._routed_fit_params(sample_weight, params, splitter=True,
                                       scorer=check_scoring(search.estimator, scoring=search.scoring))
    sample_weight = _fit_weights(routed)
    grid = _search_grid(search.estimator, X, search.k_grid)
    classifier = is_classifier(search.estimator)
    Xa, Y, y_ndim, sw = check_dask_fit_input(Xa, y, sample_weight, numeric_y=not classifier)
    start = time.perf_counter()
    # the targets, weights and groups in memory (n values, as the fits hold them): one computation, not a pass over X
    split_params = {key: value for key, value in routed.splitter.split.items() if value is not None}
    y_mem, sw_mem, split_params = dask.compute(Y if y_ndim == 2 and not classifier else Y[:, 0], sw,
                                                split_params)
    y_mem = np.asarray(y_mem)
    if sw_mem is not None:
        sw_mem = _check_sample_weight(np.asarray(sw_mem, dtype=float), y_mem)
    train, test = _fold_masks(search, Xa, y_mem, split_params)
    state = _LockstepFolds(search, X, Xa, Y, y_mem, sw_mem, sw, train, test)
    out, n_passes = _run_folds(
        [lambda i=i: _guarded(state.path, search.error_score, grid, i, search.verbose) for i in range(len(test))],
        Xa)

    def rescore(todo):
        nonlocal n_passes
        calls = [lambda i=i, o=o: _guarded(state.rescore, search.error_score, i, grid[todo], [o[3][j] for j in todo])
                 for i, o in enumerate(out) if o[0] is not None]
        results, passes = _run_folds(calls, Xa)
        n_passes += passes
        return results

    search._choose(grid, out, rescore)
    search._refit(X, y_mem, sw_mem)
    search.n_passes_ = n_passes + search.best_estimator_.n_passes_
    search._n_passes_alone = list(state.passes)  # (each fold fitted alone)
    if search.verbose:
        print(f"[SparsityCV] {search.n_passes_} passes over X: {n_passes} for the {len(test)} folds in lockstep "
              f"(one after the other: {sum(search._n_passes_alone)}), {search.best_estimator_.n_passes_} for the refit",
              flush=True)
        search._report(start)
