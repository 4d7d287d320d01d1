"""Choosing the rank of a completion by hiding a share of the observed entries."""

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .. import _policy
from .._utils import power_of_two_scale
from ._completion import _check_observed, complete_matrix
from ._imputer_input import centered_size

__all__ = ["RankValidation", "choose_rank"]


@dataclass
class RankValidation:
    """The outcome of :func:`choose_rank`.

    Attributes
    ----------
    ranks : ndarray of shape (n_ranks,)
        The ranks tried, in the order given.
    errors : ndarray of shape (n_ranks, n_repeats)
        Root mean squared error on the held-out entries, per rank and repeat.
    mean_errors : ndarray of shape (n_ranks,)
        ``errors`` averaged over the repeats.
    best_rank : int
        The rank of lowest mean error (the smallest one on ties).
    alphas : ndarray of shape (n_ranks,) or None
        With ``solver='als'`` under ``LowRankImputer(rank='auto')``: the ridge
        of each fit (``ranks[i]`` and ``alphas[i]`` go together; 0 for rank
        0, the column means, and for the last fit without a ridge, which
        ``plot``'s logarithmic axis does not show); None otherwise.
    best_alpha : float
        The ridge of the best fit (0 without ``alphas``).
    """

    ranks: np.ndarray
    errors: np.ndarray
    mean_errors: np.ndarray
    best_rank: int
    alphas: np.ndarray = None
    best_alpha: float = 0.0

    def plot(self, ax=None):
        """Plot the held-out error against the rank (needs matplotlib).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.subplots()[1]
        if self.alphas is not None:  # one curve of the held-out error against the ridge per rank
            for r in np.unique(self.ranks):
                sel = self.ranks == r
                if r == 0:  # (the column means have no ridge)
                    ax.axhline(self.mean_errors[sel][0], color="k", ls=":", label="rank 0 (column means)")
                    continue
                ax.semilogx(self.alphas[sel], self.mean_errors[sel], "o-", label=f"rank {r}")
            ax.axvline(self.best_alpha, color="0.5", ls="--",
                       label=f"best: rank {self.best_rank}, alpha = {self.best_alpha:.3g}")
            ax.set_xlabel("alpha (ridge on the factors)")
            ax.set_ylabel("RMSE on held-out entries")
            ax.legend()
            return ax
        order = np.argsort(self.ranks)
        ax.plot(self.ranks[order], self.mean_errors[order], "o-", label="held-out RMSE")
        ax.axvline(self.best_rank, color="0.5", ls="--", label=f"best rank = {self.best_rank}")
        ax.set_xlabel("rank")
        ax.set_ylabel("RMSE on held-out entries")
        ax.legend()
        return ax


def choose_rank(observed, ranks, *, shape=None, holdout=0.1, n_repeats=1, random_state=0, **options):
    """Validation error of each rank, by completing without a random share of the observed entries.

    The standard for completion (there is no sample to hold out, only
    entries): for each repeat, a share ``holdout`` of the observed entries is
    hidden, the rest completed at each rank with :func:`complete_matrix`, and
    the root mean squared error on the hidden entries recorded. The chosen
    rank is then used to complete with all the observed entries. The hidden
    entries are named by their content (``holdout_split``), not their
    position: the rows and columns in another order hide the same entries.

    Parameters
    ----------
    observed : scipy.sparse matrix or tuple (rows, cols, values)
        The observed entries, as for :func:`complete_matrix`.
    ranks : iterable of int
        The ranks to try (each ``<= min(m, n) - 1``).
    shape : tuple of two ints, default=None
        Required with a tuple ``observed``.
    holdout : float in (0, 1), default=0.1
        Share of the observed entries hidden in each repeat.
    n_repeats : int, default=1
        Independent random hold-outs, averaged.
    random_state : int, RandomState instance or None, default=0
        Draws one seed per repeat, which draws the held-out entries and
        seeds the completions.
    **options
        Passed to :func:`complete_matrix` (``solver``, ``center``,
        ``max_iter``, ...). Convergence warnings of the validation fits are
        silenced.

    Returns
    -------
    RankValidation
        ``ranks``, ``errors``, ``mean_errors``, ``best_rank`` and a ``plot`` method.

    Raises
    ------
    ValueError
        If ``ranks`` is empty or has a rank outside ``[1, min(m, n) - 1]``,
        or ``holdout`` is not in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from sparse_estimators.impute import choose_rank
    >>> rng = np.random.default_rng(0)
    >>> M = rng.standard_normal((80, 3)) @ rng.standard_normal((3, 60))
    >>> rows, cols = np.nonzero(rng.uniform(size=M.shape) < 0.5)
    >>> choose_rank((rows, cols, M[rows, cols]), [1, 2, 3, 4, 6], shape=M.shape).best_rank
    3
    """
    S, shape = _check_observed(observed, shape)
    rows, cols, values = np.repeat(np.arange(shape[0]), np.diff(S.indptr)), S.indices, S.data  # (row-major order)
    ranks = np.asarray(list(ranks))
    top = min(shape) - 1
    if ranks.size == 0 or ranks.ndim != 1 or ranks.dtype.kind not in "iu" or ranks.min() < 1 or ranks.max() > top:
        raise ValueError(f"The 'ranks' parameter must be a non-empty list of integers in [1, {top}] "
                         f"(min(m, n) - 1), got {ranks.tolist()!r}.")
    if isinstance(holdout, bool) or not isinstance(holdout, numbers.Real) or not 0 < holdout < 1:
        raise ValueError(f"The 'holdout' parameter must be a number in (0, 1), got {holdout!r}.")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"The 'n_repeats' parameter must be a positive integer, got {n_repeats!r}.")
    rng = check_random_state(random_state)
    n_out = max(1, int(round(holdout * values.size)))
    if n_out >= values.size:
        raise ValueError(f"holdout={holdout} leaves no observed entry to complete from ({values.size} observed).")
    errors = np.empty((ranks.size, n_repeats))
    for rep in range(n_repeats):
        seed = int(rng.randint(np.iinfo(np.int32).max))
        out, keep = holdout_split(rows, cols, values, shape, n_out, seed)  # (named by content: order-invariant)
        for i, r in enumerate(ranks):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                result = complete_matrix((rows[keep], cols[keep], values[keep]), int(r), shape=shape,
                                         random_state=seed, **options)
            diff = result.predict(rows[out], cols[out]) - values[out]
            errors[i, rep] = np.sqrt(np.mean(diff**2))
    mean_errors = errors.mean(axis=1)
    best = int(ranks[np.lexsort((ranks, mean_errors))[0]])
    return RankValidation(ranks=ranks, errors=errors, mean_errors=mean_errors, best_rank=best)


def _mix(x):
    """SplitMix64's finaliser, elementwise on uint64 (wrapping arithmetic): a well-spread hash of each value."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _sums(groups, keys, size):
    """Sum of ``keys`` per group, modulo 2**64: exact, so it does not depend on the order of the entries."""
    total = np.zeros(size, dtype=np.uint64)
    np.add.at(total, groups, keys)
    return total


def _content_keys(rows, cols, values, shape, seed):
    """A hash key per observed entry of ``(seed, row, column)``, rows and columns named by their content.

    Each entry's rank among its column's observed values gives a row the multiset of its ranks, a column the
    multiset of (rank, row name), and a row again the multiset of (rank, column name): the keys are thus the same
    for the rows and columns in another order, and for columns under increasing maps (units, offsets), up to ties
    that rounding creates or breaks; identical rows (columns) get the same names.
    """
    m, n = shape
    order = np.argsort(values)  # (equal values get one rank: their order does not matter)
    by_col = cols[order].astype(np.uint16 if n <= 1 << 16 else np.intp)  # (16 bits: NumPy's radix sort)
    order = order[np.argsort(by_col, kind="stable")]  # (by column, then value)
    c, v = cols[order], values[order]
    new = np.ones(v.size, dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (v[1:] != v[:-1])
    group = np.cumsum(new)  # (one id per distinct value of a column)
    rank = np.empty(v.size, dtype=np.uint64)
    rank[order] = (group - group[np.searchsorted(c, c)]).astype(np.uint64)
    with np.errstate(over="ignore"):
        a = _mix(rank + np.uint64(seed))
        row_name = _mix(_sums(rows, a, m))
        col_name = _mix(_sums(cols, _mix(a ^ row_name[rows]), n))
        row_name = _mix(_sums(rows, _mix(a ^ col_name[cols]), m))
        return _mix(_mix(row_name[rows] + np.uint64(seed)) ^ col_name[cols])


def holdout_split(rows, cols, values, shape, n_out, seed):
    """Indices ``(out, keep)`` (sorted) of ``n_out`` held-out observed entries and of the others.

    The entries with the ``n_out`` smallest keys of :func:`_content_keys` are held out: a row and a column are
    named by their content, not their position, so the split is the same for the rows and columns in another
    order, and for columns under increasing maps (units, offsets), up to ties that rounding creates or breaks;
    identical rows (columns) share their held-out columns (rows). ``seed`` draws the hash as ``random_state``
    drew a permutation.
    """
    key = _content_keys(rows, cols, values, shape, seed)
    # the n_out smallest keys (equal keys, of identical rows and columns, by position: a stable sort's first n_out)
    last = np.partition(key, n_out - 1)[n_out - 1]
    held = key < last
    held[np.flatnonzero(key == last)[:n_out - int(held.sum())]] = True
    return np.flatnonzero(held), np.flatnonzero(~held)


def holdout_folds(rows, cols, values, shape, n_folds, seed):
    """``n_folds`` disjoint splits ``(out, keep)`` (sorted indices) whose held-out parts cover the observed entries.

    The entries in the order of their :func:`_content_keys` (equal keys by position), cut into ``n_folds``
    consecutive blocks of sizes differing by at most one: the folds do not depend on the order of the rows and
    columns, as :func:`holdout_split`.
    """
    key = _content_keys(rows, cols, values, shape, seed)
    fold = np.empty(key.size, dtype=np.intp)
    fold[np.argsort(key, kind="stable")] = np.arange(key.size) * n_folds // key.size
    return [(np.flatnonzero(fold == k), np.flatnonzero(fold != k)) for k in range(n_folds)]


def _column_means_residuals(rows, cols, values, splits, n, center):
    """Residuals of rank 0 on the held-out entries of each split ``(out, keep)`` of ``splits``, pooled in order.

    Rank 0 predicts each column's mean over the split's kept entries (0 without ``center``).
    """
    parts = []
    for out, keep in splits:
        if center:
            counts = np.bincount(cols[keep], minlength=n)
            sums = np.bincount(cols[keep], weights=values[keep], minlength=n)
            means = np.divide(sums, counts, out=np.zeros(n), where=counts > 0)
        else:
            means = np.zeros(n)
        parts.append(means[cols[out]] - values[out])
    return np.concatenate(parts)


def _beats_column_means(res_0, res_best):
    """Whether the best rank's held-out squared errors are below rank 0's by more than one standard error.

    The one-standard-error rule (Hastie, Tibshirani & Friedman, *The Elements
    of Statistical Learning*, 2nd ed., §7.10), on the paired differences of
    the squared errors of the same held-out entries: the column means are
    kept unless the evidence against them is clear (on a 16 x 3 table, 4
    held-out entries decide nothing).
    """
    diff = res_0**2 - res_best**2
    if diff.size < 2:
        return False
    return float(diff.mean()) > float(diff.std(ddof=1)) / np.sqrt(diff.size)


def _within_one_error(res, res_best):
    """Whether held-out squared errors are above the best fit's by at most one standard error (paired entries).

    The one-standard-error rule (Hastie, Tibshirani & Friedman, §7.10) of :func:`_beats_column_means`, for a
    rank below the best one.
    """
    return res.size >= 2 and not _beats_column_means(res, res_best)


def _ratio_rank(s):
    """The eigenvalue-ratio estimate of a rank from singular values ``s`` (decreasing): ``argmax s_k / s_{k+1}``.

    Over those above ``_policy.ALS_RANK_CUTOFF`` of the largest (Ahn & Horenstein, "Eigenvalue ratio test for
    the number of factors", *Econometrica* 81, 2013, on ``s**2``: the same argmax). 1 with fewer than two.
    """
    s = s[s > _policy.ALS_RANK_CUTOFF * (s[0] if s.size else 0.0)]  # (the ridge's zeros are not exact ones)
    if s.size < 2:
        return 1
    return int(np.argmax(s[:-1] / s[1:])) + 1


def _validate_rank_and_alpha(rows, cols, values, shape, cap, *, center, max_iter, tol, splits, seed):
    """Hold-out choice of the rank and the ridge of ``solver='als'`` (``LowRankImputer(rank='auto', solver='als')``).

    The observed entries ``out`` of each split ``(out, keep)`` of ``splits``
    are hidden (one split, or on a small table several folds: each (rank,
    alpha) is then fit on every fold and its held-out errors pooled; the
    folds share the ridges, in units of their mean largest singular value,
    and their fits are not stopped early by the monitor). First the
    largest rank ``min(cap, 64)``: the ridge ``alpha`` runs down the path
    ``_policy.ALS_ALPHAS`` (times the largest singular value of the zero-filled
    observations' deviations from their column means, without offsets too: the
    offsets' singular value made every ridge far larger than the deviations;
    without offsets the fits also stop relative to the deviations,
    :func:`_als._tolerance`'s ``spread``), each fit warm-started from the previous one, until
    a fit does not lower the held-out error (this is SoftImpute's choice of
    lambda, a nuclear norm with a rank cap). Then smaller rank caps, from the
    number ``k`` of singular values of the best fit above 1 % of the largest
    down by ratios of 1.5 (one at a time from 10 down), each with the ridge
    path from the best ridge so far downwards, not below the first path's
    smallest ridge (a rank cap does part of the shrinkage's work: the tail is
    cut instead of shrunk, so the head needs less), warm-started from the
    best fit's top singular triplets; they stop at the first rank
    that does not improve on the best error by ``_policy.ALS_GAIN`` (one
    within that share of it replaces it: a tie goes to the smaller cap). Last, the best ridge times
    ``2^(1/2)`` and ``2^(-1/2)`` at the best rank (the halving grid is coarse:
    on a photograph the hidden-entry error moves by about 1 % per factor
    ``2^(1/2)``), and, when the best ridge is at most the first path's
    smallest (every halving gained: exact data), no ridge at the best rank.
    Rank 0 (the column means, ``alpha = 0``) is a candidate as
    in ``auto_rank`` (``_imputer_rank.py``): the best fit is chosen over it
    only if it beats it by more than one standard error
    (:func:`_beats_column_means`). Returns the :class:`RankValidation` of
    every (rank, alpha) tried (rank 0 first; ``alphas`` in the data's units)
    and the factors of the chosen fit (of the first fold), to warm-start the
    final fit (None for rank 0).
    """
    from ._als import _solve_als  # (the ALS module imports the completion's helpers)
    from ._factored import CompletionResult, _column_sums, _Observed, _randomized_svd

    m, n = shape
    rng = check_random_state(seed)
    scale = power_of_two_scale(values)
    folds = []  # (per split: the fitted entries, the held-out ones as a pattern, the largest singular value)
    spreads = []  # (without offsets, per split: the stopping rules' reference, _als._tolerance's ``spread``)
    for out, keep in splits:
        obs = _Observed(rows[keep], cols[keep], values[keep] * scale, shape)
        counts = _column_sums(obs.cols, n)
        # (the ridges' scale from the deviations from the column means, with offsets or not: without them the
        # product's top component is the offsets, whose singular value made every ridge far larger than the
        # deviations)
        mu = _column_sums(obs.cols, n, obs.values) / np.maximum(counts, 1)
        S = obs.set_data(obs.values - mu[obs.cols])
        empty = (np.zeros((m, 0)), np.zeros(0), np.zeros((0, n)))
        top = float(_randomized_svd(*empty, S, 1.0, min(6, m, n), None, 2, rng)[1][0])
        # (the held-out entries as a pattern: errors during a fit)
        folds.append((obs, _Observed(rows[out], cols[out], values[out] * scale, shape), top))
        if not center:  # (as the final fit's)
            spreads.append(centered_size(obs.values, obs.cols, counts, m, means=mu))
    top = sum(f[2] for f in folds) / len(folds)
    watch = len(folds) == 1  # (the monitor compares one fold's error with the pooled ones: one split only)
    ranks, alphas, errors, fits = [], [], [], []

    def residuals(results):
        """The fits' residuals on the held-out entries of their folds, pooled (in the scaled units)."""
        parts = []
        for (_, held, _), result in zip(folds, results, strict=True):
            fit = held.entries(result.U, result.s, result.Vt)
            fit += result.column_offsets[held.cols] - held.values
            parts.append(fit)
        return np.concatenate(parts)

    def held_out_error(results):
        """Root mean squared error of the fits (one per fold) on the held-out entries, in the data's units."""
        return float(np.sqrt(np.mean(residuals(results) ** 2))) / scale

    def hopeless(bar, start):
        """A fit's monitor: True once its held-out error stayed above ``bar`` and rose (from ``start``, at sweep 0).

        Given only to fits whose outcome is decided by whether they beat
        ``bar``: the later fits of a ridge path (it ends at the first fit
        without a gain; the factors of such a fit are not used), the
        refinements, and the first fit at a smaller rank cap (the rank loop
        keeps a cap only if its path beats the best error; a stopped first fit
        hands its factors to the path's next ridge, itself watched against
        it). A fit moving away from the held-out optimum is then stopped
        instead of converged, and its error recorded where it stopped. Only a
        fit above ``bar`` after its first sweep is watched (the error costs a
        product per sweep).
        """
        history = [start]

        def check(U, V, mu):
            if history[-1] <= bar and len(history) > 1:
                return False  # (no longer watched)
            history.append(held_out_error([CompletionResult(U, np.ones(U.shape[1]), V.T, 0, None, False,
                                                            column_offsets=mu)]))
            k = _policy.ALS_HOPELESS_SWEEPS
            return len(history) > k and min(history[-k:]) > bar and history[-1] >= history[-1 - k]

        return check

    def path(r, levels, inits, bar=None, start=None, finish=False, mix=False):
        """The ridge path at rank ``r``; the best (error, index) of it.

        ``inits``: a warm start per fold (or None). ``bar``, ``start``: the error the path's first fit must beat
        to matter (None: it always matters) and the held-out error of ``inits``. ``finish``: the fits end with
        exact least-squares sweeps, as the final fit without a ridge does (``_als._exact_sweeps``); ``mix``: those
        sweeps with Anderson's mixing (the same limit, in a third to a half of the sweeps).
        """
        best = (np.inf, -1)
        rises = 0
        for i, level in enumerate(levels):
            must_beat = best[0] if i else bar
            watched = watch and must_beat is not None and inits is not None
            results, next_inits = [], []
            for j, ((obs, _, _), init) in enumerate(zip(folds, inits or [None] * len(folds), strict=True)):
                monitor = hopeless(must_beat, start) if watched else None
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    result, init = _solve_als(obs, r, level, max_iter, tol, rng, 0, 1.0, center, init=init,
                                              warn=False, monitor=monitor, finish=finish, mean_start=not center,
                                              mix=mix, spread=spreads[j] if spreads else None)
                if not result.s.size or result.s[0] <= 1e-12 * top:
                    init = None  # (zero factors are a stationary point of ALS: the next fit starts afresh)
                results.append(result)
                next_inits.append(init)
            inits = next_inits if any(x is not None for x in next_inits) else None
            err = held_out_error(results)
            start = err
            ranks.append(r)
            alphas.append(level)
            errors.append(err)
            fits.append((next_inits, results))
            gain = err < best[0] * (1 - _policy.ALS_GAIN)
            if err < best[0]:
                best = (err, len(errors) - 1)
            rises = 0 if gain else rises + 1
            if rises >= _policy.ALS_PATIENCE:
                break
        return best

    def warm(inits):
        """``inits`` with a fresh start (None) for the folds whose factors were zero."""
        return None if inits is None or all(x is None for x in inits) else inits

    def smallest_sufficient(at):
        """The fit (index) of the smallest rank found within one standard error of the best fit ``at``.

        The one-standard-error rule (:func:`_within_one_error`) over the rank caps below the best one: the ridge
        lets a cap above the data's rank validate as well as the rank itself (the extra components shrunk, not
        removed; on noisy 2000 x 30 tables of rank 1 to 4, 20 % to 30 % hidden, the best cap was 7 to 21).
        The caps tried start at the eigenvalue-ratio estimate of the best fit's spectrum (:func:`_ratio_rank`),
        then one at a time down while within the rule, or up until within it, at most
        ``_policy.ALS_SMALL_RANK_TRIES`` caps, each validated by its own ridge path (from the best ridge
        down: a smaller cap needs less shrinkage), warm-started from the best fit's top singular triplets.
        Without a ridge, their exact sweeps are mixed (Anderson): below the best rank the plain sweeps contracted
        slowly and stopped at ``_policy.ALS_FINISH_SWEEPS`` short of their limit (a 2000 x 1000 table of rank 5,
        10 % observed: 245 sweeps, 62 % of its time under cProfile; doc/changelog.rst, "The rank rule's sweeps").
        """
        best_res = residuals(fits[at][1])
        levels = [alphas[at] * 0.5 ** k for k in range(len(_policy.ALS_ALPHAS))
                  if alphas[at] * 0.5 ** k >= _policy.ALS_ALPHAS[-1] * top] or [alphas[at]]
        finish = alphas[at] <= 0  # (no ridge was best: the smaller caps without one either, fit as it was)

        def within(r):
            """The index of rank ``r``'s best fit on its path if within the rule of the best fit, else None."""
            inits = []
            for fit in fits[at][1]:
                root = np.sqrt(fit.s[:r])
                inits.append((fit.U[:, :r] * root, fit.Vt[:r].T * root))
            here = path(r, levels, warm(inits), finish=finish, mix=True)
            return here[1] if _within_one_error(residuals(fits[here[1]][1]), best_res) else None

        r = int(np.median([_ratio_rank(fit.s) for fit in fits[at][1]]))
        chosen, step = at, None
        for _ in range(_policy.ALS_SMALL_RANK_TRIES):
            if not 1 <= r < ranks[at]:
                break
            index = within(r)
            if step is None:
                step = -1 if index is not None else 1
            if index is not None:
                chosen = index
            if (index is None) == (step == -1):
                break  # (down: the first cap outside the rule; up: the first within it)
            r += step
        return chosen

    best = path(min(cap, _policy.ALS_TOP_RANK), [c * top for c in _policy.ALS_ALPHAS], None)
    counts = []
    for fit in fits[best[1]][1]:
        s = fit.s
        counts.append(int(np.count_nonzero(s > _policy.ALS_RANK_CUTOFF * s[0])) if s.size and s[0] > 0 else 1)
    r = int(np.median(counts)) if len(counts) > 1 else counts[0]
    tried, misses = {ranks[0]}, 0
    while True:
        if r in tried:  # (one at a time among small ranks, where one component is much of the model)
            r = r - 1 if r <= _policy.ALS_RANK_STEP_BELOW else int(round(r / _policy.ALS_RANK_RATIO))
        if r < 1 or r in tried:
            break
        tried.add(r)
        # (warm start: the best fits' top r singular triplets)
        inits, truncated = [], []
        for fit in fits[best[1]][1]:
            root = np.sqrt(fit.s[:r])
            inits.append((fit.U[:, :r] * root, fit.Vt[:r].T * root))
            truncated.append(CompletionResult(fit.U[:, :r], fit.s[:r], fit.Vt[:r], 0, None, False,
                                              column_offsets=fit.column_offsets))
        start = alphas[best[1]]
        # (not below the first path's smallest ridge: there the gains are the fits' convergence, not the ridge's)
        alphas_all = _policy.ALS_ALPHAS
        levels = [start * 0.5 ** k for k in range(len(alphas_all)) if start * 0.5 ** k >= alphas_all[-1] * top]
        # (watched against the best error: the rank loop keeps this cap only if its path beats it)
        here = path(r, levels or [start], inits, bar=best[0], start=held_out_error(truncated))
        if here[0] >= best[0] * (1 - _policy.ALS_GAIN):
            # (not better by the gain, but within it: a tie, which goes to the smaller cap, fewer noise components)
            best = here if here[0] <= best[0] * (1 + _policy.ALS_GAIN) else best
            misses += 1
            if misses >= _policy.ALS_RANK_PATIENCE:
                break
        else:
            best, misses = here, 0
    # the ridge between the grid's halvings, at the best rank (the error moves by ~1 % per factor sqrt(2) on images)
    at = best[1]
    for factor in _policy.ALS_REFINE:
        best = min(best, path(ranks[at], [alphas[at] * factor], warm(fits[at][0]), bar=best[0], start=errors[at]))
    # no ridge at the best rank when the best ridge is at most the path's smallest (every halving gained, as on a
    # table of exact low rank, whose recovery that ridge's shrinkage alone limited); after the rank loop, whose
    # course it does not change. Fit as the final fit without a ridge is, to convergence by exact sweeps: the
    # early stop of the path's fits also shrinks, and a no-ridge fit validated stopped early chose alpha = 0 on
    # noisy wide tables where the converged fit imputed worse than the ridge
    at = best[1]
    if alphas[at] <= _policy.ALS_ALPHAS[-1] * top:
        best = min(best, path(ranks[at], [0.0], warm(fits[at][0]), bar=best[0], start=errors[at], finish=True))
    # rank 0, the column means, as in auto_rank: kept unless the best fit beats it by more than one standard error
    res_0 = _column_means_residuals(rows, cols, values, splits, n, center)
    res_best = np.concatenate([fit.predict(rows[out], cols[out]) - values[out] * scale
                               for fit, (out, _) in zip(fits[best[1]][1], splits, strict=True)]) / scale
    i = smallest_sufficient(best[1]) + 1 if _beats_column_means(res_0, res_best) else 0
    ranks = np.asarray([0, *ranks])
    alphas = np.asarray([0.0, *alphas]) / scale
    errors = np.asarray([float(np.sqrt(np.mean(res_0**2))), *errors])
    validation = RankValidation(ranks=ranks, errors=errors[:, None], mean_errors=errors, best_rank=int(ranks[i]),
                                alphas=alphas, best_alpha=float(alphas[i]))
    if i == 0 or fits[i - 1][0][0] is None:
        return validation, None
    U, V = fits[i - 1][0][0]
    return validation, (U / np.sqrt(scale), V / np.sqrt(scale))
