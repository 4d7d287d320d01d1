"""LowRankImputer: fill missing entries with a low-rank completion, and new rows by least squares."""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._missing import is_scalar_nan
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .._utils import all_or_nothing
from ..thresholding import get_operator
from ._completion import _BLAS_THREADS, _SOLVERS, _Observed, _power_of_two_scale, _solve
from ._rank_choice import RankValidation, _validate_rank_and_alpha, choose_rank

__all__ = ["LowRankImputer"]

#: the extrapolation weight of solver='accelerated' (Khanna & Kyrillidis' universal tau = 1/4)
_MOMENTUM = 0.25
#: rank='auto': share of the observed entries held out, refinement points, rises before the doubling stops
_AUTO_HOLDOUT = 0.1
_AUTO_REFINE = 6
_AUTO_PATIENCE = 2
#: rank='auto' tries every rank up to this one, then a geometric grid
_AUTO_DENSE = 10
#: rank='auto': the validation fits stop at this relative change at the latest (they only need to rank the ranks)
_AUTO_TOL = 1e-3


def _rank_grid(cap):
    """The ranks ``rank='auto'`` tries in turn: every rank up to 10, then ratios of about 1.25, up to ``cap``."""
    grid = list(range(1, min(cap, _AUTO_DENSE) + 1))
    while grid[-1] < cap:
        grid.append(min(cap, max(grid[-1] + 1, int(round(1.25 * grid[-1])))))
    return grid


class LowRankImputer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Impute missing values with a matrix of low rank fit by iterative thresholding.

    ``fit`` completes the training matrix under the constraint
    ``rank(X - 1 mean^T) <= rank`` with :func:`complete_matrix` (the squared
    error on the observed entries is minimised by IHT or accelerated IHT on
    the singular values, never forming more than factors and the observed
    entries), learning the column means and the row space
    ``components_``. ``transform`` fills the missing entries of *new* rows by
    least squares on their observed entries within that row space, so the
    imputer works on test folds (``Pipeline``, ``cross_val_score``).
    Observed entries are never changed.

    Parameters
    ----------
    rank : int or 'auto', default=10
        Rank of the centered completed matrix; above ``min(n_samples,
        n_features) - 1`` it is clipped, with a warning (0 imputes the column
        means). ``'auto'``: chosen by hold-out validation of the observed
        entries (:func:`choose_rank`, 10 % of them hidden once, with this
        imputer's options) over the grid ``1, 2, ..., 10, 12, 15, 19, 24,
        30, ...`` (every rank to 10, then ratios of about 1.25), stopped
        once two grid ranks above the best one validate worse than it, then
        refined on at most 6 ranks between the best one's grid neighbours;
        see Notes for the grid's bounds and cost.
    solver : {'accelerated', 'iht', 'regularized', 'als'}, default='accelerated'
        See :func:`complete_matrix` (``'regularized'``, Axiotis &
        Sviridenko's local search, is much slower and needs
        ``thresholding='hard'``; ``'als'``, a ridge ``alpha`` on the factors,
        shrinks the singular values like SoftImpute; with ``rank='auto'`` it
        chooses the rank and ``alpha`` together).
    thresholding : {'hard', 'soft', 'reciprocal', 'lq'} or ThresholdingOperator, default='hard'
        The operator applied to the singular values.
    step_size : 'auto' or float, default='auto'
        ``'auto'``: line search; a float is a fixed step (``1.0`` is safe).
    max_iter : int, default=300
        Maximum number of iterations of the completion.
    tol : float, default=1e-5
        Relative change of the completed matrix at which the completion stops.
    missing_values : float or np.nan, default=np.nan
        The placeholder of a missing entry.
    center : bool, default=True
        Fit a column offset (never thresholded) jointly with the low-rank
        part, so that the rank counts deviations from the column offsets.
    alpha : float >= 0, default=0.0
        The ridge on the factors of ``solver='als'`` (a nuclear-norm penalty
        in the data's units); must be 0 with the other solvers. Ignored with
        ``rank='auto'`` and ``solver='als'``, which choose it with the rank
        on held-out entries (see Notes).
    random_state : int, RandomState instance or None, default=0
        Seeds the randomized SVD of the completion (reproducible fits).
    verbose : int, default=0
        ``>= 1`` prints the completion's progress.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Column offsets, fitted jointly with the low-rank part (starting from
        the observed entries' column means; zeros if not ``center``; 0 for a
        column with no observed entry). The imputed matrix is
        ``mean_ + U diag(singular_values_) components_``.
    components_ : ndarray of shape (``rank_``, n_features)
        Orthonormal basis of the learned row space (right singular vectors
        of the completed, centered training matrix).
    singular_values_ : ndarray of shape (``rank_``,)
        The completed training matrix's singular values.
    rank_ : int
        The rank used (``rank`` after clipping, or the one chosen by ``'auto'``).
    alpha_ : float
        The ridge used (``alpha``, or the one chosen by ``rank='auto'`` with
        ``solver='als'``; 0 with the other solvers).
    rank_validation_ : RankValidation or None
        With ``rank='auto'``: the ranks tried, in the order tried, and their
        held-out RMSE (:class:`RankValidation`); None otherwise.
    n_iter_ : int
        Iterations of the completion (0 when ``rank_`` is 0 or the centered
        observed entries are all zero: the imputation is then the means).
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Half the squared error on the observed (centered) entries after each iteration.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during fit, when ``X`` has string column names.

    See Also
    --------
    complete_matrix : The completion core, on a scipy.sparse matrix of observed entries.
    sklearn.impute.IterativeImputer : Imputation by regressing each feature on the others.
    sklearn.impute.KNNImputer : Imputation from the nearest rows.

    Notes
    -----
    A training row with no observed entry is filled with the column means
    (its row of the factor ``U`` stays zero); a column with no observed entry
    gets mean 0. Both are reported with a warning. In ``transform``, a row
    with fewer observed entries than ``rank_`` gets the minimum-norm least
    squares solution (shrunk towards the means).

    ``rank='auto'`` validates a rank ``r`` only if ``r (m + n - r)``, the
    number of free parameters of an ``m x n`` matrix of rank ``r``, is at
    most half the entries it is fit on (a rank with more unknowns than
    observations cannot be identified), and below ``min(m, n) - 1``. The
    validation error of a rank-constrained fit falls while the rank adds
    signal and rises once it fits noise (hard thresholding has no
    shrinkage), hence the early stop. Its cost is one completion on 90 % of
    the entries per rank tried: ``r* + 2`` for a chosen rank ``r* <= 10``,
    about ``10 + 10 log10(r* / 10) + 2`` on the grid plus up to 6 for the
    refinement above, then the final fit (a fit's cost grows with its rank:
    ``O(nnz r)`` per iteration). Every rank up to 10 is tried because the
    validation curve of a rank-constrained fit is not unimodal near the
    true rank (on a rank-6 matrix, ranks 7 and 8 validated better than 5).
    When no rank passes these bounds, ``rank_`` is 0 (the column means),
    with a warning. The validation fits stop at a relative change of
    ``max(tol, 1e-3)``: they only need to order the ranks, and fits above
    the true rank (fitting noise) converge slowly; on noisy rank-5
    matrices and ``load_digits``, ``tol=1e-3`` chose the same ranks as
    ``1e-5``, 3 to 20 times faster.

    With ``solver='als'``, ``rank='auto'`` validates (rank, alpha) pairs
    instead (``_rank_choice._validate_rank_and_alpha``):
    the ridge path at the largest identifiable rank (at most 64), then
    smaller rank caps from the best fit's number of singular values above
    1 % of the largest down by ratios of 1.5, each fit warm-started; the final fit starts from
    the best validation fit with ``alpha`` times ``sqrt(n / n_fit)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.impute import LowRankImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 2)) @ rng.standard_normal((2, 8))
    >>> X_missing = X.copy()
    >>> X_missing[rng.uniform(size=X.shape) < 0.2] = np.nan
    >>> imputer = LowRankImputer(rank=2).fit(X_missing)
    >>> bool(np.abs(imputer.transform(X_missing) - X).max() < 1e-3)
    True
    """

    def __init__(self, rank=10, *, solver="accelerated", thresholding="hard", step_size="auto", max_iter=300,
                 tol=1e-5, missing_values=np.nan, center=True, alpha=0.0, random_state=0, verbose=0):
        self.rank = rank
        self.alpha = alpha
        self.solver = solver
        self.thresholding = thresholding
        self.step_size = step_size
        self.max_iter = max_iter
        self.tol = tol
        self.missing_values = missing_values
        self.center = center
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = is_scalar_nan(self.missing_values)
        return tags

    def set_output(self, *, transform=None):
        """Set the output container of ``transform`` and ``fit_transform``.

        Parameters
        ----------
        transform : {'default', 'pandas', 'polars'} or None, default=None
            ``'pandas'`` returns a DataFrame with the input's column names
            (and index); ``'default'`` a NumPy array; None leaves it unchanged.

        Returns
        -------
        self : LowRankImputer
            The imputer.
        """
        return super().set_output(transform=transform)

    # -- validation --------------------------------------------------------------------------------------
    def _validate_params(self):
        if not (isinstance(self.rank, str) and self.rank == "auto") and (
                isinstance(self.rank, (bool, str)) or not isinstance(self.rank, numbers.Integral) or self.rank < 1):
            raise ValueError(f"The 'rank' parameter must be a positive integer or 'auto', got {self.rank!r}.")
        if self.solver not in _SOLVERS:
            raise ValueError(f"The 'solver' parameter must be one of {_SOLVERS}, got {self.solver!r}.")
        get_operator(self.thresholding)
        if not (isinstance(self.step_size, str) and self.step_size == "auto"):
            if (isinstance(self.step_size, (str, bool)) or not isinstance(self.step_size, numbers.Real)
                    or not np.isfinite(self.step_size) or self.step_size <= 0):
                raise ValueError(f"The 'step_size' parameter must be 'auto' or a positive float, "
                                 f"got {self.step_size!r}.")
        for name in ("max_iter", "verbose"):
            value, low = getattr(self, name), 1 if name == "max_iter" else 0
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"The '{name}' parameter must be an integer >= {low}, got {value!r}.")
        if (isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) or not np.isfinite(self.tol)
                or self.tol < 0):
            raise ValueError(f"The 'tol' parameter must be a finite number >= 0, got {self.tol!r}.")
        mv = self.missing_values
        if not (is_scalar_nan(mv) or isinstance(mv, numbers.Real) and not isinstance(mv, bool) and np.isfinite(mv)):
            raise ValueError(f"The 'missing_values' parameter must be np.nan or a finite number, got {mv!r}.")
        if not isinstance(self.center, (bool, np.bool_)):
            raise ValueError(f"The 'center' parameter must be a bool, got {self.center!r}.")
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not np.isfinite(a) or a < 0:
            raise ValueError(f"The 'alpha' parameter must be a finite number >= 0, got {a!r}.")
        if a and self.solver != "als":
            raise ValueError(f"The 'alpha' parameter (the ridge on the factors) needs solver='als', got "
                             f"solver={self.solver!r}.")
        if self.solver == "als" and not get_operator(self.thresholding).is_hard:
            raise ValueError("solver='als' shrinks the singular values through its ridge 'alpha' (a soft threshold):"
                             f" it supports thresholding='hard' only, got thresholding={self.thresholding!r}.")

    def _validate_X(self, X, *, reset):
        nan = is_scalar_nan(self.missing_values)
        try:
            X = validate_data(self, X, reset=reset, dtype=np.float64, copy=True,
                              ensure_all_finite="allow-nan")
        except ValueError as exc:
            if "could not convert" in str(exc):
                raise ValueError(f"{type(self).__name__} needs numeric data (non-numeric entry or column): "
                                 f"{exc}") from exc
            raise
        if np.isinf(X).any():  # (validate_data reports infinity only together with NaN checks)
            raise ValueError("Input X contains infinity: LowRankImputer accepts finite values and missing values.")
        if nan:
            mask = np.isnan(X)
        else:
            if np.isnan(X).any():
                raise ValueError(f"Input X contains NaN but missing_values={self.missing_values!r}: set "
                                 "missing_values=np.nan if NaN marks the missing entries.")
            mask = X == self.missing_values
        return X, mask

    # -- fit -----------------------------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Complete the training matrix and learn the column means and the row space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data with missing entries marked by ``missing_values``.
        y : None
            Ignored.

        Returns
        -------
        self : LowRankImputer
            The fitted imputer.
        """
        with all_or_nothing(self):
            self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit, and return the completed training matrix (observed entries unchanged).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data with missing entries marked by ``missing_values``.
        y : None
            Ignored.

        Returns
        -------
        X_imputed : ndarray of shape (n_samples, n_features)
            ``X`` with its missing entries replaced by the low-rank completion.
        """
        with all_or_nothing(self):
            X, mask, U, s = self._fit(X)
        # (one dense product, the size of the output: gathering rows of the factors per missing entry
        # took rank + 1 times the output's memory when most entries are missing)
        full = (U * s) @ self.components_
        full += self.mean_
        np.copyto(X, full, where=mask)
        return X

    def _fit(self, X):
        self._validate_params()
        X, mask = self._validate_X(X, reset=True)
        m, n = X.shape
        if mask.all():
            raise ValueError(f"Every entry of X is missing (missing_values={self.missing_values!r}): "
                             "there is nothing to learn from.")
        if not mask.any() and not is_scalar_nan(self.missing_values):
            warnings.warn(f"missing_values={self.missing_values!r} does not occur in X: nothing to impute in "
                          "the training data.", UserWarning, stacklevel=3)
        observed = ~mask
        counts = observed.sum(axis=0)
        if (counts == 0).any():
            warnings.warn(f"{int((counts == 0).sum())} column(s) of X have no observed entry "
                          f"(e.g. column {int(np.flatnonzero(counts == 0)[0])}): they are imputed with 0.",
                          UserWarning, stacklevel=3)
        empty_rows = ~observed.any(axis=1)
        if empty_rows.any():
            warnings.warn(f"{int(empty_rows.sum())} row(s) of X have no observed entry: they are imputed with "
                          "the column means.", UserWarning, stacklevel=3)
        if self.center:
            sums = np.where(observed, X, 0.0).sum(axis=0)
            mean = np.divide(sums, counts, out=np.zeros(n), where=counts > 0)
        else:
            mean = np.zeros(n)
        top = min(m, n) - 1
        rows, cols = np.nonzero(observed)
        values = X[rows, cols]
        validation, alpha, init = None, float(self.alpha), None
        if isinstance(self.rank, str) and self.solver == "als":
            validation, init = self._auto_rank_and_alpha(rows, cols, values, (m, n))
            r = validation.best_rank if validation is not None else 0
            alpha = validation.best_alpha * self._alpha_growth(values.size) if validation is not None else 0.0
            if validation is None:
                warnings.warn(f"rank='auto': {values.size} observed entries of a {m} x {n} matrix are too few to "
                              "validate any rank; imputing the column means (rank_ = 0).", UserWarning, stacklevel=3)
        elif isinstance(self.rank, str):
            validation = self._auto_rank(rows, cols, values, (m, n))
            r = validation.best_rank if validation is not None else 0
            if validation is None:
                warnings.warn(f"rank='auto': {values.size} observed entries of a {m} x {n} matrix are too few to "
                              "validate any rank; imputing the column means (rank_ = 0).", UserWarning, stacklevel=3)
        else:
            r = int(self.rank)
            if r > top:
                warnings.warn(f"rank={r} is larger than min(n_samples, n_features) - 1 = {max(top, 0)}; "
                              f"using rank={max(top, 0)}.", UserWarning, stacklevel=3)
                r = max(top, 0)
        if r == 0 or not np.any(values - mean[cols]):
            # nothing low rank to learn: the imputation is the column means
            U, s, Vt = np.zeros((m, r)), np.zeros(r), np.zeros((r, n))
            n_iter, loss_curve = 0, np.zeros(0)
        else:
            # the offsets are fitted jointly with the low-rank part (complete_matrix's center=True)
            scale = _power_of_two_scale(values)
            result = _solve(_Observed(rows, cols, values * scale, (m, n)), r, get_operator(self.thresholding),
                            self.solver, not isinstance(self.step_size, numbers.Real), self.step_size, self.max_iter,
                            self.tol, _MOMENTUM, "randomized", 1, check_random_state(self.random_state),
                            self.verbose, scale, offsets=bool(self.center), alpha=alpha,
                            init=None if init is None else (init[0] * np.sqrt(scale), init[1] * np.sqrt(scale)))
            U, s, Vt = result.U, result.s, result.Vt
            mean = result.column_offsets
            n_iter, loss_curve = result.n_iter, result.loss_curve
        self.mean_ = mean
        self.components_ = Vt
        self.singular_values_ = s
        self.rank_ = r
        self.alpha_ = alpha if self.solver == "als" else 0.0
        self.rank_validation_ = validation
        self.n_iter_ = n_iter
        self.loss_curve_ = loss_curve
        return X, mask, U, s

    @staticmethod
    def _alpha_growth(n_observed):
        """The chosen ridge is validated on ``1 - holdout`` of the entries; the final fit sees them all.

        The noise's share of the spectrum grows as the square root of the
        entries (the spectral norm of a sparse noise matrix), so the ridge
        grows by ``sqrt(n / n_fit)``.
        """
        n_fit = n_observed - max(1, int(round(_AUTO_HOLDOUT * n_observed)))
        return float(np.sqrt(n_observed / max(n_fit, 1)))

    def _auto_rank_and_alpha(self, rows, cols, values, shape):
        """``rank='auto'`` with ``solver='als'``: the rank and the ridge chosen together on held-out entries."""
        m, n = shape
        n_fit = values.size - max(1, int(round(_AUTO_HOLDOUT * values.size)))
        top = min(m, n) - 2
        allowed = [r for r in range(1, max(top, 0) + 1) if r * (m + n - r) <= n_fit / 2]
        if not allowed or n_fit < 2:
            return None, None
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        with threadpool_limits(limits=_BLAS_THREADS, user_api="blas"):
            return _validate_rank_and_alpha(rows, cols, values, shape, allowed[-1], center=bool(self.center),
                                            max_iter=self.max_iter, tol=max(self.tol, _AUTO_TOL),
                                            holdout=_AUTO_HOLDOUT, seed=seed)

    def _auto_rank(self, rows, cols, values, shape):
        """Hold-out validation of the rank over a doubling grid, then a refinement (``rank='auto'``).

        Returns the :class:`RankValidation` of every rank tried (in the order
        tried), or None when no rank can be validated (too few entries or a
        matrix with fewer than 3 rows or columns: ``rank_`` is then 0, the
        column means).
        """
        m, n = shape
        n_fit = values.size - max(1, int(round(_AUTO_HOLDOUT * values.size)))
        top = min(m, n) - 2  # (below min(m, n) - 1: complete_matrix's own clip, with a warning)
        allowed = [r for r in range(1, max(top, 0) + 1) if r * (m + n - r) <= n_fit / 2]
        if not allowed or n_fit < 2:
            return None
        cap = allowed[-1]
        options = {"center": bool(self.center), "solver": self.solver, "thresholding": self.thresholding,
                   "step_size": self.step_size, "max_iter": self.max_iter, "tol": max(self.tol, _AUTO_TOL)}
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        tried = {}

        def error(r):
            if r not in tried:  # (one seed: every rank sees the same held-out entries)
                tried[r] = choose_rank((rows, cols, values), [r], shape=shape, holdout=_AUTO_HOLDOUT,
                                       random_state=seed, **options).mean_errors[0]
            return tried[r]

        grid = []
        for r in _rank_grid(cap):
            grid.append(r)
            error(r)
            best = min(grid, key=lambda q: (tried[q], q))
            if sum(tried[q] > tried[best] for q in grid[grid.index(best) + 1:]) >= _AUTO_PATIENCE:
                break
        best = min(grid, key=lambda q: (tried[q], q))
        i = grid.index(best)
        lo = grid[i - 1] if i > 0 else best
        hi = grid[i + 1] if i + 1 < len(grid) else best
        inner = [q for q in range(lo + 1, hi) if q != best]
        if len(inner) > _AUTO_REFINE:
            inner = sorted({int(round(q)) for q in np.linspace(lo + 1, hi - 1, _AUTO_REFINE)} - {best})
        for q in inner:
            error(q)
        ranks = np.asarray(list(tried), dtype=int)
        errors = np.asarray([tried[q] for q in ranks])
        best = int(ranks[np.lexsort((ranks, errors))[0]])
        return RankValidation(ranks=ranks, errors=errors[:, None], mean_errors=errors, best_rank=best)

    # -- transform -----------------------------------------------------------------------------------------
    def transform(self, X):
        """Fill the missing entries of ``X`` by least squares within the learned row space.

        For each row with observed entries ``O`` and missing entries ``M``,
        ``z = argmin ||x_O - mean_O - z C_O||`` with ``C = components_``
        (minimum norm when underdetermined), and ``x_M = mean_M + z C_M``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data with missing entries marked by ``missing_values``.

        Returns
        -------
        X_imputed : ndarray of shape (n_samples, n_features)
            ``X`` with its missing entries filled; observed entries unchanged.
        """
        check_is_fitted(self, "components_")
        X, mask = self._validate_X(X, reset=False)
        todo = np.flatnonzero(mask.any(axis=1))
        if todo.size == 0:
            return X
        empty = ~(~mask[todo]).any(axis=1)
        if empty.any():
            warnings.warn(f"{int(empty.sum())} row(s) of X have no observed entry: they are imputed with the "
                          "column means.", UserWarning, stacklevel=2)
        C, mean = self.components_, self.mean_
        # rows that share a missingness pattern share one least-squares matrix
        patterns, inverse = np.unique(mask[todo], axis=0, return_inverse=True)
        inverse = inverse.ravel()
        for p, miss in enumerate(patterns):
            idx = todo[inverse == p]
            obs = ~miss
            fill = np.broadcast_to(mean[miss], (idx.size, int(miss.sum()))).copy()
            if obs.any() and C.shape[0]:
                target = X[np.ix_(idx, obs)] - mean[obs]
                Z = np.linalg.lstsq(C[:, obs].T, target.T, rcond=None)[0]  # (rank, rows)
                fill += Z.T @ C[:, miss]
            X[np.ix_(idx, miss)] = fill
        return X
