"""``LowRankImputer(rank='auto')``: the rank (and the ridge of ``solver='als'``) chosen on held-out entries.

Rank 0, the column means (what ``SimpleImputer`` fills with; zeros without centering), is a candidate
like any other: it is validated on the same held-out entries as the ranks,
and wins ties. When the observed entries are too few to validate any rank
(see :func:`identifiable_ranks`), the choice is rank 0: the safe one.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .. import _policy
from ._als import _solve_als
from ._completion import _limit_blas_threads, _Observed, complete_matrix
from ._imputer_input import _warn
from ._rank_choice import (
    RankValidation,
    _beats_column_means,
    _column_means_residuals,
    _validate_rank_and_alpha,
    holdout_folds,
    holdout_split,
)

__all__ = ["auto_rank", "auto_rank_and_alpha", "alpha_growth", "choose_rank", "identifiable_ranks", "rank_grid"]


def rank_grid(cap):
    """The ranks tried in turn: every rank up to 10, then ratios of about 1.25, up to ``cap``."""
    grid = list(range(1, min(cap, _policy.AUTO_DENSE) + 1))
    while grid[-1] < cap:
        grid.append(min(cap, max(grid[-1] + 1, int(round(1.25 * grid[-1])))))
    return grid


def _n_out(n_observed):
    return max(1, int(round(_policy.AUTO_HOLDOUT * n_observed)))


def validation_splits(rows, cols, values, shape, seed):
    """The held-out splits ``[(out, keep), ...]`` of ``rank='auto'``: one, or folds on a small table.

    From ``_policy.AUTO_FOLDS_BELOW`` observed entries up, one split of a share ``_policy.AUTO_HOLDOUT``
    (:func:`holdout_split`); below, ``_policy.AUTO_FOLDS`` disjoint folds covering every observed entry
    (:func:`holdout_folds`), whose errors are pooled: a handful of held-out entries decides nothing, and each
    fold's fit still sees the same share of the entries. Both are defined by the entries' content.
    """
    if values.size < _policy.AUTO_FOLDS_BELOW:
        return holdout_folds(rows, cols, values, shape, _policy.AUTO_FOLDS, seed)
    return [holdout_split(rows, cols, values, shape, _n_out(values.size), seed)]


def identifiable_ranks(n_observed, shape, *, share=None, offsets=0):
    """The ranks ``r >= 1`` a hold-out can validate.

    ``r (m + n - r)``, the free parameters of an ``m x n`` matrix of rank
    ``r`` (plus ``offsets``, the fitted column offsets), at most a share
    ``share`` of the entries fit on (``_policy.AUTO_PARAMETER_SHARE``, all of
    them, when None), and ``r <= min(m, n) - 2``.
    """
    m, n = shape
    share = _policy.AUTO_PARAMETER_SHARE if share is None else share
    n_fit = n_observed - _n_out(n_observed)
    top = min(m, n) - 2  # (below min(m, n) - 1: complete_matrix's own clip, with a warning)
    if n_fit < 2:
        return []
    return [r for r in range(1, max(top, 0) + 1) if r * (m + n - r) + offsets <= share * n_fit]


def alpha_growth(n_observed):
    """The chosen ridge is validated on ``1 - holdout`` of the entries; the final fit sees them all.

    The noise's share of the spectrum grows as the square root of the
    entries (the spectral norm of a sparse noise matrix), so the ridge
    grows by ``sqrt(n / n_fit)``.
    """
    n_fit = n_observed - _n_out(n_observed)
    return float(np.sqrt(n_observed / max(n_fit, 1)))


def auto_rank(rows, cols, values, shape, *, seed, center, **options):
    """Hold-out validation of the rank over rank 0, the grid of :func:`rank_grid`, then a refinement.

    A share ``_policy.AUTO_HOLDOUT`` of the observed entries is hidden once (the same
    entries for every rank; ``holdout_split`` of ``_rank_choice.py``, which does not
    depend on the order of the rows and columns), or on a small table each of
    ``_policy.AUTO_FOLDS`` folds in turn, their errors pooled (:func:`validation_splits`);
    each rank is completed from the rest with :func:`complete_matrix` (``options``; convergence
    warnings of these fits are not shown: they stop at ``max(tol, 1e-3)``).
    The grid stops once two ranks above the best one ``>= 1`` validate worse than it, but not among the ranks up
    to ``_policy.AUTO_DENSE`` before one beats rank 0 by one standard error: on a wide table of few rows (10 x 500)
    the columns' few entries make the ranks below the true one validate worse than the column means, and worse
    the closer they come to it, so that the stop ended the grid below the true rank.
    The ranks validated are those whose free parameters, the column offsets included, are at most the entries fit
    on (:func:`identifiable_ranks`), as with ``solver='als'``: with half of them, 10 x 500 tables of rank 4 and 5
    (20 % hidden) could not be validated.
    The best rank is chosen over rank 0 only if it beats it by more than one
    standard error (:func:`_beats_column_means`). Returns the :class:`RankValidation` of every rank tried (in the order
    tried, rank 0 first), or None when no rank ``>= 1`` can be validated.
    """
    m, n = shape
    allowed = identifiable_ranks(values.size, shape, offsets=n if center else 0)
    if not allowed:
        return None
    splits = validation_splits(rows, cols, values, shape, seed)
    fit_seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
    out = np.concatenate([o for o, _ in splits])  # (the held-out entries of all folds, pooled)
    residuals = {0: _column_means_residuals(rows, cols, values, splits, n, center)}
    tried = {0: float(np.sqrt(np.mean(residuals[0] ** 2)))}

    def error(r):
        if r not in tried:
            parts = []
            for o, k in splits:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    result = complete_matrix((rows[k], cols[k], values[k]), r, shape=shape, random_state=fit_seed,
                                             center=center, **options)
                parts.append(result.predict(rows[o], cols[o]))
            residuals[r] = np.concatenate(parts) - values[out]
            tried[r] = float(np.sqrt(np.mean(residuals[r] ** 2)))
        return tried[r]

    grid = [0]
    for r in rank_grid(allowed[-1]):
        grid.append(r)
        error(r)
        # (the stop watches the ranks >= 1 only, and waits, among the dense ranks, for one that beats the column
        # means: on a table of few rows the ranks below the true one can validate worse than the column means)
        best = min(grid[1:], key=lambda q: (tried[q], q))
        if r < _policy.AUTO_DENSE and not _beats_column_means(residuals[0], residuals[best]):
            continue
        if sum(tried[q] > tried[best] for q in grid[grid.index(best) + 1:]) >= _policy.AUTO_PATIENCE:
            break
    best = min(grid, key=lambda q: (tried[q], q))
    i = grid.index(best)
    lo = grid[i - 1] if i > 0 else best
    hi = grid[i + 1] if i + 1 < len(grid) else best
    inner = [q for q in range(lo + 1, hi) if q != best]
    if len(inner) > _policy.AUTO_REFINE:
        inner = sorted({int(round(q)) for q in np.linspace(lo + 1, hi - 1, _policy.AUTO_REFINE)} - {best})
    for q in inner:
        error(q)
    ranks = np.asarray(list(tried), dtype=int)
    errors = np.asarray([tried[q] for q in ranks])
    best = int(ranks[np.lexsort((ranks, errors))[0]])
    if best and not _beats_column_means(residuals[0], residuals[best]):
        best = 0
    return RankValidation(ranks=ranks, errors=errors[:, None], mean_errors=errors, best_rank=best)


def auto_rank_and_alpha(rows, cols, values, shape, *, seed, center, max_iter, tol):
    """``solver='als'``: the rank and the ridge chosen together on held-out entries (``_validate_rank_and_alpha``).

    Rank 0 (the column means) is a candidate with the same one-standard-error rule as in :func:`auto_rank`.
    Returns ``(validation, init)`` (``init`` None for rank 0), or ``(None, None)`` when no rank ``>= 1`` can be
    validated. The ranks validated are those whose free parameters, the offsets included, are at most the entries
    fit on (``_policy.ALS_PARAMETER_SHARE``): the ridge, chosen on the held-out entries, keeps a rank that
    would over-fit in check; with half of them, a 1000 x 6 table of rank 2 with 30 % of its entries missing was fit
    at rank 1.
    """
    allowed = identifiable_ranks(values.size, shape, share=_policy.ALS_PARAMETER_SHARE,
                                 offsets=shape[1] if center else 0)
    if not allowed:
        return None, None
    with _limit_blas_threads():
        return _validate_rank_and_alpha(rows, cols, values, shape, allowed[-1], center=center, max_iter=max_iter,
                                        tol=max(tol, _policy.AUTO_TOL),
                                        splits=validation_splits(rows, cols, values, shape, seed), seed=seed)


def choose_rank(imputer, rows, cols, values, shape, *, all_observed_features):
    """The rank and ridge ``LowRankImputer`` fits with: ``(rank, alpha, rank_validation_, init)``.

    ``rank='auto'``: validated on held-out entries (with the ridge, ``solver='als'``; ``init`` its best fit's
    factors, else None); too few observed entries to validate any rank give rank 0, the column means, the safe
    choice. A given rank above ``min(shape) - 1`` is lowered, with a warning. ``shape``: the fitted columns
    only (those with an observed entry; ``all_observed_features``: every feature has one).
    """
    m, n_valid = shape
    top = min(m, n_valid) - 1
    validation, alpha, init = None, float(imputer.alpha), None
    if isinstance(imputer.rank, str):
        seed = check_random_state(imputer.random_state).randint(np.iinfo(np.int32).max)
    if isinstance(imputer.rank, str) and imputer.solver == "als":
        validation, init = auto_rank_and_alpha(rows, cols, values, shape, seed=seed, center=bool(imputer.center),
                                               max_iter=imputer.max_iter, tol=imputer.tol)
        r = validation.best_rank if validation is not None else 0
        alpha = validation.best_alpha * alpha_growth(values.size) if validation is not None else 0.0
    elif isinstance(imputer.rank, str):
        validation = auto_rank(rows, cols, values, shape, seed=seed, center=bool(imputer.center),
                               solver=imputer.solver, thresholding=imputer.thresholding, step_size=imputer.step_size,
                               max_iter=imputer.max_iter, tol=max(imputer.tol, _policy.AUTO_TOL))
        r = validation.best_rank if validation is not None else 0
    else:
        r = int(imputer.rank)
        if r > top:
            # (the features with an observed entry: the empty ones are not fitted, n_features alone misled)
            features = "n_features" if all_observed_features else "the features with an observed entry"
            _warn(f"rank={r} is larger than min(n_samples, {features}) - 1 = {max(top, 0)}; "
                  f"using rank={max(top, 0)}.")
            r = max(top, 0)
    return r, alpha, validation, init


def _keep_every_line(rows, cols, shape, out, keep):
    """``(out, keep)`` with held-out entries returned to ``keep`` where a row or column would keep none."""
    m, n = shape
    row_kept = np.bincount(rows[keep], minlength=m) > 0
    col_kept = np.bincount(cols[keep], minlength=n) > 0
    back = ~row_kept[rows[out]] | ~col_kept[cols[out]]
    if not back.any():
        return out, keep
    return out[~back], np.sort(np.concatenate([keep, out[back]]))


def sweeps_help(imputer, rows, cols, values, shape, r, spread):
    """Whether a given rank's final fit ends with its exact sweeps (``finish='noise'``): a held-out check.

    The sweeps' noise ridge comes from the fit's residuals; where the observed entries barely exceed the
    rank's unknowns the exact fit interpolates them, the residuals and the ridge are tiny and the hidden entries
    amplify the loadings (``load_breast_cancer``, 20 % hidden, rank 16: 1.09 column deviations, the column
    means 1.06, softImpute-ALS alone 0.59), while elsewhere they finish what the ALS iteration leaves undone
    (an exact 10 x 500 rank-2 table: 0.064 to 0.001). On the held-out splits of ``rank='auto'``
    (:func:`validation_splits`, every row and column keeping an entry) the ALS iterate and the same iterate
    swept are fit on the rest (``imputer``'s options, ``values`` as fit, ``spread`` :func:`_als._tolerance`'s;
    the sweeps stopped at ``_policy.ALS_FINISH_SWEEPS``, as the rank search's validation fits); the sweeps are
    kept unless they err more on the held-out entries.
    """
    center, max_iter, tol = bool(imputer.center), imputer.max_iter, imputer.tol
    seed = check_random_state(imputer.random_state).randint(np.iinfo(np.int32).max)
    errors = np.zeros(2)
    with _limit_blas_threads():
        for out, keep in validation_splits(rows, cols, values, shape, seed):
            out, keep = _keep_every_line(rows, cols, shape, out, keep)
            if out.size == 0:
                continue
            obs = _Observed(rows[keep], cols[keep], values[keep], shape)
            # (warn=False: the sweeps stop at _policy.ALS_FINISH_SWEEPS, as the rank search's validation fits)
            iterate, init = _solve_als(obs, r, 0.0, max_iter, tol, np.random.RandomState(seed), False, 1.0,
                                       center, finish=False, spread=spread, mean_start=not center, warn=False)
            swept = _solve_als(obs, r, 0.0, max_iter, tol, np.random.RandomState(seed), False, 1.0, center,
                               init=init, finish="noise", spread=spread, warn=False)[0]
            for i, fit in enumerate((iterate, swept)):
                errors[i] += float(np.sum((fit.predict(rows[out], cols[out]) - values[out]) ** 2))
    return not errors[1] > errors[0]
